import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import type { Db } from '../../db/db.js';
import type { ServiceCatalog } from '../../gateway/catalog.js';
import type { ZodApi } from '../../http/api.js';
import type { Principals } from '../../http/principals.js';
import type { ConfigEvents } from '../../infra/events.js';
import type { Leadership } from '../../infra/leader.js';
import type { Metrics } from '../../infra/metrics.js';
import type { RedisHub } from '../../infra/redis.js';
import type { Secrets } from '../../infra/secrets.js';
import type { ServiceLog } from '../../infra/service-log.js';
import type { HealthProbe, ServiceRows, ServicesModule } from '../services/index.js';
import { BatchImporter, type SettingsTransfer } from './batch/importer.js';
import { ProgressStreams } from './batch/progress.js';
import { batchRoutes } from './batch/routes.js';
import { exportRoutes, type SettingsExport } from './export/routes.js';
import type { InstallTimeouts } from './install/jobs.js';
import { createInstallLifecycle, type InstallLifecycle } from './install/lifecycle.js';
import { ReplicaInstalls } from './install/replica.js';
import { installRoutes } from './install/routes.js';
import { searchRoutes } from './search/routes.js';
import { MarketService } from './search/service.js';
import type { MarketSources } from './sources/index.js';

export type { ReplicaInstalls } from './install/replica.js';
export { createMarketSources, type MarketSources } from './sources/index.js';

/** What this replica's installs of packages installed through another replica are built from: before the gateway. */
export interface ReplicaInstallsDeps {
  config: Pick<Config, 'dataDir' | 'registries'>;
  /** Only several replicas (REDIS_URL) install for each other. */
  redis: Pick<RedisHub, 'replicaId'> | undefined;
  events: ConfigEvents;
  catalog: Pick<ServiceCatalog, 'byId' | 'enabledServices'>;
  rows: Pick<ServiceRows, 'byId'>;
  serviceLog: Pick<ServiceLog, 'write' | 'redact'>;
  logger: Logger;
  sources: MarketSources;
}

/**
 * Several replicas, each with its own DATA_DIR: what one installed, each installs for itself before
 * its process starts there. The gateway's pool waits for these (gateway/upstream/pool.ts); one
 * instance, nothing without Redis.
 */
export function createReplicaInstalls(deps: ReplicaInstallsDeps): ReplicaInstalls | undefined {
  if (!deps.redis) return undefined;
  return new ReplicaInstalls({
    replicaId: deps.redis.replicaId,
    dataDir: deps.config.dataDir,
    events: deps.events,
    catalog: deps.catalog,
    rows: deps.rows,
    serviceLog: deps.serviceLog,
    logger: deps.logger,
    sources: deps.sources,
    registries: { npm: () => deps.sources.npmRegistryUrl.get(), pypi: deps.config.registries.pypiIndex },
  });
}

/** Everything the marketplace may touch. */
export interface MarketDeps {
  db: Db;
  config: Pick<Config, 'dataDir' | 'registries'>;
  logger: Logger;
  secrets: Secrets;
  events: ConfigEvents;
  serviceLog: Pick<ServiceLog, 'write' | 'redact' | 'registerSecrets'>;
  metrics: Pick<Metrics, 'installStarted' | 'installEnded'>;
  /** Interrupted install tasks are swept by the leader only. */
  leader: Pick<Leadership, 'runs'>;
  /** The batch progress stream checks an admin's access token itself (EventSource sends no headers). */
  principals: Pick<Principals, 'byId'>;
  /** The catalog of services: the rows installs create and remove, custom-service rules, health, personal values. */
  services: Pick<ServicesModule, 'services' | 'rows' | 'health' | 'personal'>;
  /** The registries, built once (createMarketSources) and shared with the replica installs. */
  sources: MarketSources;
  /** From createReplicaInstalls: only with several replicas. */
  replicaInstalls: ReplicaInstalls | undefined;
  /** The gateway: a new service's MCP handshake is its health check. */
  gateway: HealthProbe;
  /** Tests shorten them. */
  timeouts?: InstallTimeouts;
  /** Overrides, access and groups in exports and batch imports (the exposure module's ExposureTransfer). */
  transfer?: SettingsTransfer & SettingsExport;
}

export interface MarketModule {
  search: MarketService;
  installs: InstallLifecycle;
  batch: BatchImporter;
  routes(api: ZodApi): Promise<void>;
  /** Recovers the install tasks a stopped server left unfinished (and keeps doing so), and catches up on replica installs. */
  start(): Promise<void>;
  close(): Promise<void>;
}

/** The marketplace: search and package details, the install lifecycle, batch import and export. */
export function createMarketModule(deps: MarketDeps): MarketModule {
  const { services, config, logger } = deps;
  const search = new MarketService(deps.sources, services.rows);
  const installs = createInstallLifecycle({
    db: deps.db,
    secrets: deps.secrets,
    events: deps.events,
    serviceLog: deps.serviceLog,
    metrics: deps.metrics,
    logger,
    leader: deps.leader,
    dataDir: config.dataDir,
    pypiIndex: config.registries.pypiIndex,
    services: services.services,
    rows: services.rows,
    health: services.health,
    personal: services.personal,
    market: search,
    gateway: deps.gateway,
    replicaInstalls: deps.replicaInstalls,
    timeouts: deps.timeouts,
  });
  const batch = new BatchImporter({ installs, rows: services.rows, logger, transfer: deps.transfer });
  const streams = new ProgressStreams({ tasks: installs.tasks, secrets: deps.secrets, principals: deps.principals, logger });
  return {
    search,
    installs,
    batch,
    async routes(api) {
      await searchRoutes(api, search);
      await installRoutes(api, installs);
      await batchRoutes(api, { importer: batch, streams });
      await exportRoutes(api, { rows: services.rows, secrets: deps.secrets, dataDir: config.dataDir, settings: deps.transfer });
    },
    start: () => installs.start(),
    close: () => installs.close(),
  };
}
