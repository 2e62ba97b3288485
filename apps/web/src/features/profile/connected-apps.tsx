import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { ConnectedApp } from '@toolport/contract';
import { PlugZap } from 'lucide-react';
import { useEffect, useRef, useState } from 'react';
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
 * card for the user's own, the Users page's dialog for an admin looking at a user's. A row stands for one
 * client identity however often it registered (`grant_count`, decision 0054) and says so when more than once.
 * After a Revoke the focus goes to the next row's Revoke (the last row's when it was the last), or to the list
 * itself when none is left, never to the page (issue 29).
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
  const region = useRef<HTMLElement>(null);
  // The row index whose Revoke takes the focus once the list is read again.
  const [refocus, setRefocus] = useState<number | null>(null);
  const revoke = useMutation({
    mutationFn: (app: ConnectedApp) => props.revoke(app.id),
    onSuccess: async (_answer, app) => {
      notify.success(t('connectedApps.revoked'));
      const index = Math.max(0, apps.data?.findIndex((a) => a.id === app.id) ?? 0);
      await queryClient.invalidateQueries({ queryKey: props.queryKey });
      setRefocus(index);
    },
    onError: (err) => notify.error(t('connectedApps.revokeFailed'), failureText(err, t)),
  });
  useEffect(() => {
    if (refocus === null || apps.isFetching) return;
    const buttons = [...(region.current?.querySelectorAll<HTMLButtonElement>('button[data-revoke]') ?? [])];
    (buttons[Math.min(refocus, buttons.length - 1)] ?? region.current)?.focus();
    setRefocus(null);
  }, [refocus, apps.isFetching]);
  const when = (ms: number) => new Intl.DateTimeFormat(i18n.language, { dateStyle: 'medium', timeStyle: 'short' }).format(ms);

  return (
    <section
      ref={region}
      tabIndex={-1}
      aria-label={t('connectedApps.title')}
      className="rounded-sm focus-visible:outline-2 focus-visible:outline-teal-600"
    >
      {apps.isPending ? (
        <div aria-hidden="true" className="space-y-2">
          <Skeleton className="h-9 w-full" />
          <Skeleton className="h-9 w-full" />
        </div>
      ) : apps.isError ? (
        <ErrorAlert title={t('connectedApps.loadFailed')}>{failureText(apps.error, t)}</ErrorAlert>
      ) : apps.data.length === 0 ? (
        <p className="text-sm text-slate-600 dark:text-slate-400">{t('connectedApps.none')}</p>
      ) : (
        <ul className="divide-y divide-slate-200 dark:divide-slate-800" aria-label={t('connectedApps.title')}>
          {apps.data.map((app) => (
            <li key={app.id} aria-label={app.client_name} className="flex flex-wrap items-center gap-x-3 gap-y-2 py-3">
              <PlugZap aria-hidden="true" className="size-5 shrink-0 text-slate-500" />
              <div className="min-w-0 flex-1">
                <p className="font-medium">{app.client_name}</p>
                <p className="truncate text-sm text-slate-600 dark:text-slate-400">
                  {endpointLabel(app.resource, t('connectedApps.allEndpoints'))}
                </p>
                <p className="text-xs text-slate-600 dark:text-slate-400">
                  {t('connectedApps.approved', { time: when(app.approved_at) })} ·{' '}
                  {app.last_used_at === null ? t('connectedApps.neverUsed') : t('connectedApps.lastUsed', { time: when(app.last_used_at) })}
                </p>
                {app.grant_count > 1 && (
                  <p data-testid="grant-count" className="text-xs text-slate-600 dark:text-slate-400">
                    {t('connectedApps.registrations', { count: app.grant_count })}
                  </p>
                )}
              </div>
              <Button
                data-revoke=""
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
      )}
      <ConfirmDialog
        open={confirming !== null}
        onOpenChange={(open) => !open && setConfirming(null)}
        title={t('connectedApps.confirmTitle', { client: confirming?.client_name ?? '' })}
        description={
          confirming && confirming.grant_count > 1
            ? `${t('connectedApps.confirmDescription')} ${t('connectedApps.confirmRegistrations', { count: confirming.grant_count })}`
            : t('connectedApps.confirmDescription')
        }
        confirmLabel={t('connectedApps.revoke')}
        cancelLabel={t('common:actions.cancel')}
        destructive
        onConfirm={() => {
          if (confirming) revoke.mutate(confirming);
          setConfirming(null);
        }}
      />
    </section>
  );
}
