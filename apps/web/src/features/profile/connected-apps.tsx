import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { ConnectedApp } from '@toolport/contract';
import { PlugZap } from 'lucide-react';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { ErrorAlert } from '../../components/ui/alert';
import { ConfirmDialog } from '../../components/ui/alert-dialog';
import { Button } from '../../components/ui/button';
import { Skeleton } from '../../components/ui/skeleton';
import { failureText } from '../../lib/failure';
import { notify } from '../../lib/notify';

/** Where a grant's resource points, shortened for the list: the endpoint's path, or "All endpoints". */
export function endpointLabel(resource: string, all: string): string {
  try {
    const path = new URL(resource).pathname.replace(/\/+$/, '');
    return path === '' ? all : decodeURIComponent(path);
  } catch {
    return resource;
  }
}

/**
 * A list of connected apps (OAuth grants of MCP clients) with a Revoke button each: the Profile's
 * card for the user's own, the Users page's dialog for an admin looking at a user's.
 */
export function ConnectedAppsList(props: {
  queryKey: readonly unknown[];
  load(): Promise<ConnectedApp[]>;
  revoke(id: number): Promise<unknown>;
}) {
  const { t, i18n } = useTranslation(['profile', 'common']);
  const queryClient = useQueryClient();
  const [confirming, setConfirming] = useState<ConnectedApp | null>(null);
  const apps = useQuery({ queryKey: props.queryKey, queryFn: props.load });
  const revoke = useMutation({
    mutationFn: (app: ConnectedApp) => props.revoke(app.id),
    onSuccess: () => {
      notify.success(t('connectedApps.revoked'));
      void queryClient.invalidateQueries({ queryKey: props.queryKey });
    },
    onError: (err) => notify.error(t('connectedApps.revokeFailed'), failureText(err, t)),
  });
  const when = (ms: number) => new Intl.DateTimeFormat(i18n.language, { dateStyle: 'medium', timeStyle: 'short' }).format(ms);

  if (apps.isPending)
    return (
      <div aria-hidden="true" className="space-y-2">
        <Skeleton className="h-9 w-full" />
        <Skeleton className="h-9 w-full" />
      </div>
    );
  if (apps.isError) return <ErrorAlert title={t('connectedApps.loadFailed')}>{failureText(apps.error, t)}</ErrorAlert>;
  if (apps.data.length === 0) return <p className="text-sm text-slate-600 dark:text-slate-400">{t('connectedApps.none')}</p>;
  return (
    <>
      <ul className="divide-y divide-slate-200 dark:divide-slate-800" aria-label={t('connectedApps.title')}>
        {apps.data.map((app) => (
          <li key={app.id} aria-label={app.client_name} className="flex flex-wrap items-center gap-x-3 gap-y-2 py-3">
            <PlugZap aria-hidden="true" className="size-5 shrink-0 text-slate-500" />
            <div className="min-w-0 flex-1">
              <p className="font-medium">{app.client_name}</p>
              <p className="truncate text-sm text-slate-600 dark:text-slate-400">
                {endpointLabel(app.resource, t('connectedApps.allEndpoints'))}
              </p>
              <p className="text-xs text-slate-500 dark:text-slate-400">
                {t('connectedApps.approved', { time: when(app.approved_at) })} ·{' '}
                {app.last_used_at === null ? t('connectedApps.neverUsed') : t('connectedApps.lastUsed', { time: when(app.last_used_at) })}
              </p>
            </div>
            <Button
              variant="outline"
              size="sm"
              aria-label={t('connectedApps.revokeApp', { client: app.client_name })}
              disabled={revoke.isPending}
              onClick={() => setConfirming(app)}
            >
              {t('connectedApps.revoke')}
            </Button>
          </li>
        ))}
      </ul>
      <ConfirmDialog
        open={confirming !== null}
        onOpenChange={(open) => !open && setConfirming(null)}
        title={t('connectedApps.confirmTitle', { client: confirming?.client_name ?? '' })}
        description={t('connectedApps.confirmDescription')}
        confirmLabel={t('connectedApps.revoke')}
        cancelLabel={t('common:actions.cancel')}
        destructive
        onConfirm={() => {
          if (confirming) revoke.mutate(confirming);
          setConfirming(null);
        }}
      />
    </>
  );
}
