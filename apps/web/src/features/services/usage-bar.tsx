import { useTranslation } from 'react-i18next';
import { cn } from '../../lib/cn';
import { showsRemaining, type UsageTone, usagePercent, usageTone } from './usage';

const toneClass: Record<UsageTone, string> = {
  green: 'bg-emerald-500',
  yellow: 'bg-amber-400',
  red: 'bg-red-500',
};

/**
 * Today's requests against the daily limit (docs/console.md §2.5): count / limit, red at or over the limit,
 * yellow from 80 %, green below; the remaining count when the server gives one.
 */
export function UsageBar({ count, limit, remaining }: { count: number; limit: number; remaining: number }) {
  const { t, i18n } = useTranslation('services');
  const number = new Intl.NumberFormat(i18n.language);
  const tone = usageTone(count, limit);
  return (
    <div className="space-y-1" data-testid="usage-bar">
      <div className="flex items-center justify-between gap-2 text-xs text-slate-600 dark:text-slate-400">
        <span>{t('usage.label')}</span>
        <span className="tabular-nums" data-testid="usage-count">
          {t('usage.count', { count: number.format(count), limit: number.format(limit) })}
        </span>
      </div>
      <div
        role="progressbar"
        aria-label={t('usage.label')}
        aria-valuemin={0}
        aria-valuemax={limit}
        aria-valuenow={Math.min(count, limit)}
        aria-valuetext={t('usage.count', { count, limit })}
        className="h-2 overflow-hidden rounded-full bg-slate-200 dark:bg-slate-800"
      >
        <div
          data-tone={tone}
          className={cn('h-full rounded-full transition-[width]', toneClass[tone])}
          style={{ width: `${usagePercent(count, limit)}%` }}
        />
      </div>
      {showsRemaining(remaining) && (
        <p className="text-xs text-slate-600 dark:text-slate-400" data-testid="usage-remaining">
          {t('usage.remaining', { count: remaining })}
        </p>
      )}
    </div>
  );
}
