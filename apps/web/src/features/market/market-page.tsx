import type { MarketSourceName } from '@toolport/contract';
import { Search } from 'lucide-react';
import { type ComponentProps, lazy, type ReactNode, Suspense, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useSearchParams } from 'react-router';
import { PageHeader } from '../../components/page-header';
import { ErrorAlert } from '../../components/ui/alert';
import { Button } from '../../components/ui/button';
import { Input } from '../../components/ui/input';
import { Spinner } from '../../components/ui/spinner';
import { Tabs, TabsContent, TabsList, TabsTrigger } from '../../components/ui/tabs';
import { type ApiWarning, messageOf } from '../../lib/api';
import { useInstalledServices } from '../../lib/installed-services';
import { useErrorToast } from '../../lib/use-error-toast';
import { useInstallPolling } from '../installs';
import { gridClass, loadCustomInstallDialog } from '../services';
import { MarketCard } from './market-card';
import { DEFAULT_MARKET_TAB, fromInstalledService, type MarketItem, type MarketTab, marketTabs } from './market-item';
import { useMarketSearch } from './use-market-queries';

const tabOf = (value: string | null): MarketTab => marketTabs.find((tab) => tab === value) ?? DEFAULT_MARKET_TAB;

function EmptyState({ hint }: { hint?: string }) {
  const { t } = useTranslation('market');
  return (
    <div className="rounded-lg border border-dashed border-slate-300 py-12 text-center dark:border-slate-700">
      {/* Before any search there is nothing to be found yet: only the hint (issue 15, item 3). */}
      {hint ? (
        <p className="text-slate-600 dark:text-slate-300">{hint}</p>
      ) : (
        <p className="text-slate-600 dark:text-slate-300">{t('empty')}</p>
      )}
    </div>
  );
}

const CustomInstallDialog = lazy(loadCustomInstallDialog);

/** Custom Install for a package the user knows, its dialog loaded on the first click. */
function CustomInstallButton({ size, variant }: Pick<ComponentProps<typeof Button>, 'size' | 'variant'>) {
  const { t } = useTranslation('market');
  const [open, setOpen] = useState(false);
  const [mounted, setMounted] = useState(false);
  const startPolling = useInstallPolling();
  return (
    <>
      <Button
        size={size}
        variant={variant}
        onClick={() => {
          setMounted(true);
          setOpen(true);
        }}
      >
        {t('searchFailed.customInstall')}
      </Button>
      {mounted && (
        <Suspense fallback={null}>
          <CustomInstallDialog open={open} onOpenChange={setOpen} onInstallStarted={startPolling} />
        </Suspense>
      )}
    </>
  );
}

/**
 * A search that failed is not an empty result (issue 15, item 3): the server's message names the source, the
 * reason and the setting that points at it; a package the user knows can still be added by hand.
 */
function SearchFailed({ error, onRetry }: { error: unknown; onRetry(): void }) {
  const { t } = useTranslation('market');
  return (
    <div className="space-y-3" data-testid="search-failed">
      <ErrorAlert title={t('searchFailed.title')}>
        <p>{messageOf(error, t('searchFailed.unknown'))}</p>
        <p className="mt-1">{t('searchFailed.advice')}</p>
      </ErrorAlert>
      <div className="flex flex-wrap gap-2">
        <Button variant="outline" onClick={onRetry}>
          {t('searchFailed.retry')}
        </Button>
        <CustomInstallButton />
      </div>
    </div>
  );
}

/**
 * Results that may be incomplete (issue 15, item 3): above them, which registry did not answer, why, and the
 * setting that points at it, as the server words it; Custom Install for a package the user knows.
 */
function SearchWarnings({ warnings }: { warnings: ApiWarning[] }) {
  const { t } = useTranslation('market');
  return (
    <div
      role="status"
      data-testid="search-warnings"
      className="space-y-2 rounded-md border border-amber-300 bg-amber-50 p-3 text-sm text-amber-900 dark:border-amber-700 dark:bg-amber-950 dark:text-amber-100"
    >
      <p className="font-semibold">{t('searchWarnings.title')}</p>
      <ul className="list-disc space-y-1 pl-5">
        {warnings.map((w) => (
          <li key={`${w.source ?? ''}:${w.message}`} data-i18n-data="">
            {w.message}
          </li>
        ))}
      </ul>
      <div className="flex flex-wrap items-center gap-2">
        <span>{t('searchWarnings.advice')}</span>
        <CustomInstallButton size="sm" variant="outline" />
      </div>
    </div>
  );
}

function Searching({ label }: { label: string }) {
  return (
    <p role="status" className="flex items-center justify-center gap-2 py-12 text-slate-600 dark:text-slate-400">
      <Spinner className="size-5" />
      {label}
    </p>
  );
}

/** The search box: Enter or the button runs the search (docs/console.md §2.10). */
function SearchForm({ source, query, onSearch }: { source: MarketSourceName; query: string; onSearch(term: string): void }) {
  const { t } = useTranslation('market');
  const [draft, setDraft] = useState(query);
  return (
    <form
      className="flex gap-2"
      onSubmit={(e) => {
        e.preventDefault();
        onSearch(draft.trim());
      }}
    >
      <Input
        type="search"
        value={draft}
        aria-label={t('search.label')}
        placeholder={t('search.placeholder', { source: t(`sources.${source}`) })}
        onChange={(e) => setDraft(e.target.value)}
        className="max-w-md"
      />
      <Button type="submit">
        <Search aria-hidden="true" />
        {t('search.button')}
      </Button>
    </form>
  );
}

/**
 * The marketplace (docs/console.md §2.10): tabs per package source (npm first) and the installed services,
 * a search, and a grid of cards (1, 2 or 3 columns by width). The tab and term live in the address, so
 * coming back from a package's details shows the same results.
 */
export function MarketPage() {
  const { t } = useTranslation('market');
  const [params, setParams] = useSearchParams();
  const tab = tabOf(params.get('source'));
  const query = params.get('q') ?? '';
  const source = tab === 'installed' ? null : tab;
  const search = useMarketSearch(source, query);
  const installed = useInstalledServices();
  useErrorToast(installed.error, (error) => console.warn('marketplace installed list failed', error));

  const show = (next: MarketTab, term: string) => setParams(term ? { source: next, q: term } : { source: next });
  const runSearch = (term: string) => {
    if (term === query.trim() && term) void search.refetch();
    else show(tab, term);
  };

  let content: ReactNode;
  if (tab === 'installed') {
    const items: MarketItem[] = (installed.data ?? []).map(fromInstalledService);
    if (installed.isPending) content = <Searching label={t('loadingInstalled')} />;
    else content = items.length === 0 ? <EmptyState /> : <Grid items={items} />;
  } else if (search.isFetching) {
    content = <Searching label={t('search.searching')} />;
  } else if (search.isError) {
    content = <SearchFailed error={search.error} onRetry={() => void search.refetch()} />;
  } else {
    const items = search.data ?? [];
    const warnings = search.data?.warnings ?? [];
    content = (
      <>
        {warnings.length > 0 && <SearchWarnings warnings={warnings} />}
        {items.length === 0 ? <EmptyState hint={query.trim() ? undefined : t('search.hint')} /> : <Grid items={items} />}
      </>
    );
  }

  return (
    <section className="space-y-6">
      <PageHeader title={t('title')} description={t('description')} />
      <Tabs value={tab} onValueChange={(value) => show(value as MarketTab, query)}>
        <TabsList aria-label={t('tabs.label')}>
          {marketTabs.map((value) => (
            <TabsTrigger key={value} value={value}>
              {t(`tabs.${value}`)}
            </TabsTrigger>
          ))}
        </TabsList>
        <TabsContent value={tab} className="mt-4 space-y-4">
          {source && <SearchForm key={`${source}:${query}`} source={source} query={query} onSearch={runSearch} />}
          {content}
        </TabsContent>
      </Tabs>
    </section>
  );
}

function Grid({ items }: { items: MarketItem[] }) {
  return (
    <div className={gridClass} data-testid="market-grid">
      {items.map((item) => (
        <MarketCard key={item.id} item={item} />
      ))}
    </div>
  );
}
