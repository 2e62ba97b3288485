import { LOGS_PAGE_SIZE } from '@toolport/contract';
import { useEffect } from 'react';
import { useTranslation } from 'react-i18next';
import { useSearchParams } from 'react-router';
import { PageHeader } from '../../components/page-header';
import { Pager } from '../../components/pager';
import { Card, CardContent } from '../../components/ui/card';
import { ApiError } from '../../lib/api';
import { failureText } from '../../lib/failure';
import { notify } from '../../lib/notify';
import { pageCount, shownRange } from '../../lib/pagination';
import { useErrorToast } from '../../lib/use-error-toast';
import { LogFiltersForm } from './log-filters';
import { hasFilters, type LogFilters, readLogSearch, writeLogSearch } from './log-query';
import { LogsTable, type LogsTableState } from './logs-table';
import { useLogs } from './use-logs';

/**
 * The Logs screen (docs/console.md §2.15), admins only. Filters and page live in the address, so a reload, the
 * back button or a shared link shows the same lines.
 */
export function LogsPage() {
  const { t } = useTranslation('logs');
  const [params, setParams] = useSearchParams();
  const { filters, page } = readLogSearch(params);
  const logs = useLogs(filters, page);
  const data = logs.data;
  const pages = pageCount(data?.total ?? 0, LOGS_PAGE_SIZE);
  const pastTheEnd = data && !logs.isPlaceholderData && data.logs.length === 0 && pages > 0 && page > pages;
  const lastPageSearch = pastTheEnd ? writeLogSearch(filters, pages).toString() : undefined;

  /** Shows `next` filters at `nextPage`; the same search again reloads, since new lines may have arrived. */
  const show = (next: LogFilters, nextPage: number) => {
    const search = writeLogSearch(next, nextPage);
    if (search.toString() === writeLogSearch(filters, page).toString()) void logs.refetch();
    else setParams(search);
  };

  useErrorToast(logs.error, (error) => {
    // A 401 has already sent the user to sign in.
    if (error instanceof ApiError && (error.kind === 'unauthorized' || error.kind === 'aborted')) return;
    notify.error(t('loadFailed'), failureText(error, t));
  });

  // A page past the end (an old link, or fewer lines than before) becomes the last page that has lines.
  useEffect(() => {
    if (lastPageSearch !== undefined) setParams(new URLSearchParams(lastPageSearch), { replace: true });
  }, [lastPageSearch, setParams]);

  let state: LogsTableState;
  if (logs.isError) state = { kind: 'failed', reason: failureText(logs.error, t), onRetry: () => void logs.refetch() };
  else if (!data) state = { kind: 'loading' };
  else state = { kind: 'loaded', rows: data.logs, filtered: hasFilters(filters), refreshing: logs.isFetching };

  const range = data && !logs.isError ? shownRange(data.page, LOGS_PAGE_SIZE, data.logs.length, data.total) : null;

  return (
    <section className="space-y-6">
      <PageHeader title={t('title')} description={t('description')} />
      <Card>
        <CardContent className="pt-5">
          <LogFiltersForm applied={filters} onSearch={(next) => show(next, 1)} />
        </CardContent>
      </Card>
      <Card>
        <CardContent className="space-y-4 pt-3">
          <LogsTable state={state} />
          {range && <Pager page={page} pages={pages} range={range} onPage={(next) => show(filters, next)} />}
        </CardContent>
      </Card>
    </section>
  );
}
