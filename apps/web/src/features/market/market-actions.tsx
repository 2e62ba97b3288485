import { createContext, type ReactNode, useContext, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Outlet } from 'react-router';
import { ConfirmDialog } from '../../components/ui/alert-dialog';
import { EnvVarDialog } from './env-var-dialog';
import { InstallLogDialog } from './install-log-dialog';
import type { MarketItem } from './market-item';
import { type InstallOptions, type InstallTask, useInstallTasks } from './use-install-tasks';
import { type Tick, useSuccessTicks } from './use-success-ticks';
import { type UninstallFrom, type UninstallTask, useUninstallTasks } from './use-uninstall-tasks';

export interface MarketActions {
  tasks: Record<string, InstallTask>;
  uninstalls: Record<string, UninstallTask>;
  ticks: Record<string, Tick>;
  install(item: MarketItem, options?: InstallOptions): void;
  /** Stops following a task and forgets it. */
  cancel(id: string): void;
  /** Asks for confirmation, then uninstalls; `onDone` runs after a success. */
  requestUninstall(item: MarketItem, from: UninstallFrom, onDone?: () => void): void;
}

const MarketActionsContext = createContext<MarketActions | null>(null);

export function useMarketActions(): MarketActions {
  const actions = useContext(MarketActionsContext);
  if (!actions) throw new Error('useMarketActions needs a MarketActionsProvider (the market route provides one)');
  return actions;
}

interface UninstallRequest {
  item: MarketItem;
  from: UninstallFrom;
  onDone?: () => void;
}

/**
 * What the list and the detail view share (docs/console.md §2.10, §4): the install and uninstall tasks,
 * the tick overlays and the dialogs (missing variables, install log, uninstall confirmation). Tasks
 * survive moving between the list and a package's details; leaving the marketplace stops their polling.
 */
export function MarketActionsProvider({ children }: { children: ReactNode }) {
  const { t } = useTranslation('market');
  const { ticks, show } = useSuccessTicks();
  const installs = useInstallTasks(show);
  const { uninstalls, uninstall } = useUninstallTasks(show);
  // The request stays set while the confirmation closes, so its text does not change under the animation.
  const [confirm, setConfirm] = useState<UninstallRequest | null>(null);
  const [confirmOpen, setConfirmOpen] = useState(false);

  const { tasks, install, cancel } = installs;
  const actions = useMemo<MarketActions>(
    () => ({
      tasks,
      uninstalls,
      ticks,
      install: (item, options) => void install(item, options),
      cancel,
      requestUninstall: (item, from, onDone) => {
        setConfirm({ item, from, onDone });
        setConfirmOpen(true);
      },
    }),
    [tasks, uninstalls, ticks, install, cancel],
  );

  const progress = installs.progress;
  return (
    <MarketActionsContext.Provider value={actions}>
      {children}
      {installs.envPrompt && (
        <EnvVarDialog
          key={`${installs.envPrompt.item.id}:${installs.envPrompt.vars.map((v) => v.name).join(',')}`}
          name={installs.envPrompt.item.name}
          vars={installs.envPrompt.vars}
          onSubmit={installs.submitEnv}
          onCancel={installs.cancelEnv}
        />
      )}
      {progress?.task && (
        <InstallLogDialog name={progress.item.name} task={progress.task} open={progress.open} onClose={installs.closeProgress} />
      )}
      <ConfirmDialog
        open={confirmOpen}
        onOpenChange={setConfirmOpen}
        title={t('uninstall.title')}
        description={
          confirm?.from === 'detail'
            ? t('uninstall.detailDescription', { name: confirm.item.name })
            : t('uninstall.description', { name: confirm?.item.name ?? '' })
        }
        confirmLabel={t('uninstall.confirm')}
        cancelLabel={t('uninstall.cancel')}
        destructive
        onConfirm={() => {
          if (!confirm) return;
          void uninstall(confirm.item, confirm.from).then((done) => done && confirm.onDone?.());
        }}
      />
    </MarketActionsContext.Provider>
  );
}

/** The `market` route's element: the list and the detail view render inside the shared actions. */
export function MarketLayout() {
  return (
    <MarketActionsProvider>
      <Outlet />
    </MarketActionsProvider>
  );
}
