import type { ServiceUtilization } from '@toolport/contract';
import { ArrowDown, ArrowUp } from 'lucide-react';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Badge } from '../../components/ui/badge';
import { Skeleton } from '../../components/ui/skeleton';
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from '../../components/ui/table';
import { DEFAULT_SORT, formatLatency, type SortDirection, toggleSort, visibleRows } from './utilization-rows';

const SKELETON_ROWS = 3;

function RequestsHeader({ direction, onToggle }: { direction: SortDirection; onToggle(): void }) {
  const { t } = useTranslation('analytics');
  const Arrow = direction === 'desc' ? ArrowDown : ArrowUp;
  return (
    <TableHead aria-sort={direction === 'desc' ? 'descending' : 'ascending'} className="text-right" keepWhenStacked>
      <button
        type="button"
        onClick={onToggle}
        className="inline-flex items-center gap-1 rounded-sm hover:text-slate-900 focus-visible:outline-2 focus-visible:outline-teal-600 dark:hover:text-slate-100"
      >
        {t('columns.requests')}
        <Arrow aria-hidden="true" className="size-3.5" />
        <span className="sr-only">{direction === 'desc' ? t('sort.descending') : t('sort.ascending')}</span>
      </button>
    </TableHead>
  );
}

function LoadingRows() {
  return Array.from({ length: SKELETON_ROWS }, (_, i) => (
    // biome-ignore lint/suspicious/noArrayIndexKey: placeholder rows have nothing else to tell them apart.
    <TableRow key={i}>
      {[40, 16, 12, 12].map((width) => (
        <TableCell key={width}>
          <Skeleton className="h-5" style={{ width: `${width * 0.25}rem` }} />
        </TableCell>
      ))}
    </TableRow>
  ));
}

/** Enabled services with today's requests (sortable) and average latency (docs/console.md §2.11). */
export function UtilizationTable({ rows }: { rows: ServiceUtilization[] | undefined }) {
  const { t, i18n } = useTranslation('analytics');
  const [direction, setDirection] = useState<SortDirection>(DEFAULT_SORT);
  const number = new Intl.NumberFormat(i18n.language);
  const shown = rows && visibleRows(rows, direction);

  return (
    // On a phone each service is a card; the sort button stays above them.
    <Table stackBelow="lg">
      <TableHeader>
        <TableRow>
          <TableHead>{t('columns.name')}</TableHead>
          <TableHead>{t('columns.status')}</TableHead>
          <RequestsHeader direction={direction} onToggle={() => setDirection(toggleSort)} />
          <TableHead className="text-right">{t('columns.latency')}</TableHead>
        </TableRow>
      </TableHeader>
      <TableBody>
        {!shown && <LoadingRows />}
        {shown?.length === 0 && (
          <TableRow>
            <TableCell colSpan={4} className="py-10 text-center text-slate-600 dark:text-slate-400">
              {t('empty')}
            </TableCell>
          </TableRow>
        )}
        {shown?.map((row) => (
          <TableRow key={row.service_id} data-testid="utilization-row">
            {/* Service names are data, not interface text: the zh-CN page check leaves them alone. */}
            <TableCell data-i18n-data label={t('columns.name')}>
              <div className="font-medium">{row.display_name || row.service_name}</div>
              {row.display_name && row.display_name !== row.service_name && (
                <div className="font-mono text-xs text-slate-500 dark:text-slate-400">{row.service_name}</div>
              )}
            </TableCell>
            <TableCell label={t('columns.status')}>
              <Badge tone="success">{t('enabled')}</Badge>
            </TableCell>
            <TableCell className="text-right tabular-nums" data-testid="request-count" label={t('columns.requests')}>
              {number.format(row.today_request_count)}
            </TableCell>
            <TableCell className="text-right tabular-nums" label={t('columns.latency')}>
              {formatLatency(row.today_avg_latency_ms)}
            </TableCell>
          </TableRow>
        ))}
      </TableBody>
    </Table>
  );
}
