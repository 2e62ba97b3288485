/** Usage bar thresholds (docs/console.md §9): yellow from 80 % of the daily limit, red at 100 %. */
export const USAGE_WARNING_RATIO = 0.8;

export type UsageTone = 'green' | 'yellow' | 'red';

/** Colour of the daily usage bar: red at or over the limit, yellow at 80 % or more, green otherwise. */
export function usageTone(count: number, limit: number): UsageTone {
  if (limit <= 0) return 'green';
  if (count >= limit) return 'red';
  if (count >= limit * USAGE_WARNING_RATIO) return 'yellow';
  return 'green';
}

/** How much of the bar is filled, 0-100. */
export const usagePercent = (count: number, limit: number): number => (limit > 0 ? Math.min(100, (count / limit) * 100) : 0);

/** The bar shows only when a limit is set (0 or empty means unlimited). */
export const hasDailyLimit = (limit: number | null | undefined): limit is number => typeof limit === 'number' && limit > 0;

/** 'requests remaining' is shown when the server counted them (-1 means unlimited). */
export const showsRemaining = (remaining: number | null | undefined): remaining is number =>
  typeof remaining === 'number' && remaining >= 0;

/**
 * The daily limit field (docs/console.md §5): a whole number, at least 0; anything not a number becomes 0,
 * which means unlimited.
 */
export function parseDailyLimit(raw: string): number {
  const n = Number.parseInt(raw.trim(), 10);
  return Number.isFinite(n) && n > 0 ? n : 0;
}

/**
 * Remaining requests after a limit change, computed locally (docs/console.md §5): the limit minus today's
 * count (never below 0, as the server counts it) when a limit is set, else -1 (unlimited).
 */
export const remainingAfter = (limit: number, todayCount: number): number => (limit > 0 ? Math.max(0, limit - todayCount) : -1);
