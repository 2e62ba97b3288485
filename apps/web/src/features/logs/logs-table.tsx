import type { LogEntry } from '@toolport/contract';
import { ScrollText } from 'lucide-react';
import { useTranslation } from 'react-i18next';
import { type PagedColumn, PagedTable, type PagedTableState } from '../../components/paged-table';
import { TableCell } from '../../components/ui/table';
import { formatLogTime } from '../../lib/log-time';
import { LevelBadge, PhaseBadge } from './log-badges';

/** Below 48rem a row stacks: time and badges on one line, then the service, then the message across the width. */
const column = {
  time: 'whitespace-nowrap font-mono text-xs tabular-nums @max-3xl:order-1 @max-3xl:p-0',
  service: 'max-w-48 @max-3xl:order-4 @max-3xl:max-w-none @max-3xl:basis-full @max-3xl:p-0',
  phase: 'whitespace-nowrap @max-3xl:order-2 @max-3xl:p-0',
  level: 'whitespace-nowrap @max-3xl:order-3 @max-3xl:p-0',
  message: 'min-w-64 @max-3xl:order-5 @max-3xl:min-w-0 @max-3xl:basis-full @max-3xl:p-0',
};
/** Each column's placeholder width while loading, in rem. */
const skeletonRem: Record<keyof typeof column, number> = { time: 9, service: 7, phase: 4, level: 4, message: 18 };

export type LogsTableState = PagedTableState<LogEntry>;

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
  const columns: PagedColumn[] = (Object.keys(column) as (keyof typeof column)[]).map((key) => ({
    key,
    header: t(`columns.${key}`),
    className: column[key],
    skeletonRem: skeletonRem[key],
  }));
  return (
    <PagedTable
      state={state}
      ns="logs"
      columns={columns}
      emptyIcon={ScrollText}
      testId="log"
      rowKey={(entry) => entry.id}
      cells={(entry) => (
        <>
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
        </>
      )}
    />
  );
}
