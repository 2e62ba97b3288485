import { useQueryClient } from '@tanstack/react-query';
import { type Group, routes } from '@toolport/contract';
import { Plus, RotateCw } from 'lucide-react';
import { lazy, type ReactNode, Suspense, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { PageHeader } from '../../components/page-header';
import { ErrorAlert } from '../../components/ui/alert';
import { ConfirmDialog } from '../../components/ui/alert-dialog';
import { Badge } from '../../components/ui/badge';
import { Button } from '../../components/ui/button';
import { Skeleton } from '../../components/ui/skeleton';
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from '../../components/ui/table';
import { call, messageOf } from '../../lib/api';
import { useInstalledServices } from '../../lib/installed-services';
import { notify } from '../../lib/notify';
import { isAdmin, useSession } from '../../lib/session';
import { serviceTitle } from '../services';
import { refreshGroups, useGroups } from './use-groups';

const GroupDialog = lazy(() => import('./group-dialog'));
const GroupConfigDialog = lazy(() => import('./group-config-dialog'));

type Dialog = { kind: 'create' } | { kind: 'edit'; group: Group } | { kind: 'config'; group: Group } | null;

/** The Groups page (docs/console.md §2.9b): admins manage every group; users see the groups open to them. */
export function GroupsPage() {
  const { t } = useTranslation('groups');
  const admin = isAdmin(useSession().user);
  const queryClient = useQueryClient();
  const groups = useGroups();
  const services = useInstalledServices();
  const [dialog, setDialog] = useState<Dialog>(null);
  // The target stays set while the confirmation closes, so its text does not change under the animation.
  const [deleteTarget, setDeleteTarget] = useState<Group | null>(null);
  const [confirmOpen, setConfirmOpen] = useState(false);

  const serviceName = (id: number): ReactNode => {
    const service = services.data?.find((s) => s.id === id);
    if (service) return serviceTitle(service);
    // Named once the services list has come; by its id only when the list does not hold it.
    if (services.isPending) return <Skeleton className="inline-block h-4 w-24 align-middle" data-testid="member-name-loading" />;
    return `#${id}`;
  };

  const remove = async (group: Group) => {
    try {
      await call(routes.groups.remove, { params: { id: String(group.id) }, notify: false });
      notify.success(t('remove.done'));
      await refreshGroups(queryClient);
    } catch (err) {
      notify.error(t('remove.failed'), messageOf(err, ''));
    }
  };

  let content: ReactNode;
  if (groups.isError) {
    content = (
      <ErrorAlert title={t('loadFailedTitle')}>
        <p>{messageOf(groups.error, t('loadFailed'))}</p>
        <Button variant="outline" size="sm" className="mt-3" onClick={() => void groups.refetch()}>
          <RotateCw aria-hidden="true" />
          {t('retry')}
        </Button>
      </ErrorAlert>
    );
  } else if (groups.isPending) {
    content = <p className="text-slate-600 dark:text-slate-400">…</p>;
  } else if (groups.data.length === 0) {
    content = (
      <p className="rounded-lg border border-dashed border-slate-300 py-12 text-center text-slate-600 dark:border-slate-700 dark:text-slate-400">
        {t('empty')}
      </p>
    );
  } else {
    content = (
      // Narrower than its columns (a phone): one card per group, its actions in view (as the Users table).
      <Table stackBelow="2xl">
        <TableHeader>
          <TableRow>
            <TableHead>{t('columns.name')}</TableHead>
            <TableHead>{t('columns.services')}</TableHead>
            <TableHead>{t('columns.endpoint')}</TableHead>
            {admin && <TableHead>{t('columns.access')}</TableHead>}
            <TableHead>{t('columns.operations')}</TableHead>
          </TableRow>
        </TableHeader>
        <TableBody>
          {groups.data.map((group) => (
            <TableRow key={group.id} data-testid="group-row">
              <TableCell label={t('columns.name')}>
                <div className="min-w-0">
                  <div className="font-medium [overflow-wrap:anywhere]" data-i18n-data="">
                    {group.display_name || group.name}
                  </div>
                  {group.mode === 'discovery' && (
                    <Badge tone="info" className="mt-1" data-testid="group-mode">
                      {t('modeDiscovery')}
                    </Badge>
                  )}
                  {group.description && (
                    <div className="text-xs text-slate-600 dark:text-slate-400" data-i18n-data="">
                      {group.description}
                    </div>
                  )}
                </div>
              </TableCell>
              <TableCell label={t('columns.services')}>
                <ul className="min-w-0 space-y-0.5 text-sm [overflow-wrap:anywhere]">
                  {group.members.map((m) => (
                    <li key={m.service_id}>
                      <span data-i18n-data="">{serviceName(m.service_id)}</span>{' '}
                      <span className="text-xs text-slate-500 dark:text-slate-400">
                        ({m.tools ? t('someTools', { count: m.tools.length }) : t('allTools')})
                      </span>
                    </li>
                  ))}
                </ul>
              </TableCell>
              <TableCell label={t('columns.endpoint')} className="font-mono text-xs [overflow-wrap:anywhere]">
                /group/{group.name}/mcp
              </TableCell>
              {admin && (
                <TableCell label={t('columns.access')} className="text-sm">
                  {group.access.restricted ? t('accessRestricted', { count: group.access.user_ids.length }) : t('accessEveryone')}
                </TableCell>
              )}
              <TableCell label={t('columns.operations')}>
                <div className="flex flex-wrap justify-end gap-2">
                  <Button size="sm" variant="outline" onClick={() => setDialog({ kind: 'config', group })}>
                    {t('actions.configure')}
                  </Button>
                  {admin && (
                    <>
                      <Button size="sm" variant="outline" onClick={() => setDialog({ kind: 'edit', group })}>
                        {t('actions.edit')}
                      </Button>
                      <Button
                        size="sm"
                        variant="outline"
                        onClick={() => {
                          setDeleteTarget(group);
                          setConfirmOpen(true);
                        }}
                      >
                        {t('actions.delete')}
                      </Button>
                    </>
                  )}
                </div>
              </TableCell>
            </TableRow>
          ))}
        </TableBody>
      </Table>
    );
  }

  const close = (open: boolean) => {
    if (!open) setDialog(null);
  };
  return (
    <section className="space-y-6">
      <PageHeader
        title={t('title')}
        description={admin ? t('description') : t('descriptionUser')}
        actions={
          admin && (
            <Button onClick={() => setDialog({ kind: 'create' })}>
              <Plus aria-hidden="true" />
              {t('add')}
            </Button>
          )
        }
      />
      {content}
      <ConfirmDialog
        open={confirmOpen}
        onOpenChange={setConfirmOpen}
        title={t('remove.title')}
        description={t('remove.description', { name: deleteTarget ? deleteTarget.display_name || deleteTarget.name : '' })}
        confirmLabel={t('remove.confirm')}
        cancelLabel={t('remove.cancel')}
        destructive
        onConfirm={() => deleteTarget && void remove(deleteTarget)}
      />
      <Suspense fallback={null}>
        {admin && (dialog?.kind === 'create' || dialog?.kind === 'edit') && (
          <GroupDialog open onOpenChange={close} group={dialog.kind === 'edit' ? dialog.group : undefined} services={services.data ?? []} />
        )}
        {dialog?.kind === 'config' && <GroupConfigDialog open onOpenChange={close} group={dialog.group} />}
      </Suspense>
    </section>
  );
}
