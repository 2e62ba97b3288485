import { MAX_USER_SEARCH_LENGTH, type PublicUser } from '@toolport/contract';
import { ChevronLeft, ChevronRight, RotateCw, Search, UserPlus, X } from 'lucide-react';
import { type FormEvent, type ReactNode, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { PageHeader } from '../../components/page-header';
import { ErrorAlert } from '../../components/ui/alert';
import { ConfirmDialog } from '../../components/ui/alert-dialog';
import { Button } from '../../components/ui/button';
import { Input } from '../../components/ui/input';
import { failureText, showFailure } from '../../lib/failure';
import { displayNameOf, useSession } from '../../lib/session';
import { useErrorToast } from '../../lib/use-error-toast';
import { HeldSignIns } from './held-sign-ins';
import { IdentitiesDialog } from './identities-dialog';
import { useUserActions } from './use-user-actions';
import { type UsersView, useUsers } from './use-users';
import { UserAppsDialog } from './user-apps-dialog';
import { UserDialog } from './user-dialog';
import { USERS_PAGE_SIZE } from './user-rules';
import { UsersTable, UsersTableSkeleton } from './users-table';

interface DialogState {
  open: boolean;
  user: PublicUser | null;
  /** A new key per opening, so the form starts from the chosen user. */
  key: number;
}

/** Search box and button; Enter searches too, and an empty term goes back to the paged list. */
function SearchForm({ active, onSearch }: { active: boolean; onSearch(keyword: string): void }) {
  const { t } = useTranslation('users');
  const [text, setText] = useState('');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    onSearch(text.trim());
  };
  return (
    <search className="block w-full sm:max-w-xl">
      <form onSubmit={submit} className="flex flex-wrap gap-2 sm:flex-nowrap">
        <Input
          type="search"
          value={text}
          onChange={(e) => setText(e.target.value)}
          aria-label={t('search.label')}
          placeholder={t('search.placeholder')}
          className="min-w-0 flex-1 basis-48"
          maxLength={MAX_USER_SEARCH_LENGTH}
        />
        <Button type="submit" variant="secondary">
          <Search aria-hidden="true" />
          {t('search.submit')}
        </Button>
        {active && (
          <Button
            variant="ghost"
            onClick={() => {
              setText('');
              onSearch('');
            }}
          >
            <X aria-hidden="true" />
            {t('search.clear')}
          </Button>
        )}
      </form>
    </search>
  );
}

/** 'showing N users', and previous / next for the paged list (the search is not paged, docs/console.md §9). */
function Pager({ view, count, onPage }: { view: UsersView; count: number; onPage(page: number): void }) {
  const { t } = useTranslation('users');
  return (
    <div className="flex flex-wrap items-center justify-between gap-3 text-sm">
      <p role="status" className="text-slate-600 dark:text-slate-400" data-testid="users-count">
        {t('paging.showing', { count })}
      </p>
      {view.kind === 'page' && (
        <nav aria-label={t('paging.label')} className="flex items-center gap-2">
          <Button variant="outline" size="sm" disabled={view.page === 0} onClick={() => onPage(view.page - 1)}>
            <ChevronLeft aria-hidden="true" />
            {t('paging.previous')}
          </Button>
          <span className="tabular-nums text-slate-600 dark:text-slate-400">{t('paging.page', { page: view.page + 1 })}</span>
          <Button variant="outline" size="sm" disabled={count < USERS_PAGE_SIZE} onClick={() => onPage(view.page + 1)}>
            {t('paging.next')}
            <ChevronRight aria-hidden="true" />
          </Button>
        </nav>
      )}
    </div>
  );
}

/** Users (docs/console.md §2.14): search, the table, paging, add and edit, and the role and status actions. */
export function UsersPage() {
  const { t } = useTranslation(['users', 'common']);
  const me = useSession().user;
  const [view, setView] = useState<UsersView>({ kind: 'page', page: 0 });
  const users = useUsers(view);
  const actions = useUserActions();
  const [dialog, setDialog] = useState<DialogState>({ open: false, user: null, key: 0 });
  // The target stays set while the confirmation closes, so its text does not change under the animation.
  const [deleteTarget, setDeleteTarget] = useState<PublicUser | null>(null);
  const [confirmOpen, setConfirmOpen] = useState(false);
  // Promoting gives a user the admin pages; disabling signs them out everywhere: both ask first (issue 15, item 9).
  const [manageTarget, setManageTarget] = useState<{ user: PublicUser; action: 'promote' | 'disable' } | null>(null);
  const [manageOpen, setManageOpen] = useState(false);
  const [appsOf, setAppsOf] = useState<PublicUser | null>(null);
  const [identitiesOf, setIdentitiesOf] = useState<PublicUser | null>(null);

  useErrorToast(users.error, (error) => showFailure(error, t, { failed: t('toasts.loadFailed') }));

  const rows = users.data ?? [];
  const openDialog = (user: PublicUser | null) => setDialog((d) => ({ open: true, user, key: d.key + 1 }));
  const remove = async (user: PublicUser) => {
    const removed = await actions.remove(user);
    // The last user of a later page is gone: show the page before it rather than an empty one.
    if (removed && view.kind === 'page' && view.page > 0 && rows.length === 1) setView({ kind: 'page', page: view.page - 1 });
  };

  let content: ReactNode;
  if (users.isError && !users.data) {
    content = (
      <ErrorAlert title={t('loadFailedTitle')}>
        <p>{failureText(users.error, t)}</p>
        <Button variant="outline" size="sm" className="mt-3" onClick={() => void users.refetch()}>
          <RotateCw aria-hidden="true" />
          {t('retry')}
        </Button>
      </ErrorAlert>
    );
  } else if (users.isPending || !me) {
    content = <UsersTableSkeleton />;
  } else if (rows.length === 0) {
    content = (
      <p className="rounded-lg border border-dashed border-slate-300 py-12 text-center text-slate-600 dark:border-slate-700 dark:text-slate-400">
        {view.kind === 'search' ? t('empty.search', { keyword: view.keyword }) : t('empty.list')}
      </p>
    );
  } else {
    content = (
      <div
        aria-busy={users.isPlaceholderData || undefined}
        className={users.isPlaceholderData ? 'opacity-60 transition-opacity' : undefined}
      >
        <UsersTable
          users={rows}
          actor={me}
          busy={actions.busy}
          onEdit={openDialog}
          onManage={(user, action) => {
            if (action === 'promote' || action === 'disable') {
              setManageTarget({ user, action });
              setManageOpen(true);
            } else void actions.manage(user, action);
          }}
          onDelete={(user) => {
            setDeleteTarget(user);
            setConfirmOpen(true);
          }}
          onApps={setAppsOf}
          onIdentities={setIdentitiesOf}
        />
      </div>
    );
  }

  return (
    <section className="space-y-6">
      <PageHeader
        title={t('title')}
        description={t('description')}
        actions={
          <Button onClick={() => openDialog(null)}>
            <UserPlus aria-hidden="true" />
            {t('add')}
          </Button>
        }
      />
      <HeldSignIns />
      <SearchForm
        active={view.kind === 'search'}
        onSearch={(keyword) => setView(keyword ? { kind: 'search', keyword } : { kind: 'page', page: 0 })}
      />
      <div className="space-y-4 rounded-lg border border-slate-200 bg-white p-4 dark:border-slate-800 dark:bg-slate-900">
        {content}
        {/* A later page that failed to load still offers the way back. */}
        {(users.data || (users.isError && view.kind === 'page' && view.page > 0)) && (
          <Pager view={view} count={rows.length} onPage={(page) => setView({ kind: 'page', page })} />
        )}
      </div>
      <ConfirmDialog
        open={confirmOpen}
        onOpenChange={setConfirmOpen}
        title={t('delete.title')}
        description={t('delete.description', { name: deleteTarget ? displayNameOf(deleteTarget) : '' })}
        confirmLabel={t('delete.confirm')}
        cancelLabel={t('common:actions.cancel')}
        destructive
        onConfirm={() => deleteTarget && void remove(deleteTarget)}
      />
      <ConfirmDialog
        open={manageOpen}
        onOpenChange={setManageOpen}
        title={manageTarget ? t(`confirmManage.${manageTarget.action}.title`) : ''}
        description={manageTarget ? t(`confirmManage.${manageTarget.action}.description`, { name: displayNameOf(manageTarget.user) }) : ''}
        confirmLabel={manageTarget ? t(`confirmManage.${manageTarget.action}.confirm`) : ''}
        cancelLabel={t('common:actions.cancel')}
        destructive={manageTarget?.action === 'disable'}
        onConfirm={() => manageTarget && void actions.manage(manageTarget.user, manageTarget.action)}
      />
      <UserAppsDialog user={appsOf} onOpenChange={(open) => !open && setAppsOf(null)} />
      <IdentitiesDialog user={identitiesOf} onOpenChange={(open) => !open && setIdentitiesOf(null)} />
      <UserDialog
        key={dialog.key}
        user={dialog.user}
        open={dialog.open}
        onOpenChange={(open) => setDialog((d) => ({ ...d, open }))}
        onSaved={(saved) => saved.id === me?.id && void actions.selfChanged()}
      />
    </section>
  );
}
