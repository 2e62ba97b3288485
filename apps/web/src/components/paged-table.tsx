import type { LucideIcon } from 'lucide-react';
import { RotateCw } from 'lucide-react';
import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { cn } from '../lib/cn';
import { Button } from './ui/button';
import { Skeleton } from './ui/skeleton';
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from './ui/table';

/** What a paged list shows: placeholder rows, the reason it failed with Retry, or a page of rows. */
export type PagedTableState<Row> =
  | { kind: 'loading' }
  | { kind: 'failed'; reason: string; onRetry(): void }
  | { kind: 'loaded'; rows: Row[]; filtered: boolean; refreshing: boolean };

export interface PagedColumn {
  key: string;
  header: string;
  /** The cell's classes, in both layouts (see `stackedRow`). */
  className: string;
  /** The placeholder's width in rem while loading. */
  skeletonRem: number;
}

/**
 * Where the table gets less than 48rem (a phone, or a tablet beside the sidebar) a row stops being a table row and
 * stacks: each column's classes place its cell (`@max-3xl:order-N`, `basis-full` for a line of its own), so the long
 * text reads without scrolling sideways.
 */
export const stackedRow = '@max-3xl:flex @max-3xl:flex-wrap @max-3xl:items-center @max-3xl:gap-x-2 @max-3xl:gap-y-1.5 @max-3xl:py-3';

const SKELETON_ROWS = 6;

interface PagedTableProps<Row> {
  state: PagedTableState<Row>;
  /** The namespace of `loadFailed`, `retry` and `empty.title|none|filtered`. */
  ns: 'logs' | 'audit';
  columns: PagedColumn[];
  /** Shown above the empty state's title. */
  emptyIcon: LucideIcon;
  /** Rows are `<testId>-row`, placeholders `<testId>-skeleton`. */
  testId: string;
  rowKey(row: Row): string | number;
  /** The row's cells, in the order of `columns`. */
  cells(row: Row): ReactNode;
}

/** One page of a paged list (Logs, Audit): the header, then placeholders, a failure, the empty state or the rows. */
export function PagedTable<Row>({ state, ns, columns, emptyIcon: EmptyIcon, testId, rowKey, cells }: PagedTableProps<Row>) {
  const { t } = useTranslation(ns);
  const loaded = state.kind === 'loaded' ? state : undefined;
  const notice = (children: ReactNode) => (
    <TableRow>
      <TableCell colSpan={columns.length} className="py-12 text-center text-slate-600 dark:text-slate-400">
        {children}
      </TableCell>
    </TableRow>
  );

  return (
    <div className="@container">
      <Table
        aria-busy={state.kind === 'loading' || loaded?.refreshing}
        className={cn('@max-3xl:block', loaded?.refreshing && 'opacity-60')}
      >
        <TableHeader className="@max-3xl:sr-only">
          <TableRow>
            {columns.map((c) => (
              <TableHead key={c.key}>{c.header}</TableHead>
            ))}
          </TableRow>
        </TableHeader>
        <TableBody className="@max-3xl:block">
          {state.kind === 'loading' &&
            Array.from({ length: SKELETON_ROWS }, (_, i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: placeholder rows have nothing else to tell them apart.
              <TableRow key={i} data-testid={`${testId}-skeleton`} className={stackedRow}>
                {columns.map((c) => (
                  <TableCell key={c.key} className={c.className}>
                    <Skeleton className="h-5 max-w-full" style={{ width: `${c.skeletonRem}rem` }} />
                  </TableCell>
                ))}
              </TableRow>
            ))}
          {state.kind === 'failed' &&
            notice(
              <>
                <p className="font-medium text-red-700 dark:text-red-400">{t('loadFailed')}</p>
                <p className="mt-1 text-sm">{state.reason}</p>
                <Button variant="outline" size="sm" className="mt-3" onClick={state.onRetry}>
                  <RotateCw aria-hidden="true" />
                  {t('retry')}
                </Button>
              </>,
            )}
          {loaded?.rows.length === 0 &&
            notice(
              <>
                <EmptyIcon aria-hidden="true" className="mx-auto mb-2 size-8 text-slate-400" />
                <p className="font-medium text-slate-900 dark:text-slate-100">{t('empty.title')}</p>
                <p className="mt-1 text-sm">{loaded.filtered ? t('empty.filtered') : t('empty.none')}</p>
              </>,
            )}
          {loaded?.rows.map((row) => (
            <TableRow key={rowKey(row)} data-testid={`${testId}-row`} className={cn('*:align-top', stackedRow)}>
              {cells(row)}
            </TableRow>
          ))}
        </TableBody>
      </Table>
    </div>
  );
}
