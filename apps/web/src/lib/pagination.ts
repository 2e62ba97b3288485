/** Page arithmetic of the paged lists (Logs, Audit; docs/console.md §2.15, §9): 1-based pages, at most five page buttons. */

export const PAGE_WINDOW = 5;

/** How many pages `total` rows fill; none when there are no rows. */
export function pageCount(total: number, pageSize: number): number {
  if (!Number.isFinite(total) || total <= 0 || pageSize <= 0) return 0;
  return Math.ceil(total / pageSize);
}

/**
 * The page numbers to offer as buttons: up to `size` consecutive pages with the current one in the middle
 * where possible, shifted to stay inside 1..pages at either end. A current page outside that range (a stale
 * address, a shrunken result) counts as the nearest end.
 */
export function pageWindow(current: number, pages: number, size = PAGE_WINDOW): number[] {
  if (pages <= 0 || size <= 0) return [];
  const page = Math.min(Math.max(Number.isFinite(current) ? Math.trunc(current) : 1, 1), pages);
  const length = Math.min(size, pages);
  const first = Math.min(Math.max(page - Math.floor((length - 1) / 2), 1), pages - length + 1);
  return Array.from({ length }, (_, i) => first + i);
}

export interface ShownRange {
  start: number;
  end: number;
  total: number;
}

/**
 * 'Showing start to end of total' for the rows of `page`: `null` when the page shows no rows. The count and
 * the rows are read one after the other while lines keep arriving, so the total never reads below the end.
 */
export function shownRange(page: number, pageSize: number, rowsOnPage: number, total: number): ShownRange | null {
  if (rowsOnPage <= 0) return null;
  const start = (Math.max(page, 1) - 1) * pageSize + 1;
  const end = start + rowsOnPage - 1;
  return { start, end, total: Math.max(total, end) };
}
