import type { LogEntry } from '@toolport/contract';
import { RotateCw, ScrollText } from 'lucide-react';
import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '../../components/ui/button';
import { Skeleton } from '../../components/ui/skeleton';
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from '../../components/ui/table';
import { cn } from '../../lib/cn';
import { LevelBadge, PhaseBadge } from './log-badges';
import { formatLogTime } from './log-time';

const COLUMNS = 5;
const SKELETON_ROWS = 6;

/**
 * Where the table gets less than 48rem (a phone, or a tablet beside the sidebar) a row stops being a table row
 * and stacks: time and badges on one line, then the service, then the message across the whole width, so the
 * message reads without scrolling sideways.
 */
const stackedRow = '@max-3xl:flex @max-3xl:flex-wrap @max-3xl:items-center @max-3xl:gap-x-2 @max-3xl:gap-y-1.5 @max-3xl:py-3';
const column = {
  time: 'whitespace-nowrap font-mono text-xs tabular-nums @max-3xl:order-1 @max-3xl:p-0',
  service: 'max-w-48 @max-3xl:order-4 @max-3xl:max-w-none @max-3xl:basis-full @max-3xl:p-0',
  phase: 'whitespace-nowrap @max-3xl:order-2 @max-3xl:p-0',
  level: 'whitespace-nowrap @max-3xl:order-3 @max-3xl:p-0',
  message: 'min-w-64 @max-3xl:order-5 @max-3xl:min-w-0 @max-3xl:basis-full @max-3xl:p-0',
};
const skeletonWidths: [keyof typeof column, number][] = [
  ['time', 36],
  ['service', 28],
  ['phase', 16],
  ['level', 16],
  ['message', 72],
];

export type LogsTableState =
  | { kind: 'loading' }
  | { kind: 'failed'; reason: string; onRetry(): void }
  | { kind: 'loaded'; rows: LogEntry[]; filtered: boolean; refreshing: boolean };

function LoadingRows() {
  return Array.from({ length: SKELETON_ROWS }, (_, i) => (
    // biome-ignore lint/suspicious/noArrayIndexKey: placeholder rows have nothing else to tell them apart.
    <TableRow key={i} data-testid="log-skeleton" className={stackedRow}>
      {skeletonWidths.map(([name, width]) => (
        <TableCell key={name} className={column[name]}>
          <Skeleton className="h-5 max-w-full" style={{ width: `${width * 0.25}rem` }} />
        </TableCell>
      ))}
    </TableRow>
  ));
}

/** One cell across the table for a message in place of rows. */
function Notice({ children }: { children: ReactNode }) {
  return (
    <TableRow>
      <TableCell colSpan={COLUMNS} className="py-12 text-center text-slate-600 dark:text-slate-400">
        {children}
      </TableCell>
    </TableRow>
  );
}

function ServiceCell({ entry }: { entry: LogEntry }) {
  const { t } = useTranslation('logs');
  // Lines about no one service (the gateway's own notes) have no id and no name.
  if (entry.service_id === null && !entry.service_name) return <span className="text-slate-500 dark:text-slate-400">{t('gateway')}</span>;
  return (
    <div className="min-w-0 @max-3xl:flex @max-3xl:items-baseline @max-3xl:gap-2">
      <div className="truncate font-medium" data-i18n-data>
        {entry.service_name || t('gateway')}
      </div>
      {entry.service_id !== null && (
        <div className="font-mono text-xs text-slate-500 dark:text-slate-400" data-testid="log-service-id">
          #{entry.service_id}
        </div>
      )}
    </div>
  );
}

/** The log lines of one page (docs/console.md §2.15): timestamp, service name and id, phase, level, message. */
export function LogsTable({ state }: { state: LogsTableState }) {
  const { t } = useTranslation('logs');
  const loaded = state.kind === 'loaded' ? state : undefined;

  return (
    <div className="@container">
      <Table
        aria-busy={state.kind === 'loading' || loaded?.refreshing}
        className={cn('@max-3xl:block', loaded?.refreshing && 'opacity-60')}
      >
        <TableHeader className="@max-3xl:sr-only">
          <TableRow>
            <TableHead>{t('columns.time')}</TableHead>
            <TableHead>{t('columns.service')}</TableHead>
            <TableHead>{t('columns.phase')}</TableHead>
            <TableHead>{t('columns.level')}</TableHead>
            <TableHead>{t('columns.message')}</TableHead>
          </TableRow>
        </TableHeader>
        <TableBody className="@max-3xl:block">
          {state.kind === 'loading' && <LoadingRows />}
          {state.kind === 'failed' && (
            <Notice>
              <p className="font-medium text-red-700 dark:text-red-400">{t('loadFailed')}</p>
              <p className="mt-1 text-sm">{state.reason}</p>
              <Button variant="outline" size="sm" className="mt-3" onClick={state.onRetry}>
                <RotateCw aria-hidden="true" />
                {t('retry')}
              </Button>
            </Notice>
          )}
          {loaded?.rows.length === 0 && (
            <Notice>
              <ScrollText aria-hidden="true" className="mx-auto mb-2 size-8 text-slate-400" />
              <p className="font-medium text-slate-900 dark:text-slate-100">{t('empty.title')}</p>
              <p className="mt-1 text-sm">{loaded.filtered ? t('empty.filtered') : t('empty.none')}</p>
            </Notice>
          )}
          {loaded?.rows.map((entry) => (
            <TableRow key={entry.id} data-testid="log-row" className={cn('*:align-top', stackedRow)}>
              <TableCell className={column.time}>
                <time dateTime={new Date(entry.created_at).toISOString()}>{formatLogTime(entry.created_at)}</time>
              </TableCell>
              <TableCell className={column.service}>
                <ServiceCell entry={entry} />
              </TableCell>
              <TableCell className={column.phase}>
                <PhaseBadge phase={entry.phase} />
              </TableCell>
              <TableCell className={column.level}>
                <LevelBadge level={entry.level} />
              </TableCell>
              <TableCell className={column.message}>
                {/* A message is what a service wrote, not interface text: long lines wrap anywhere, spacing stays. */}
                <p className="whitespace-pre-wrap font-mono text-xs [overflow-wrap:anywhere]" data-testid="log-message">
                  {entry.message}
                </p>
              </TableCell>
            </TableRow>
          ))}
        </TableBody>
      </Table>
    </div>
  );
}
