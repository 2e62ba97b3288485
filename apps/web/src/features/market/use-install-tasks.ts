import { useQueryClient } from '@tanstack/react-query';
import { type InstallResult, type MarketSourceName, routes } from '@toolport/contract';
import { useCallback, useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { ApiError, call } from '../../lib/api';
import { showFailure } from '../../lib/failure';
import { refreshServices } from '../../lib/installed-services';
import { notify } from '../../lib/notify';
import { fetchInstallStatus, type InstallOutcome, pollInstallStatus, requiredEnvVarsOf } from '../installs';
import { missingRequiredVars, varsNamed } from './env-vars';
import { FALLBACK_VERSION, isMarketSource, type MarketEnvVar, type MarketItem } from './market-item';
import { refreshMarket } from './use-market-queries';
import type { Tick } from './use-success-ticks';

/** Marketplace install-status polling (docs/console.md §9). */
export const MARKET_POLL_INTERVAL_MS = 5_000;

/** The install task of one card, keyed by its id (docs/console.md §3, §4). */
export interface InstallTask {
  serviceId: string;
  status: 'idle' | 'installing' | 'success' | 'error';
  logs: string[];
  error: string;
  taskId?: string;
}

export interface InstallOptions {
  /** Values the user already gave, sent with the install. */
  values?: Record<string, string>;
  /** Check the package's variables first (the detail view): missing ones open the modal before anything is sent. */
  checkVars?: boolean;
  /** Runs when the log dialog is closed after a success (the detail view's toast and reload). */
  onFinished?(): void;
}

/** The missing-variable modal: which card, which variables, and what was given already. */
export interface EnvPrompt {
  item: MarketItem;
  vars: MarketEnvVar[];
  options: InstallOptions;
}

const installRequest = (item: MarketItem, source: MarketSourceName, values: Record<string, string>) => ({
  source_type: 'marketplace' as const,
  package_name: item.packageName,
  package_manager: source,
  version: item.version === FALLBACK_VERSION ? '' : item.version,
  user_provided_env_vars: values,
  display_name: item.name,
  service_description: item.description,
});

/**
 * The marketplace install task state machine (docs/console.md §4): idle → installing → success or error,
 * with the missing-variable modal and the live log dialog. One install per card at a time; polling
 * every 5 s until the server's task is completed or failed; a task can be cancelled, which stops it.
 */
export function useInstallTasks(showTick: (id: string, tick: Tick) => void) {
  const { t } = useTranslation('market');
  const queryClient = useQueryClient();
  const [tasks, setTasks] = useState<Record<string, InstallTask>>({});
  const [envPrompt, setEnvPrompt] = useState<EnvPrompt | null>(null);
  /** The card whose log dialog is open; stays set, with the task's last state, while the dialog animates out. */
  const [progress, setProgress] = useState<{ item: MarketItem; options: InstallOptions; last?: InstallTask } | null>(null);
  const [progressOpen, setProgressOpen] = useState(false);
  // State is for rendering; these guard against a second click before React re-renders.
  const running = useRef(new Set<string>());
  const polls = useRef(new Map<string, () => void>());

  useEffect(() => {
    const pending = polls.current;
    return () => {
      for (const stop of pending.values()) stop();
      pending.clear();
    };
  }, []);

  const patch = useCallback((id: string, change: Partial<InstallTask>) => {
    setTasks((all) => ({
      ...all,
      [id]: { serviceId: id, status: 'idle', logs: [], error: '', ...all[id], ...change },
    }));
  }, []);

  const remove = useCallback((id: string) => {
    polls.current.get(id)?.();
    polls.current.delete(id);
    running.current.delete(id);
    setTasks(({ [id]: _gone, ...rest }) => rest);
  }, []);

  const succeeded = useCallback(
    (item: MarketItem) => {
      running.current.delete(item.id);
      patch(item.id, { status: 'success', error: '' });
      void refreshServices(queryClient);
      void refreshMarket(queryClient);
    },
    [patch, queryClient],
  );

  const failed = useCallback(
    (item: MarketItem, error: string) => {
      running.current.delete(item.id);
      patch(item.id, { status: 'error', error });
    },
    [patch],
  );

  const report = useCallback(
    (item: MarketItem, outcome: InstallOutcome) => {
      polls.current.delete(item.id);
      if (outcome.kind === 'completed') {
        succeeded(item);
        notify.success(t('toasts.installComplete'), t('toasts.installCompleteDescription', { name: item.name }));
        return;
      }
      if (outcome.kind === 'failed') {
        const error = outcome.reason || t('errors.installFailed');
        failed(item, error);
        notify.error(t('toasts.installFailed'), error);
        return;
      }
      // A poll the server answered with an error (or with nothing usable), or one that got no answer at all.
      const networkFailure = outcome.kind === 'checkFailed' && outcome.error instanceof ApiError && outcome.error.kind === 'network';
      const error = t(networkFailure ? 'errors.pollFailed' : 'errors.pollingFailed');
      failed(item, error);
      if (outcome.kind === 'checkFailed' && outcome.error instanceof ApiError && outcome.error.kind === 'unauthorized') return;
      notify.error(t('toasts.pollingError'), error);
    },
    [failed, succeeded, t],
  );

  const follow = useCallback(
    (item: MarketItem, taskId: string) => {
      const initiated = t('log.initiated');
      const stop = pollInstallStatus(
        () => fetchInstallStatus(taskId),
        (outcome) => report(item, outcome),
        {
          intervalMs: MARKET_POLL_INTERVAL_MS,
          maxAttempts: Number.POSITIVE_INFINITY,
          immediate: true,
          stopOnFailure: true,
          onStatus: (status) => patch(item.id, { logs: [initiated, ...(status.logs ?? [])] }),
        },
      );
      polls.current.set(item.id, stop);
    },
    [patch, report, t],
  );

  const install = useCallback(
    async (item: MarketItem, options: InstallOptions = {}): Promise<void> => {
      if (running.current.has(item.id)) return;
      if (!item.packageName || !isMarketSource(item.source)) {
        notify.error(t('toasts.error'), t('errors.serviceIdMissing'));
        return;
      }
      const values = options.values ?? {};
      if (options.checkVars) {
        const missing = missingRequiredVars(item.envVars, values);
        if (missing.length > 0) {
          setEnvPrompt({ item, vars: missing, options });
          return;
        }
      }
      running.current.add(item.id);
      polls.current.get(item.id)?.();
      setTasks((all) => ({ ...all, [item.id]: { serviceId: item.id, status: 'installing', logs: [t('log.initiated')], error: '' } }));

      let result: InstallResult;
      try {
        result = await call(routes.market.install, {
          body: installRequest(item, item.source, values),
          notify: false,
        });
      } catch (err) {
        const names = requiredEnvVarsOf(err);
        if (names.length > 0) {
          // The task waits in `installing` until the variables are given or the modal is cancelled.
          setEnvPrompt({ item, vars: varsNamed(names, item.envVars), options });
          return;
        }
        failed(item, err instanceof ApiError && err.serverMessage ? err.serverMessage : t('errors.triggerFailed'));
        if (err instanceof ApiError && err.kind === 'notFound') {
          notify.error(t('toasts.serviceNotFound'), err.serverMessage || t('errors.packageNotFound'));
        } else {
          showFailure(err, t, { failed: t('toasts.installFailed'), error: t('toasts.installError'), fallback: t('errors.startFailed') });
        }
        return;
      }

      setProgress({ item, options });
      setProgressOpen(true);
      if (result.status === 'already_installed_instance_added') {
        patch(item.id, { logs: [t('log.initiated'), t('log.instanceAdded')] });
        succeeded(item);
        return;
      }
      if (!result.task_id) {
        failed(item, t('errors.triggerFailed'));
        return;
      }
      patch(item.id, { taskId: result.task_id });
      follow(item, result.task_id);
    },
    [failed, follow, patch, succeeded, t],
  );

  /** The modal's values: the task goes back to idle and the install is tried again with them (docs/console.md §4). */
  const submitEnv = useCallback(
    (values: Record<string, string>) => {
      if (!envPrompt) return;
      const { item, options } = envPrompt;
      setEnvPrompt(null);
      running.current.delete(item.id);
      patch(item.id, { status: 'idle', logs: [], error: '' });
      void install(item, { ...options, values: { ...options.values, ...values } });
    },
    [envPrompt, install, patch],
  );

  /** Cancelling the modal sets the task back to idle and clears it. */
  const cancelEnv = useCallback(() => {
    if (envPrompt) remove(envPrompt.item.id);
    setEnvPrompt(null);
  }, [envPrompt, remove]);

  /** The log dialog closes only once the install is over; a finished task is cleared with it. */
  const closeProgress = useCallback(() => {
    if (!progress) return;
    const task = tasks[progress.item.id];
    if (task?.status === 'installing') return;
    setProgressOpen(false);
    setProgress({ ...progress, last: task });
    remove(progress.item.id);
    if (task?.status !== 'success') return;
    // The log dialog covered the card until now: its tick shows from here.
    showTick(progress.item.id, 'installed');
    progress.options.onFinished?.();
  }, [progress, remove, showTick, tasks]);

  return {
    tasks,
    install,
    cancel: remove,
    envPrompt,
    submitEnv,
    cancelEnv,
    progress: progress && { item: progress.item, task: tasks[progress.item.id] ?? progress.last, open: progressOpen },
    closeProgress,
  };
}
