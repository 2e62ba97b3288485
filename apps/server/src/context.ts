import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { Db } from './db/db.js';
import type { ServiceCatalog } from './gateway/catalog.js';
import type { Gateway } from './gateway/index.js';
import type { LocalPackages } from './gateway/upstream/pool.js';
import type { Principals } from './http/principals.js';
import type { ConfigEvents } from './infra/events.js';
import type { Leader } from './infra/leader.js';
import type { Metrics } from './infra/metrics.js';
import type { RedisHub } from './infra/redis.js';
import type { Secrets } from './infra/secrets.js';
import type { ServiceLog } from './infra/service-log.js';
import type { OptionsService } from './modules/options/index.js';

/**
 * Transitional: what the marketplace and services modules are still built from, until they get
 * factories with declared dependencies like the other modules. Only app.ts makes one
 * (`legacyModuleContext`); nothing else should take it.
 */
export interface AppContext {
  config: Config;
  db: Db;
  logger: Logger;
  secrets: Secrets;
  events: ConfigEvents;
  /** The Redis all replicas share, when REDIS_URL is set (infra/redis.ts); undefined for one instance. */
  redis?: RedisHub;
  /** Whether this replica runs the cluster-wide periodic jobs (infra/leader.ts). */
  leader: Leader;
  principals: Principals;
  options: OptionsService;
  /** The service log table writer (installs, process stderr, upstream failures). */
  serviceLog: ServiceLog;
  /** Configuration as the gateway reads it (modules/services/catalog.ts). */
  catalog: ServiceCatalog;
  /** Several replicas: set by the marketplace's install routes, then handed to the gateway (modules/market/install-replica.ts). */
  packages?: LocalPackages;
  /** The gateway's health check, which is built after these modules' routes. */
  gateway: Pick<Gateway, 'checkHealth'>;
  metrics: Metrics;
}
