import { envelope, InstallRequest, InstallResult } from '@toolport/contract';
import type { AppContext } from '../../../context.js';
import { principalOf } from '../../../http/guard.js';
import { ok } from '../../../http/locale.js';
import type { ZodApi } from '../../index.js';
import { ServicesRepo } from '../../services/repo.js';
import type { MarketService } from '../search/service.js';
import { MarketInstaller } from './installer.js';
import { InstallJobs } from './jobs.js';
import { recoverInterruptedTasks, SWEEP_INTERVAL_MS } from './recovery.js';
import { ReplicaInstalls } from './replica.js';
import { InstallTasks } from './tasks.js';

const tags = ['market'];

/** What the install, batch import and CLI paths share: one task store, one set of running jobs. */
export interface InstallKit {
  installer: MarketInstaller;
  tasks: InstallTasks;
  repo: ServicesRepo;
  jobs: InstallJobs;
}

export function createInstallKit(ctx: AppContext, market: MarketService): InstallKit {
  const tasks = new InstallTasks(ctx.db);
  const repo = new ServicesRepo(ctx.db);
  const jobs = new InstallJobs(ctx, tasks, repo, { npm: () => market.sources.npmRegistryUrl.get(), pypi: ctx.config.registries.pypiIndex });
  return { installer: new MarketInstaller(ctx, market, tasks, jobs, repo), tasks, repo, jobs };
}

/** `install_or_add_service`, and the sweep that fails tasks a stopped server left unfinished. */
export async function installRoutes(api: ZodApi, ctx: AppContext, market: MarketService): Promise<InstallKit> {
  const kit = createInstallKit(ctx, market);
  // One replica sweeps (the leader; nobody while Redis is away): each interrupted task is noticed once.
  const sweep = async () => {
    if (!ctx.leader.runs('exclusive')) return;
    await recoverInterruptedTasks(ctx, kit.tasks, kit.repo).catch((err) =>
      ctx.logger.error({ err }, 'recovering interrupted install tasks failed'),
    );
  };
  await sweep();
  const timer = setInterval(() => void sweep(), SWEEP_INTERVAL_MS);
  timer.unref();
  // Several replicas, each with its own DATA_DIR: what one installed, each installs for itself.
  const replicaInstalls = ctx.redis
    ? new ReplicaInstalls(ctx, market, { npm: () => market.sources.npmRegistryUrl.get(), pypi: ctx.config.registries.pypiIndex })
    : undefined;
  ctx.packages = replicaInstalls;
  void replicaInstalls?.catchUp();
  api.addHook('onClose', async () => {
    clearInterval(timer);
    await replicaInstalls?.close();
    await kit.jobs.close();
    kit.tasks.close();
  });

  api.post(
    '/mcp_market/install_or_add_service',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'Install a package as a service (a durable task), or add the caller’s values to the installed one',
        description:
          'Missing required variables answer 400 with data.required_env_vars. Poll GET /mcp_market/install_status/{task_id} for the log.',
        body: InstallRequest,
        response: { 200: envelope(InstallResult) },
      },
    },
    async (req, reply) => {
      const result = await kit.installer.installOrAdd(principalOf(req).id, req.body);
      const message =
        result.status === 'already_installed_instance_added'
          ? req.t('market.instance_added', { name: result.service_name })
          : req.t('market.install_started', { name: result.service_name });
      return ok(reply, result, message);
    },
  );
  return kit;
}
