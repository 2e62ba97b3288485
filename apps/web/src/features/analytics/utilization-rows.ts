import type { ServiceUtilization } from '@toolport/contract';

export type SortDirection = 'desc' | 'asc';

/** Analytics sort (docs/console.md §4): starts descending, each header click flips it. */
export const DEFAULT_SORT: SortDirection = 'desc';
export const toggleSort = (direction: SortDirection): SortDirection => (direction === 'desc' ? 'asc' : 'desc');

/** The rows the table shows: enabled services only, by today's request count (ties by name, so the order is stable). */
export function visibleRows(rows: readonly ServiceUtilization[], direction: SortDirection): ServiceUtilization[] {
  const sign = direction === 'desc' ? -1 : 1;
  return rows
    .filter((row) => row.enabled)
    .sort((a, b) => sign * (a.today_request_count - b.today_request_count) || a.service_name.localeCompare(b.service_name));
}

/** Today's average latency with 2 decimals; a service without requests shows 0.00. */
export function formatLatency(ms: number | null | undefined): string {
  return (typeof ms === 'number' && Number.isFinite(ms) ? ms : 0).toFixed(2);
}
