import { useQueryClient } from '@tanstack/react-query';
import { type InstalledService, routes } from '@toolport/contract';
import { useCallback, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { call } from '../../lib/api';
import { showFailure } from '../../lib/failure';
import { installedServicesKey, patchService, refreshServices, removeService } from '../../lib/installed-services';
import { notify } from '../../lib/notify';
import { integerIdOf, localServiceOf, uninstallIdOf } from '../../lib/service-ids';
import { isAdmin, readSession } from '../../lib/session';
import { fetchInstallStatus, type InstallOutcome, pollInstallStatus } from '../installs';
import { healthLabelKey, healthLineOf, healthStateOf } from './health';
import { type BusyAction, serviceTitle } from './service-view-props';

/** An Update's task is asked about every 2 s, for at most 10 minutes (an npm install can take a while). */
const UPDATE_POLL_INTERVAL_MS = 2_000;
const UPDATE_POLL_MAX_ATTEMPTS = 300;

/**
 * Toggle, health check and uninstall of the Services page (docs/console.md §2.5, §4). Toggle and health check
 * run one at a time per service: a second action on a busy service is ignored and its controls read
 * `busy[id]`. Enabling a service checks its health at once, still under the same busy mark.
 */
export function useServiceActions() {
  const { t } = useTranslation('services');
  const queryClient = useQueryClient();
  const [busy, setBusy] = useState<Record<number, BusyAction>>({});
  // The state above is for rendering; this set guards against a double click before React re-renders.
  const running = useRef(new Set<number>());

  const mark = useCallback((id: number, action: BusyAction | null) => {
    setBusy(({ [id]: _previous, ...rest }) => (action ? { ...rest, [id]: action } : rest));
  }, []);

  const exclusive = useCallback(
    async (id: number, action: BusyAction, work: () => Promise<void>) => {
      if (running.current.has(id)) return;
      running.current.add(id);
      mark(id, action);
      try {
        await work();
      } finally {
        running.current.delete(id);
        mark(id, null);
      }
    },
    [mark],
  );

  /** Runs the check (or, with `reconnect`, restarts the service's link first), stores its result and says how it went. */
  const runHealthCheck = useCallback(
    async (rawId: unknown, how: 'check' | 'reconnect' = 'check'): Promise<void> => {
      try {
        const id = integerIdOf(rawId);
        const route = how === 'reconnect' ? routes.services.reconnect : routes.services.healthCheck;
        const result = await call(route, { params: { id }, notify: false });
        await patchService(queryClient, id, {
          health_status: result.health_status,
          health_details: result.health_details,
          last_health_check: result.last_checked,
          tool_count: result.tool_count,
        });
        // A check that found the service down is a failure to the user, whatever the HTTP status said.
        const known = queryClient.getQueryData<InstalledService[]>(installedServicesKey)?.find((s) => s.id === id);
        const line = healthLineOf({ ...known, ...result }, isAdmin(readSession().user));
        const reason = t(line.key, line.values);
        const name = known ? serviceTitle(known) : `#${id}`;
        const state = healthStateOf(result.health_status);
        if (state === 'needs_authorization') notify.warning(t('toasts.healthCheckNeedsAuthorization', { name }), reason);
        else if (healthStateOf(result.health_status) === 'unhealthy') notify.error(t('toasts.healthCheckUnhealthy', { name }), reason);
        else if (healthStateOf(result.health_status) === 'healthy') notify.success(t('toasts.healthCheckHealthy', { name }), reason);
        else notify.success(t('toasts.healthCheckComplete'), t('toasts.healthStatus', { status: t(healthLabelKey(result.health_status)) }));
      } catch (err) {
        const failed = how === 'reconnect' ? 'toasts.reconnectFailed' : 'toasts.healthCheckFailed';
        showFailure(err, t, { failed: t(failed), fallback: t('errors.unknown') });
      }
    },
    [queryClient, t],
  );

  const checkHealth = useCallback(
    (service: Pick<InstalledService, 'id'>) => exclusive(service.id, 'health', () => runHealthCheck(service.id)),
    [exclusive, runHealthCheck],
  );

  /** Reconnect (admins): the server restarts the service's link and checks it again; told like a check. */
  const reconnect = useCallback(
    (service: Pick<InstalledService, 'id'>) => exclusive(service.id, 'reconnect', () => runHealthCheck(service.id, 'reconnect')),
    [exclusive, runHealthCheck],
  );

  const toggle = useCallback(
    (service: Pick<InstalledService, 'id'>) =>
      exclusive(service.id, 'toggle', async () => {
        let enabled: boolean;
        try {
          const id = integerIdOf(service.id);
          localServiceOf(queryClient.getQueryData<InstalledService[]>(installedServicesKey), id);
          const result = await call(routes.services.toggle, { params: { id }, notify: false });
          enabled = result.enabled;
          // A personal switch changes nothing for anyone else: the service keeps running and its health stands.
          await patchService(
            queryClient,
            id,
            result.scope === 'personal'
              ? { enabled, switched_off_by_me: !enabled }
              : { enabled, globally_enabled: enabled, health_status: enabled ? 'unknown' : 'stopped' },
          );
          notify.success(
            t('toasts.statusUpdated'),
            result.scope === 'personal'
              ? t(enabled ? 'toasts.enabledForMe' : 'toasts.disabledForMe')
              : t(enabled ? 'toasts.enabled' : 'toasts.disabled'),
          );
        } catch (err) {
          showFailure(err, t, { failed: t('toasts.toggleFailed'), error: t('toasts.toggleServiceFailed'), fallback: t('errors.unknown') });
          return;
        }
        if (enabled) {
          mark(service.id, 'health');
          await runHealthCheck(service.id);
        }
      }),
    [exclusive, mark, queryClient, runHealthCheck, t],
  );

  const uninstall = useCallback(
    async (service: InstalledService): Promise<void> => {
      try {
        const id = uninstallIdOf(service);
        await call(routes.services.uninstall, { body: { service_id: id }, notify: false });
        removeService(queryClient, id);
        notify.success(t('toasts.uninstalled'), t('toasts.uninstalledDescription', { name: service.display_name || service.name }));
        void refreshServices(queryClient);
      } catch (err) {
        const missingId = err instanceof Error && 'messageKey' in err && err.messageKey === 'errors.uninstallIdMissing';
        showFailure(err, t, {
          failed: t(missingId ? 'toasts.cannotUninstall' : 'toasts.uninstallFailed'),
          error: t('toasts.uninstallError'),
          fallback: t('errors.uninstallFailed'),
        });
      }
    },
    [queryClient, t],
  );

  /**
   * Update (decision 0035): the newest release of the service's package, installed and restarted by the
   * server as a task; followed here until it ends, then the new version is said and shown.
   */
  const update = useCallback(
    (service: InstalledService) =>
      exclusive(service.id, 'update', async () => {
        const name = serviceTitle(service);
        try {
          const id = integerIdOf(service.id);
          const started = await call(routes.services.updatePackage, { params: { id }, notify: false });
          notify.success(t('toasts.updateStartedTitle'), t('toasts.updateStarted', { name }));
          let version = '';
          let alreadyLatest = false;
          const outcome = await new Promise<InstallOutcome>((resolve) => {
            pollInstallStatus(() => fetchInstallStatus(started.task_id), resolve, {
              intervalMs: UPDATE_POLL_INTERVAL_MS,
              maxAttempts: UPDATE_POLL_MAX_ATTEMPTS,
              onStatus: (status) => {
                if (status.version) version = status.version;
                if (status.already_latest === true) alreadyLatest = true;
              },
            });
          });
          // The newest release was already running: nothing was reinstalled, and the toast says so.
          if (outcome.kind === 'completed' && alreadyLatest)
            notify.success(t('toasts.alreadyLatestTitle'), t('toasts.alreadyLatest', { name, version }));
          else if (outcome.kind === 'completed') notify.success(t('toasts.updateSuccessful'), t('toasts.updatedTo', { name, version }));
          else if (outcome.kind === 'failed') notify.error(t('toasts.updateFailed'), outcome.reason || t('install.failedUnknown'));
          else notify.error(t('toasts.updateFailed'), t('install.timeout', { name }));
        } catch (err) {
          showFailure(err, t, { failed: t('toasts.updateFailed'), error: t('toasts.updateFailed'), fallback: t('errors.unknown') });
        } finally {
          void refreshServices(queryClient);
        }
      }),
    [exclusive, queryClient, t],
  );

  return { busy, toggle, checkHealth, reconnect, uninstall, update };
}
