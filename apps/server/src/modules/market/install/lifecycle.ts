import type { Logger } from 'pino';
import type { Db } from '../../../db/db.js';
import type { ConfigEvents } from '../../../infra/events.js';
import type { Leader } from '../../../infra/leader.js';
import type { Metrics } from '../../../infra/metrics.js';
import type { Secrets } from '../../../infra/secrets.js';
import type { ServiceLog } from '../../../infra/service-log.js';
import type { HealthChecks, HealthProbe, PersonalEnvs, ServiceRows, ServicesService } from '../../services/index.js';
import type { MarketService } from '../search/service.js';
import { CustomInstalls } from './custom.js';
import { MarketInstaller } from './installer.js';
import { InstallJobs, type InstallTimeouts } from './jobs.js';
import { recoverInterruptedTasks, SWEEP_INTERVAL_MS } from './recovery.js';
import type { ReplicaInstalls } from './replica.js';
import { InstallTasks } from './tasks.js';
import { Uninstaller } from './uninstall.js';

export interface InstallLifecycleDeps {
  db: Db;
  secrets: Secrets;
  events: ConfigEvents;
  serviceLog: Pick<ServiceLog, 'write' | 'redact' | 'registerSecrets'>;
  metrics: Pick<Metrics, 'installStarted' | 'installEnded'>;
  logger: Logger;
  /** Interrupted tasks are swept by one replica, the leader. */
  leader: Pick<Leader, 'runs'>;
  dataDir: string;
  pypiIndex: string;
  services: ServicesService;
  rows: ServiceRows;
  health: HealthChecks;
  personal: PersonalEnvs;
  market: MarketService;
  gateway: HealthProbe;
  /** With several replicas: this replica's own installs of the packages installed through another. */
  replicaInstalls?: ReplicaInstalls;
  timeouts?: InstallTimeouts;
  /** How long creating a remote waits for its first health check (default 15 s). */
  firstCheckWaitMs?: number;
}

/** The one owner of how services come and go: tasks, jobs, custom installs, uninstalls, the sweep of interrupted tasks. */
export interface InstallLifecycle {
  tasks: InstallTasks;
  jobs: InstallJobs;
  installer: MarketInstaller;
  custom: CustomInstalls;
  uninstaller: Uninstaller;
  /** Recovers the tasks a stopped server left unfinished, now and every 30 s, and catches up on this replica's installs. */
  start(): Promise<void>;
  /** Stops running installs (recorded as failed) and lets background work finish writing. */
  close(): Promise<void>;
}

export function createInstallLifecycle(deps: InstallLifecycleDeps): InstallLifecycle {
  const { rows, logger, dataDir } = deps;
  const tasks = new InstallTasks(deps.db);
  const jobs = new InstallJobs({
    tasks,
    rows,
    gateway: deps.gateway,
    events: deps.events,
    serviceLog: deps.serviceLog,
    metrics: deps.metrics,
    logger,
    dataDir,
    registries: { npm: () => deps.market.sources.npmRegistryUrl.get(), pypi: deps.pypiIndex },
    timeouts: deps.timeouts,
  });
  const installer = new MarketInstaller({
    market: deps.market,
    addresses: deps.services,
    tasks,
    jobs,
    rows,
    personal: deps.personal,
    secrets: deps.secrets,
    dataDir,
  });
  const custom = new CustomInstalls({
    services: deps.services,
    health: deps.health,
    tasks,
    installer,
    serviceLog: deps.serviceLog,
    logger,
    ...(deps.firstCheckWaitMs === undefined ? {} : { firstCheckWaitMs: deps.firstCheckWaitMs }),
  });
  const uninstaller = new Uninstaller({ services: deps.services, rows, dataDir, logger });

  let timer: NodeJS.Timeout | undefined;
  // One replica sweeps (the leader; nobody while Redis is away): each interrupted task is noticed once.
  const sweep = async () => {
    if (!deps.leader.runs('exclusive')) return;
    await recoverInterruptedTasks({ tasks, rows, dataDir, logger }).catch((err) =>
      logger.error({ err }, 'recovering interrupted install tasks failed'),
    );
  };
  return {
    tasks,
    jobs,
    installer,
    custom,
    uninstaller,
    async start() {
      await sweep();
      timer = setInterval(() => void sweep(), SWEEP_INTERVAL_MS);
      timer.unref();
      void deps.replicaInstalls?.catchUp();
    },
    async close() {
      clearInterval(timer);
      await deps.replicaInstalls?.close();
      await jobs.close();
      await custom.drain();
      tasks.close();
    },
  };
}
