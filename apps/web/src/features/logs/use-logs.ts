import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { routes } from '@toolport/contract';
import { call } from '../../lib/api';
import { type LogFilters, logsApiQuery, normalise } from './log-query';

/**
 * GET /api/mcp_logs for one page of the filtered log. Quiet, because the page shows its own load-error
 * toast; the previous page stays on screen while the next one loads, so paging does not flash.
 */
export function useLogs(filters: LogFilters, page: number) {
  const applied = normalise(filters);
  return useQuery({
    queryKey: ['logs', applied, page],
    queryFn: ({ signal }) => call(routes.logs.list, { signal, notify: false, query: logsApiQuery(applied, page) }),
    placeholderData: keepPreviousData,
  });
}
