import { dayIn } from '../../infra/day.js';

/** `YYYY-MM-DD` that names a real calendar date. */
export function isDay(value: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!m) return false;
  const at = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return at.toISOString().slice(0, 10) === value;
}

/** The day `n` days after `day` (before, when negative); calendar arithmetic, no time zone involved. */
export function addDays(day: string, n: number): string {
  const [y, m, d] = day.split('-').map(Number) as [number, number, number];
  return new Date(Date.UTC(y, m - 1, d + n)).toISOString().slice(0, 10);
}

/** Whole days from `from` to `to` (0 when equal). */
export function daysBetween(from: string, to: string): number {
  const at = (day: string) => {
    const [y, m, d] = day.split('-').map(Number) as [number, number, number];
    return Date.UTC(y, m - 1, d);
  };
  return Math.round((at(to) - at(from)) / 86_400_000);
}

const starts = new Map<string, number>();
const MAX_CACHED = 20_000;

/**
 * The first millisecond of `day` in an IANA time zone: the earliest instant `dayIn` names `day` (or a
 * later day, for a date the zone skipped). Any UTC offset lies within -12 h..+14 h, so the answer lies
 * within 15 h either side of that date's UTC midnight; a binary search over that span is exact across
 * daylight-saving changes and zones whose day does not start at midnight. Cached: it never changes.
 */
export function dayStart(timeZone: string, day: string): number {
  const key = `${timeZone}|${day}`;
  const cached = starts.get(key);
  if (cached !== undefined) return cached;
  const [y, m, d] = day.split('-').map(Number) as [number, number, number];
  const midnight = Date.UTC(y, m - 1, d);
  // Invariant: the day at `lo` is before `day`, the day at `hi` is not.
  let lo = midnight - 15 * 3_600_000;
  let hi = midnight + 15 * 3_600_000;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (dayIn(timeZone, mid) >= day) hi = mid;
    else lo = mid;
  }
  if (starts.size >= MAX_CACHED) starts.clear();
  starts.set(key, hi);
  return hi;
}

/** The first millisecond after `day` in the time zone. */
export const dayEnd = (timeZone: string, day: string): number => dayStart(timeZone, addDays(day, 1));
