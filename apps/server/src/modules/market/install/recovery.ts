import type { Logger } from 'pino';
import { translate } from '../../../i18n/index.js';
import type { MessageData } from '../../../i18n/localised-error.js';
import type { ServiceRows } from '../../services/index.js';
import { disableService, discardService } from './jobs.js';
import { type InstallTasks, TASK_STALE_MS } from './tasks.js';

/** The reason of an interrupted task, said in each reader's language; `INTERRUPTED_REASON` is its English (logs). */
const INTERRUPTED: MessageData = { key: 'install.interrupted', params: {} };
export const INTERRUPTED_REASON = translate('en', INTERRUPTED.key);

/** How often unfinished tasks are looked at: a replica that died mid-install is noticed within a minute or so. */
export const SWEEP_INTERVAL_MS = 30_000;

/**
 * Tasks left `pending` or `installing` by a process that is gone (their heartbeat stopped) are
 * marked failed with a clear reason. A marketplace install's half-made service (still disabled,
 * still `installing`) is deleted with its files, as a failure in the running process would have.
 * Returns how many tasks were recovered.
 */
export async function recoverInterruptedTasks(
  deps: { tasks: InstallTasks; rows: ServiceRows; dataDir: string; logger: Logger },
  now = Date.now(),
): Promise<number> {
  const { tasks, rows } = deps;
  const before = now - TASK_STALE_MS;
  const stale = await tasks.stale(before);
  let recovered = 0;
  for (const task of stale) {
    if (!(await tasks.claim(task.id, before, now))) continue;
    recovered += 1;
    if ((task.kind === 'marketplace' || task.kind === 'custom') && task.serviceId !== null) {
      const row = await rows.byId(task.serviceId);
      if (row && row.enabled === 0 && row.health_status === 'installing') {
        if (task.kind === 'marketplace') {
          await discardService(deps, row.id, row.install_dir);
          await tasks.detachService(task.id);
        } else {
          // A custom `npx`/`uvx` service stays, disabled with the reason, as a failure would leave it.
          await disableService(deps, row.id, row.install_dir, INTERRUPTED);
        }
      }
    }
    // A batch's log holds only its progress events; its stream ends the batch with what it has.
    if (task.kind !== 'batch') await tasks.log(task.id, INTERRUPTED_REASON);
    await tasks.finish(task.id, 'failed', INTERRUPTED_REASON, { reason: INTERRUPTED });
  }
  if (recovered > 0) deps.logger.warn({ count: recovered }, 'install tasks interrupted by a stopped server were marked failed');
  return recovered;
}
