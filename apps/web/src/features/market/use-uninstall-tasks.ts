import { useQueryClient } from '@tanstack/react-query';
import { routes } from '@toolport/contract';
import { useCallback, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { call, messageOf } from '../../lib/api';
import { LocalCheckError, showFailure } from '../../lib/failure';
import { refreshServices, removeService } from '../../lib/installed-services';
import { notify } from '../../lib/notify';
import { uninstallIdOf } from '../../lib/service-ids';
import type { MarketItem } from './market-item';
import { marketKeys, markUninstalled } from './use-market-queries';
import type { Tick } from './use-success-ticks';

/** The uninstall task of one card (docs/console.md §3): uninstalling, then idle or error. */
export interface UninstallTask {
  status: 'uninstalling' | 'idle' | 'error';
  error: string;
}

/** Where an uninstall was asked for: the two places word the confirmation and the toast differently. */
export type UninstallFrom = 'card' | 'detail';

/**
 * Uninstall from a card or the detail view (docs/console.md §4): on success the service leaves the installed
 * list, its results read "not installed" and the details are reloaded; on failure the task keeps the error.
 * `uninstall` resolves to whether it worked.
 */
export function useUninstallTasks(showTick: (id: string, tick: Tick) => void) {
  const { t } = useTranslation('market');
  const queryClient = useQueryClient();
  const [uninstalls, setUninstalls] = useState<Record<string, UninstallTask>>({});
  const running = useRef(new Set<string>());

  const set = useCallback((id: string, task: UninstallTask) => setUninstalls((all) => ({ ...all, [id]: task })), []);

  const uninstall = useCallback(
    async (item: MarketItem, from: UninstallFrom): Promise<boolean> => {
      if (running.current.has(item.id)) return false;
      let serviceId: number;
      try {
        serviceId = uninstallIdOf(item);
      } catch (err) {
        const missingId = err instanceof LocalCheckError && err.messageKey === 'errors.uninstallIdMissing';
        showFailure(err, t, {
          failed: t(missingId ? 'toasts.cannotUninstall' : 'toasts.uninstallFailed'),
          error: t('toasts.uninstallError'),
          fallback: t('errors.uninstallFailed'),
        });
        return false;
      }
      running.current.add(item.id);
      set(item.id, { status: 'uninstalling', error: '' });
      try {
        await call(routes.services.uninstall, { body: { service_id: serviceId }, notify: false });
      } catch (err) {
        set(item.id, { status: 'error', error: messageOf(err, t('errors.uninstallFailed')) });
        showFailure(err, t, {
          failed: t('toasts.uninstallFailed'),
          error: t('toasts.uninstallError'),
          fallback: t('errors.uninstallFailed'),
        });
        return false;
      } finally {
        running.current.delete(item.id);
      }
      set(item.id, { status: 'idle', error: '' });
      removeService(queryClient, serviceId);
      markUninstalled(queryClient, serviceId);
      showTick(item.id, 'uninstalled');
      const title = from === 'detail' ? t('toasts.serviceUninstalled') : t('toasts.uninstallComplete');
      notify.success(title, t('toasts.uninstalledDescription', { name: item.name }));
      void refreshServices(queryClient);
      void queryClient.invalidateQueries({ queryKey: [...marketKeys.all, 'details'] });
      return true;
    },
    [queryClient, set, showTick, t],
  );

  return { uninstalls, uninstall };
}
