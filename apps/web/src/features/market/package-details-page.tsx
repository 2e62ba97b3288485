import type { MarketSourceName } from '@toolport/contract';
import { ArrowLeft, Download, PackageSearch, RotateCw, Star, Trash2, User } from 'lucide-react';
import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, useLocation, useParams } from 'react-router';
import { ErrorAlert } from '../../components/ui/alert';
import { Badge } from '../../components/ui/badge';
import { Button } from '../../components/ui/button';
import { Card, CardContent, CardHeader, CardTitle } from '../../components/ui/card';
import { Spinner } from '../../components/ui/spinner';
import { ApiError, messageOf } from '../../lib/api';
import { notify } from '../../lib/notify';
import { useDocumentTitle } from '../../lib/use-document-title';
import { InstallButton } from './install-button';
import { UnknownCount } from './market-card';
import { isMarketSource, type MarketItem, packagePageUrl } from './market-item';
import { formatCount, sourceLabel } from './market-labels';
import { ReadmeMarkdown } from './readme-markdown';
import { usePackageDetails } from './use-market-queries';

/** Back to the list, with the tab and term the user came from (kept in the link's state by the card). */
function BackButton({ source }: { source?: string }) {
  const { t } = useTranslation('market');
  const from = (useLocation().state as { from?: unknown } | null)?.from;
  const search = typeof from === 'string' && from.startsWith('?') ? from : source ? `?source=${encodeURIComponent(source)}` : '';
  return (
    <Button asChild variant="ghost" size="sm" className="-ml-2">
      <Link to={`/market${search}`}>
        <ArrowLeft aria-hidden="true" />
        {t('details.back')}
      </Link>
    </Button>
  );
}

/** Nothing selected, or nothing found under this name (docs/console.md §2.10). */
function NotFound({ source }: { source?: string }) {
  const { t } = useTranslation('market');
  useDocumentTitle(t('details.notFoundTitle'));
  return (
    <section className="mx-auto max-w-lg space-y-3 py-12 text-center" data-testid="details-not-found">
      <PackageSearch aria-hidden="true" className="mx-auto size-10 text-slate-400" />
      <h1 className="text-xl font-semibold">{t('details.notFoundTitle')}</h1>
      <p className="text-slate-600 dark:text-slate-400">{t('details.notFoundDescription')}</p>
      <BackButton source={source} />
    </section>
  );
}

function Stat({ icon, label, children }: { icon: ReactNode; label: string; children: ReactNode }) {
  return (
    <div className="flex min-w-0 items-center gap-2 [&_svg]:size-4 [&_svg]:shrink-0 [&_svg]:text-slate-500 dark:text-slate-400">
      {icon}
      <dt className="sr-only">{label}</dt>
      <dd className="min-w-0 truncate">{children}</dd>
    </div>
  );
}

function DetailsView({ item, reload }: { item: MarketItem; reload(): void }) {
  const { t, i18n } = useTranslation('market');
  const pageUrl = packagePageUrl(item.source, item.packageName);
  const name = item.name || t('card.unknownName');
  useDocumentTitle(name);
  const onFinished = () => {
    notify.success(t('toasts.installSuccessful'), t('toasts.installSuccessfulDescription', { name }));
    reload();
  };
  return (
    <article className="space-y-6">
      <BackButton source={item.source} />
      <header className="flex flex-wrap items-start justify-between gap-4">
        <div className="min-w-0 space-y-2">
          <div className="flex flex-wrap items-center gap-2">
            <h1 className="min-w-0 text-2xl font-semibold tracking-tight break-all" data-i18n-data="">
              {pageUrl ? (
                <a href={pageUrl} target="_blank" rel="noopener noreferrer" className="hover:underline">
                  {name}
                </a>
              ) : (
                name
              )}
            </h1>
            <Badge className="font-mono">{item.version}</Badge>
            <Badge tone="info">{sourceLabel(item.source, t)}</Badge>
          </div>
          <p className="text-slate-600 dark:text-slate-400" data-i18n-data={item.description ? '' : undefined}>
            {item.description || t('card.noDescription')}
          </p>
        </div>
        <InstallButton
          item={item}
          from="detail"
          icon={<Trash2 aria-hidden="true" />}
          installOptions={{ checkVars: true, onFinished }}
          onUninstalled={reload}
        />
      </header>
      <dl className="grid gap-3 text-sm sm:grid-cols-2 lg:grid-cols-4" data-testid="details-stats">
        <Stat icon={<Star aria-hidden="true" />} label={t('details.stars')}>
          {item.stars === null ? (
            <UnknownCount label={t('details.stars')} />
          ) : (
            t('card.stars', { count: item.stars, formatted: formatCount(item.stars, i18n.language) })
          )}
        </Stat>
        <Stat icon={<Download aria-hidden="true" />} label={t('details.downloads')}>
          {item.downloads === null || item.downloads === undefined ? (
            <UnknownCount label={t('details.downloads')} />
          ) : (
            t('card.downloads', { count: item.downloads, formatted: formatCount(item.downloads, i18n.language) })
          )}
        </Stat>
        <Stat icon={<User aria-hidden="true" />} label={t('details.author')}>
          <span data-i18n-data={item.author ? '' : undefined}>{item.author || t('details.unknownAuthor')}</span>
        </Stat>
        <Stat icon={<PackageSearch aria-hidden="true" />} label={t('details.source')}>
          {sourceLabel(item.source, t)}
        </Stat>
      </dl>
      <Card>
        <CardHeader>
          <CardTitle>{t('details.readme')}</CardTitle>
        </CardHeader>
        <CardContent>
          {item.readme.trim() ? (
            <ReadmeMarkdown markdown={item.readme} />
          ) : (
            <p className="text-sm text-slate-600 dark:text-slate-400">{t('details.noReadme')}</p>
          )}
        </CardContent>
      </Card>
    </article>
  );
}

/** One package's details; mounted per package, so its state starts over when another one is selected. */
function PackageDetails({ source, name }: { source: MarketSourceName; name: string }) {
  const { t } = useTranslation('market');
  const details = usePackageDetails(source, name);

  if (details.isPending) {
    return (
      <p role="status" className="flex items-center justify-center gap-2 py-16 text-slate-600 dark:text-slate-400">
        <Spinner className="size-5" />
        {t('details.loading')}
      </p>
    );
  }
  if (details.isError) {
    if (details.error instanceof ApiError && details.error.kind === 'notFound') return <NotFound source={source} />;
    return (
      <section className="space-y-4">
        <BackButton source={source} />
        <ErrorAlert title={t('details.loadFailedTitle')}>
          <p>{messageOf(details.error, t('details.loadFailed'))}</p>
          <Button variant="outline" size="sm" className="mt-3" onClick={() => void details.refetch()}>
            <RotateCw aria-hidden="true" />
            {t('details.retry')}
          </Button>
        </ErrorAlert>
      </section>
    );
  }
  return <DetailsView item={details.data} reload={() => void details.refetch()} />;
}

/** The detail view at /market/{source}/{package name} (docs/console.md §2.10). */
export function PackageDetailsPage() {
  const params = useParams();
  const source = params.source;
  const name = params['*'] ?? '';
  if (!isMarketSource(source) || !name) return <NotFound source={isMarketSource(source) ? source : undefined} />;
  return <PackageDetails key={`${source}/${name}`} source={source} name={name} />;
}
