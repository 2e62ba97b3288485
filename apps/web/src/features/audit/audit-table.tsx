import type { AuditEntry } from '@toolport/contract';
import { CircleCheck, CircleX, ShieldAlert, ShieldCheck } from 'lucide-react';
import { useTranslation } from 'react-i18next';
import { type PagedColumn, PagedTable, type PagedTableState } from '../../components/paged-table';
import { Badge } from '../../components/ui/badge';
import { TableCell } from '../../components/ui/table';
import { formatLogTime } from '../../lib/log-time';

/** As on the Logs screen: below 48rem a row stacks, the change across the whole width. */
const column = {
  time: 'whitespace-nowrap font-mono text-xs tabular-nums @max-3xl:order-1 @max-3xl:p-0',
  actor: 'max-w-48 @max-3xl:order-3 @max-3xl:max-w-none @max-3xl:basis-full @max-3xl:p-0',
  action: 'whitespace-nowrap @max-3xl:order-2 @max-3xl:p-0',
  object: 'max-w-56 @max-3xl:order-4 @max-3xl:max-w-none @max-3xl:basis-full @max-3xl:p-0',
  outcome: 'whitespace-nowrap @max-3xl:order-2 @max-3xl:p-0',
  change: 'min-w-64 @max-3xl:order-5 @max-3xl:min-w-0 @max-3xl:basis-full @max-3xl:p-0',
};

export type AuditTableState = PagedTableState<AuditEntry>;

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
  const actionText = (a: string) => (actions.includes(a as Action) ? t(`action.${a as Action}`) : a);
  const columns: PagedColumn[] = (Object.keys(column) as (keyof typeof column)[]).map((key) => ({
    key,
    header: t(`columns.${key}`),
    className: column[key],
    skeletonRem: 6,
  }));

  return (
    <PagedTable
      state={state}
      ns="audit"
      columns={columns}
      emptyIcon={ShieldCheck}
      testId="audit"
      rowKey={(entry) => entry.id}
      cells={(entry) => (
        <>
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
        </>
      )}
    />
  );
}
