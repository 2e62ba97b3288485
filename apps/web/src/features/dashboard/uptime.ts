import type { TFunction } from 'i18next';

export interface UptimeParts {
  days: number;
  hours: number;
  minutes: number;
}

/** Whole days, hours and minutes in a number of seconds (negative counts as 0: clocks may disagree). */
export function uptimeParts(totalSeconds: number): UptimeParts {
  const minutesTotal = Math.floor(Math.max(0, totalSeconds) / 60);
  return { days: Math.floor(minutesTotal / 1440), hours: Math.floor((minutesTotal % 1440) / 60), minutes: minutesTotal % 60 };
}

/**
 * Uptime in the current language, e.g. "2 days 3 hours 5 minutes" / "2 天 3 小时 5 分钟". Leading zero units
 * are left out ("5 minutes", "1 hour 0 minutes"); minutes are always shown.
 */
export function formatUptime(totalSeconds: number, t: TFunction<'dashboard'>): string {
  const { days, hours, minutes } = uptimeParts(totalSeconds);
  const parts: string[] = [];
  if (days > 0) parts.push(t('status.days', { count: days }));
  if (days > 0 || hours > 0) parts.push(t('status.hours', { count: hours }));
  parts.push(t('status.minutes', { count: minutes }));
  return parts.join(' ');
}

/** Seconds since `startTime` (unix seconds, from /api/status) at `nowMs`. */
export const secondsSince = (startTime: number, nowMs: number): number => nowMs / 1000 - startTime;
