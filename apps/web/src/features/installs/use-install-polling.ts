import { useQueryClient } from '@tanstack/react-query';
import { type InstallStatus, routes } from '@toolport/contract';
import { useCallback } from 'react';
import { useTranslation } from 'react-i18next';
import { call, messageOf } from '../../lib/api';
import { refreshServices } from '../../lib/installed-services';
import { notify } from '../../lib/notify';
import { type InstallOutcome, pollInstallStatus } from './install-polling';

/** GET /mcp_market/install_status/{taskId}, quiet: pollers report a failed poll their own way. */
export const fetchInstallStatus = (taskId: string): Promise<InstallStatus> =>
  call(routes.services.installStatus, { params: { taskId }, notify: false });

/**
 * Follows a custom stdio install to its end (docs/console.md §4) with the toasts of §8. Polling goes on
 * when the user leaves the page: the install runs on the server anyway and its result is worth a toast.
 */
export function useInstallPolling() {
  const { t } = useTranslation('services');
  const queryClient = useQueryClient();

  const report = useCallback(
    (name: string, outcome: InstallOutcome) => {
      switch (outcome.kind) {
        case 'completed':
          notify.success(t('install.successTitle'), t('install.success', { name }));
          break;
        case 'failed':
          notify.error(t('install.failedTitle'), outcome.reason || t('install.failedUnknown'));
          break;
        case 'timeout':
          notify.error(t('install.timeoutTitle'), t('install.timeout', { name }));
          break;
        case 'statusTimeout':
          notify.error(t('install.statusTimeoutTitle'), t('install.statusTimeout', { name }));
          break;
        case 'checkFailed':
          notify.error(t('install.checkFailedTitle'), messageOf(outcome.error, t('install.checkFailed', { name })));
          break;
      }
      void refreshServices(queryClient);
    },
    [queryClient, t],
  );

  return useCallback(
    (taskId: string, name: string) =>
      pollInstallStatus(
        // A failed poll is retried and reported once at the end, not with a toast every 10 s.
        () => fetchInstallStatus(taskId),
        (outcome) => report(name, outcome),
      ),
    [report],
  );
}
