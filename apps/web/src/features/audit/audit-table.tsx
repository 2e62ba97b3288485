import type { AuditEntry } from '@toolport/contract';
import { CircleCheck, CircleX, RotateCw, ShieldAlert, ShieldCheck } from 'lucide-react';
import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { Badge } from '../../components/ui/badge';
import { Button } from '../../components/ui/button';
import { Skeleton } from '../../components/ui/skeleton';
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from '../../components/ui/table';
import { cn } from '../../lib/cn';
import { formatLogTime } from '../logs';

const COLUMNS = 6;
const SKELETON_ROWS = 6;

/** As on the Logs screen: below 48rem a row stacks, the change across the whole width. */
const stackedRow = '@max-3xl:flex @max-3xl:flex-wrap @max-3xl:items-center @max-3xl:gap-x-2 @max-3xl:gap-y-1.5 @max-3xl:py-3';
const column = {
  time: 'whitespace-nowrap font-mono text-xs tabular-nums @max-3xl:order-1 @max-3xl:p-0',
  actor: 'max-w-48 @max-3xl:order-3 @max-3xl:max-w-none @max-3xl:basis-full @max-3xl:p-0',
  action: 'whitespace-nowrap @max-3xl:order-2 @max-3xl:p-0',
  object: 'max-w-56 @max-3xl:order-4 @max-3xl:max-w-none @max-3xl:basis-full @max-3xl:p-0',
  outcome: 'whitespace-nowrap @max-3xl:order-2 @max-3xl:p-0',
  change: 'min-w-64 @max-3xl:order-5 @max-3xl:min-w-0 @max-3xl:basis-full @max-3xl:p-0',
};

export type AuditTableState =
  | { kind: 'loading' }
  | { kind: 'failed'; reason: string; onRetry(): void }
  | { kind: 'loaded'; rows: AuditEntry[]; filtered: boolean; refreshing: boolean };

const actions = [
  'create',
  'update',
  'delete',
  'manage',
  'enable',
  'disable',
  'promote',
  'demote',
  'reset_password',
  'check',
  'reconnect',
  'toggle',
  'update_package',
  'install',
  'disconnect',
  'revoke',
  'import',
  'export_services',
  'export_audit',
  'backup',
  'restore',
  'rotate',
  'sign_in',
] as const;
type Action = (typeof actions)[number];

function Notice({ children }: { children: ReactNode }) {
  return (
    <TableRow>
      <TableCell colSpan={COLUMNS} className="py-12 text-center text-slate-600 dark:text-slate-400">
        {children}
      </TableCell>
    </TableRow>
  );
}

function OutcomeBadge({ outcome }: { outcome: AuditEntry['outcome'] }) {
  const { t } = useTranslation('audit');
  const look = {
    ok: { tone: 'success', icon: CircleCheck },
    failed: { tone: 'warning', icon: CircleX },
    refused: { tone: 'danger', icon: ShieldAlert },
  } as const;
  const { tone, icon: Icon } = look[outcome] ?? { tone: 'neutral', icon: ShieldCheck };
  return (
    <Badge tone={tone} data-outcome={outcome}>
      <Icon aria-hidden="true" />
      {t(`outcome.${outcome}`)}
    </Badge>
  );
}

/** The change as stored: the request's fields or the command's arguments, secrets already `********`. */
function Change({ entry }: { entry: AuditEntry }) {
  const { t } = useTranslation('audit');
  if (Object.keys(entry.changes).length === 0) return <span className="text-slate-500 dark:text-slate-400">—</span>;
  return (
    <details>
      <summary className="cursor-pointer text-sm text-slate-700 dark:text-slate-300">
        <span className="font-mono text-xs" data-testid="audit-via">
          {entry.via}
        </span>
        <span className="sr-only"> {t('change.show')}</span>
      </summary>
      <pre
        className="mt-2 max-h-72 overflow-auto rounded bg-slate-50 p-2 text-xs [overflow-wrap:anywhere] whitespace-pre-wrap dark:bg-slate-900"
        data-testid="audit-change"
      >
        {JSON.stringify(entry.changes, null, 2)}
      </pre>
    </details>
  );
}

/** The entries of one page: time, who (and from where), what was done to which object, how it went, the change. */
export function AuditTable({ state }: { state: AuditTableState }) {
  const { t } = useTranslation('audit');
  const loaded = state.kind === 'loaded' ? state : undefined;
  const actionText = (a: string) => (actions.includes(a as Action) ? t(`action.${a as Action}`) : a);

  return (
    <div className="@container">
      <Table
        aria-busy={state.kind === 'loading' || loaded?.refreshing}
        className={cn('@max-3xl:block', loaded?.refreshing && 'opacity-60')}
      >
        <TableHeader className="@max-3xl:sr-only">
          <TableRow>
            <TableHead>{t('columns.time')}</TableHead>
            <TableHead>{t('columns.actor')}</TableHead>
            <TableHead>{t('columns.action')}</TableHead>
            <TableHead>{t('columns.object')}</TableHead>
            <TableHead>{t('columns.outcome')}</TableHead>
            <TableHead>{t('columns.change')}</TableHead>
          </TableRow>
        </TableHeader>
        <TableBody className="@max-3xl:block">
          {state.kind === 'loading' &&
            Array.from({ length: SKELETON_ROWS }, (_, i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: placeholder rows have nothing else to tell them apart.
              <TableRow key={i} data-testid="audit-skeleton" className={stackedRow}>
                {Object.values(column).map((c) => (
                  <TableCell key={c} className={c}>
                    <Skeleton className="h-5 w-24 max-w-full" />
                  </TableCell>
                ))}
              </TableRow>
            ))}
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
              <ShieldCheck aria-hidden="true" className="mx-auto mb-2 size-8 text-slate-400" />
              <p className="font-medium text-slate-900 dark:text-slate-100">{t('empty.title')}</p>
              <p className="mt-1 text-sm">{loaded.filtered ? t('empty.filtered') : t('empty.none')}</p>
            </Notice>
          )}
          {loaded?.rows.map((entry) => (
            <TableRow key={entry.id} data-testid="audit-row" className={cn('*:align-top', stackedRow)}>
              <TableCell className={column.time}>
                <time dateTime={new Date(entry.created_at).toISOString()}>{formatLogTime(entry.created_at)}</time>
              </TableCell>
              <TableCell className={column.actor}>
                <div className="truncate font-medium" data-testid="audit-actor" data-i18n-data>
                  {entry.actor_name || t('actor.unknown')}
                </div>
                <div className="text-xs text-slate-500 dark:text-slate-400">
                  {t(`actor.${entry.actor_type}`)}
                  {entry.address && <span className="font-mono"> · {entry.address}</span>}
                </div>
              </TableCell>
              <TableCell className={column.action}>
                <span data-testid="audit-action">{actionText(entry.action)}</span>
              </TableCell>
              <TableCell className={column.object}>
                <span data-testid="audit-object">{t(`object.${entry.object_type}`)}</span>
                {entry.object_id && (
                  <span className="ml-1 font-mono text-xs text-slate-500 [overflow-wrap:anywhere] dark:text-slate-400" data-i18n-data>
                    #{entry.object_id}
                  </span>
                )}
              </TableCell>
              <TableCell className={column.outcome}>
                <OutcomeBadge outcome={entry.outcome} />
              </TableCell>
              <TableCell className={column.change}>
                <Change entry={entry} />
              </TableCell>
            </TableRow>
          ))}
        </TableBody>
      </Table>
    </div>
  );
}
