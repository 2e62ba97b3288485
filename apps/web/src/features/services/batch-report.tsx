import { useTranslation } from 'react-i18next';
import { cn } from '../../lib/cn';
import type { BatchItem, BatchItemStatus, BatchSummary } from './batch-import';

/** Green for success, yellow for skipped, red for failed (docs/console.md §2.9). */
const dotClass: Record<BatchItemStatus, string> = {
  success: 'bg-emerald-500',
  skipped: 'bg-amber-400',
  failed: 'bg-red-500',
};

/** One line per service: a dot, the name, what happened (also in words for screen readers) and the message. */
export function BatchItemList({ items }: { items: readonly BatchItem[] }) {
  const { t } = useTranslation('services');
  return (
    <ul className="max-h-64 space-y-1.5 overflow-y-auto text-sm" aria-live="polite">
      {items.map((item, index) => (
        <li
          // biome-ignore lint/suspicious/noArrayIndexKey: a name may repeat in one import; the order never changes.
          key={index}
          data-testid="batch-item"
          data-status={item.status}
          data-warning={item.warning ? 'true' : undefined}
          className="flex items-start gap-2"
        >
          <span
            aria-hidden="true"
            className={cn('mt-1.5 size-2 shrink-0 rounded-full', item.warning ? 'bg-amber-500' : dotClass[item.status])}
          />
          <span className="min-w-0">
            <span className="font-medium">{item.name}</span>
            <span className="sr-only"> ({item.warning ? t('batch.itemStatus.warning') : t(`batch.itemStatus.${item.status}`)})</span>
            {item.message && <span className="break-words text-slate-600 dark:text-slate-400"> — {item.message}</span>}
            {item.warnings.map((warning) => (
              <span key={warning} data-testid="batch-item-warning" className="block break-words text-amber-700 dark:text-amber-400">
                ⚠ {warning}
              </span>
            ))}
          </span>
        </li>
      ))}
    </ul>
  );
}

export function BatchReportCounts({ summary }: { summary: BatchSummary }) {
  const { t } = useTranslation('services');
  const counts: { status: BatchItemStatus; value: number }[] = [
    { status: 'success', value: summary.success },
    { status: 'skipped', value: summary.skipped },
    { status: 'failed', value: summary.failed },
  ];
  return (
    <dl className="grid grid-cols-3 gap-2">
      {counts.map(({ status, value }) => (
        <div key={status} className="rounded-md border border-slate-200 p-3 dark:border-slate-800">
          <dt className="flex items-center gap-1.5 text-xs text-slate-600 dark:text-slate-400">
            <span aria-hidden="true" className={cn('size-2 rounded-full', dotClass[status])} />
            {t(`batch.counts.${status}`)}
          </dt>
          <dd className="text-xl font-semibold tabular-nums" data-testid={`batch-count-${status}`}>
            {value}
          </dd>
        </div>
      ))}
    </dl>
  );
}
