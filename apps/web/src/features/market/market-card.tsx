import { Download, Globe, Star, Trash2, User } from 'lucide-react';
import { useId } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, useLocation } from 'react-router';
import { GitHubMark } from '../../components/icons/brand-icons';
import { StatusOverlay } from '../../components/phase-overlay';
import { Badge } from '../../components/ui/badge';
import { Button } from '../../components/ui/button';
import { Card } from '../../components/ui/card';
import { InstallButton } from './install-button';
import { useMarketActions } from './market-actions';
import { detailsPath, isGithubUrl, isMarketSource, type MarketItem, packagePageUrl } from './market-item';
import { formatCount, sourceLabel } from './market-labels';

const metaClass = 'inline-flex min-w-0 items-center gap-1 [&_svg]:size-3.5 [&_svg]:shrink-0';

/**
 * A count the source did not provide: "—" with the tooltip "unknown" (issue 15, item 9), never a made-up 0.
 * `label` names what is unknown for screen readers ("Stars: unknown").
 */
export function UnknownCount({ label }: { label: string }) {
  const { t } = useTranslation('market');
  return (
    <span title={t('card.unknown')} data-testid="unknown-count">
      <span aria-hidden="true">—</span>
      <span className="sr-only">{`${label}: ${t('card.unknown')}`}</span>
    </span>
  );
}

/** Homepage, stars, weekly downloads and author (or source) of a card (docs/console.md §2.10). */
function CardMeta({ item }: { item: MarketItem }) {
  const { t, i18n } = useTranslation('market');
  const onGithub = isGithubUrl(item.homepage);
  // An installed package does not know its author: nothing is shown rather than the registry's name as one.
  const unknown = item.fromInstalled && isMarketSource(item.source);
  const by = item.author || (unknown ? '' : sourceLabel(item.source, t) || t('card.unknownSource'));
  return (
    <div className="flex flex-wrap items-center gap-x-3 gap-y-1 text-xs text-slate-600 dark:text-slate-400">
      {item.homepage && (
        <a
          href={item.homepage}
          target="_blank"
          rel="noopener noreferrer"
          className={`${metaClass} text-teal-700 hover:underline dark:text-teal-400`}
          data-testid="card-homepage"
        >
          {onGithub ? <GitHubMark /> : <Globe aria-hidden="true" />}
          {t('card.homepage')}
        </a>
      )}
      {onGithub && (
        <span className={metaClass} data-testid="card-stars">
          <Star aria-hidden="true" />
          {item.stars === null ? (
            <UnknownCount label={t('details.stars')} />
          ) : (
            t('card.stars', { count: item.stars, formatted: formatCount(item.stars, i18n.language) })
          )}
        </span>
      )}
      {item.downloads !== undefined && (
        <span className={metaClass} data-testid="card-downloads">
          <Download aria-hidden="true" />
          {item.downloads === null ? (
            <UnknownCount label={t('details.downloads')} />
          ) : (
            t('card.downloads', { count: item.downloads, formatted: formatCount(item.downloads, i18n.language) })
          )}
        </span>
      )}
      {by && (
        <span className={metaClass} data-testid="card-author">
          <User aria-hidden="true" />
          <span className="truncate" data-i18n-data="">
            {by}
          </span>
        </span>
      )}
    </div>
  );
}

/** `@scope/name` splits into the scope and the name: three packages of one scope must be told apart. */
export function splitScope(name: string): { scope: string; base: string } {
  const match = /^(@[^/\s]+)\/(.+)$/.exec(name);
  return match ? { scope: match[1] as string, base: match[2] as string } : { scope: '', base: name };
}

/**
 * A package name on a card: a scope small above the name, and the name wrapping (at hyphens, or
 * anywhere for a long unbroken one) rather than cut, so that `@modelcontextprotocol/server-everything`,
 * `-memory` and `-filesystem` read apart.
 */
function PackageName({ name }: { name: string }) {
  const { scope, base } = splitScope(name);
  return (
    <>
      {scope && (
        <span className="block truncate font-mono text-xs font-normal text-slate-500 dark:text-slate-400" data-testid="card-scope">
          {scope}/
        </span>
      )}
      <span className="block break-words [overflow-wrap:anywhere]" data-testid="card-name">
        {base}
      </span>
    </>
  );
}

/**
 * One package or installed service of the marketplace grid (docs/console.md §2.10): name (a link to its
 * registry page), version, source, description, links and counts; Details, and Install or Uninstall.
 * A spinner covers it while it installs, and a tick for 2 s after an install (green) or uninstall (red).
 */
export function MarketCard({ item }: { item: MarketItem }) {
  const { t } = useTranslation('market');
  const { tasks, uninstalls, ticks } = useMarketActions();
  const location = useLocation();
  const titleId = useId();
  const task = tasks[item.id];
  const tick = ticks[item.id];
  const pageUrl = packagePageUrl(item.source, item.packageName);
  const name = item.name || t('card.unknownName');
  const error = task?.status === 'error' ? task.error : uninstalls[item.id]?.status === 'error' ? uninstalls[item.id]?.error : '';

  return (
    <Card role="group" aria-label={name} data-testid="market-card" className="relative flex min-w-0 flex-col gap-3 p-4">
      <div className="flex items-start justify-between gap-2">
        <h2 id={titleId} className="min-w-0 font-semibold leading-tight" title={name} data-i18n-data="">
          {pageUrl ? (
            <a href={pageUrl} target="_blank" rel="noopener noreferrer" className="hover:underline">
              <PackageName name={name} />
            </a>
          ) : (
            <PackageName name={name} />
          )}
        </h2>
        <div className="flex shrink-0 items-center gap-1.5">
          <Badge className="font-mono" data-testid="card-version">
            {item.version}
          </Badge>
          <Badge tone="info">{sourceLabel(item.source, t) || t('card.unknownSource')}</Badge>
        </div>
      </div>
      <p className="line-clamp-2 min-h-10 text-sm text-slate-600 dark:text-slate-400" data-i18n-data={item.description ? '' : undefined}>
        {item.description || t('card.noDescription')}
      </p>
      <CardMeta item={item} />
      {error && (
        <p role="alert" className="line-clamp-2 text-xs text-red-700 dark:text-red-400">
          {error}
        </p>
      )}
      <div className="mt-auto flex items-center justify-between gap-2 pt-1">
        {item.packageName ? (
          <Button asChild variant="outline" size="sm">
            <Link
              to={detailsPath(item.source, item.packageName)}
              state={{ from: location.search }}
              aria-label={t('card.detailsOf', { name })}
            >
              {t('card.details')}
            </Link>
          </Button>
        ) : (
          <Button variant="outline" size="sm" disabled title={t('card.noDetails')}>
            {t('card.details')}
          </Button>
        )}
        <InstallButton item={item} from="card" icon={<Trash2 aria-hidden="true" />} />
      </div>
      {task?.status === 'installing' && <StatusOverlay icon="spinner" label={t('card.installing')} />}
      {tick && task?.status !== 'installing' && (
        <StatusOverlay
          icon="tick"
          tick={tick === 'installed' ? 'green' : 'red'}
          data-tick={tick}
          label={t(tick === 'installed' ? 'card.installed' : 'card.uninstalled')}
        />
      )}
    </Card>
  );
}
