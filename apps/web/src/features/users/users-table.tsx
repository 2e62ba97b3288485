import type { PublicUser } from '@toolport/contract';
import { KeyRound, Pencil, PlugZap, ShieldMinus, ShieldPlus, Trash2 } from 'lucide-react';
import { useTranslation } from 'react-i18next';
import { Badge } from '../../components/ui/badge';
import { Button } from '../../components/ui/button';
import { Skeleton } from '../../components/ui/skeleton';
import { Switch } from '../../components/ui/switch';
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from '../../components/ui/table';
import { Tooltip } from '../../components/ui/tooltip';
import type { UserBusy } from './use-user-actions';
import { Bindings, RoleBadge } from './user-badges';
import { isEnabled, type ManageAction, type RowActions, rowActions } from './user-rules';

export interface UsersTableProps {
  users: PublicUser[];
  /** The signed-in administrator: decides which actions each row offers. */
  actor: { id: number; role: number };
  busy: Record<number, UserBusy>;
  onEdit(user: PublicUser): void;
  onManage(user: PublicUser, action: ManageAction): void;
  onDelete(user: PublicUser): void;
  /** The user's connected apps (OAuth grants of MCP clients); offered where the row may be edited. */
  onApps?(user: PublicUser): void;
  /** The user's sign-in identities, to link and unlink (decision 0063). */
  onIdentities?(user: PublicUser): void;
}

const columns = ['id', 'username', 'displayName', 'email', 'role', 'bindings', 'status', 'actions'] as const;

function Header() {
  const { t } = useTranslation('users');
  return (
    <TableHeader>
      <TableRow>
        {columns.map((column) => (
          <TableHead key={column} className={column === 'actions' ? 'text-right' : undefined}>
            {t(`columns.${column}`)}
          </TableHead>
        ))}
      </TableRow>
    </TableHeader>
  );
}

/** The status switch (docs/console.md §2.14, §4): on = enabled; flipping it disables or enables the account. */
function StatusSwitch({ user, allowed, busy, onToggle }: { user: PublicUser; allowed: boolean; busy: boolean; onToggle(): void }) {
  const { t } = useTranslation('users');
  const enabled = isEnabled(user);
  const control = (
    <Switch
      checked={enabled}
      disabled={!allowed || busy}
      aria-busy={busy || undefined}
      onCheckedChange={onToggle}
      aria-label={t('status.toggle', { name: user.username })}
    />
  );
  return (
    <div className="flex items-center gap-2 whitespace-nowrap">
      {allowed ? (
        control
      ) : (
        <Tooltip content={t('status.locked')}>
          {/* A disabled button gets no pointer or focus events: the wrapper carries the explanation. */}
          {/* biome-ignore lint/a11y/noNoninteractiveTabindex: keyboard users reach the explanation too. */}
          <span tabIndex={0} className="inline-flex rounded-full focus-visible:outline-2 focus-visible:outline-teal-600">
            {control}
          </span>
        </Tooltip>
      )}
      <span className={enabled ? 'text-emerald-700 dark:text-emerald-400' : 'text-slate-500 dark:text-slate-400'}>
        {t(enabled ? 'status.enabled' : 'status.disabled')}
      </span>
    </div>
  );
}

function RowButtons({
  user,
  allowed,
  busy,
  ...props
}: Omit<UsersTableProps, 'users' | 'actor' | 'busy'> & { user: PublicUser; allowed: RowActions; busy: boolean }) {
  const { t } = useTranslation('users');
  const name = user.username;
  const none = !allowed.edit && !allowed.promote && !allowed.demote && !allowed.remove && !allowed.identities;
  if (none) {
    return (
      // relative: the screen-reader text is positioned inside the table's scroll box, not past the page edge.
      <span className="relative text-slate-500 dark:text-slate-400">
        <span aria-hidden="true">-</span>
        <span className="sr-only">{t('actions.none')}</span>
      </span>
    );
  }
  return (
    <div className="flex flex-wrap items-center justify-end gap-1">
      {allowed.promote && (
        <Button
          variant="outline"
          size="sm"
          disabled={busy}
          aria-label={t('actions.promoteUser', { name })}
          onClick={() => props.onManage(user, 'promote')}
        >
          <ShieldPlus aria-hidden="true" />
          {t('actions.promote')}
        </Button>
      )}
      {allowed.demote && (
        <Button
          variant="outline"
          size="sm"
          disabled={busy}
          aria-label={t('actions.demoteUser', { name })}
          onClick={() => props.onManage(user, 'demote')}
        >
          <ShieldMinus aria-hidden="true" />
          {t('actions.demote')}
        </Button>
      )}
      {allowed.edit && props.onApps && (
        <Button
          variant="ghost"
          size="icon"
          aria-label={t('apps.open', { name })}
          title={t('apps.open', { name })}
          onClick={() => props.onApps?.(user)}
        >
          <PlugZap aria-hidden="true" />
        </Button>
      )}
      {allowed.identities && props.onIdentities && (
        <Button
          variant="ghost"
          size="icon"
          aria-label={t('identities.open', { name })}
          title={t('identities.open', { name })}
          onClick={() => props.onIdentities?.(user)}
        >
          <KeyRound aria-hidden="true" />
        </Button>
      )}
      {allowed.edit && (
        <Button
          variant="ghost"
          size="icon"
          disabled={busy}
          aria-label={t('actions.edit', { name })}
          title={t('actions.edit', { name })}
          onClick={() => props.onEdit(user)}
        >
          <Pencil aria-hidden="true" />
        </Button>
      )}
      {allowed.remove && (
        <Button
          variant="ghost"
          size="icon"
          disabled={busy}
          className="text-red-600 hover:text-red-700 dark:text-red-400"
          aria-label={t('actions.delete', { name })}
          title={t('actions.delete', { name })}
          onClick={() => props.onDelete(user)}
        >
          <Trash2 aria-hidden="true" />
        </Button>
      )}
    </div>
  );
}

/**
 * The users table (docs/console.md §2.14): id, username, display name, email (or '-'), role badge, bindings,
 * status switch and the actions the signed-in administrator may take on that user (§4, §6).
 */
export function UsersTable({ users, actor, busy, ...handlers }: UsersTableProps) {
  const { t } = useTranslation('users');
  const label = (column: (typeof columns)[number]) => t(`columns.${column}`);
  return (
    // Narrower than its eight columns (a phone, a tablet beside the sidebar): one card per user, so the status
    // switch and the actions stay in view without scrolling sideways (issue 15, item 6).
    <Table aria-label={t('table.label')} stackBelow="2xl">
      <Header />
      <TableBody>
        {users.map((user) => {
          const allowed = rowActions(actor, user);
          const rowBusy = !!busy[user.id];
          const enabled = isEnabled(user);
          return (
            <TableRow key={user.id} data-testid="user-row" data-username={user.username} aria-busy={rowBusy || undefined}>
              <TableCell label={label('id')} className="tabular-nums text-slate-600 dark:text-slate-400">
                {user.id}
              </TableCell>
              <TableCell label={label('username')} className="max-w-48">
                <div className="flex min-w-0 items-center gap-2">
                  <span className="truncate font-medium" data-i18n-data>
                    {user.username}
                  </span>
                  {user.id === actor.id && <Badge tone="success">{t('table.you')}</Badge>}
                </div>
              </TableCell>
              <TableCell label={label('displayName')} className="max-w-48" data-i18n-data>
                <span className="block min-w-0 truncate">{user.display_name || '-'}</span>
              </TableCell>
              <TableCell label={label('email')} className="max-w-56" data-i18n-data>
                <span className="block min-w-0 truncate">{user.email || '-'}</span>
              </TableCell>
              <TableCell label={label('role')}>
                <RoleBadge role={user.role} />
              </TableCell>
              <TableCell label={label('bindings')}>
                <Bindings user={user} />
              </TableCell>
              <TableCell label={label('status')}>
                <StatusSwitch
                  user={user}
                  allowed={allowed.toggleStatus}
                  busy={rowBusy}
                  onToggle={() => handlers.onManage(user, enabled ? 'disable' : 'enable')}
                />
              </TableCell>
              <TableCell label={label('actions')}>
                <RowButtons user={user} allowed={allowed} busy={rowBusy} {...handlers} />
              </TableCell>
            </TableRow>
          );
        })}
      </TableBody>
    </Table>
  );
}

/** Rows of grey blocks while the first page loads, in the table's own layout. */
export function UsersTableSkeleton() {
  return (
    <Table aria-hidden="true" stackBelow="2xl">
      <Header />
      <TableBody>
        {Array.from({ length: 5 }, (_, row) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: placeholder rows have nothing else to key by.
          <TableRow key={row}>
            {columns.map((column) => (
              <TableCell key={column}>
                <Skeleton className="h-5 w-full min-w-8" />
              </TableCell>
            ))}
          </TableRow>
        ))}
      </TableBody>
    </Table>
  );
}
