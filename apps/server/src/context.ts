import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { Db, Engine } from './db/db.js';
import type { ServiceCatalog } from './gateway/catalog.js';
import type { Gateway } from './gateway/index.js';
import type { Meter } from './gateway/meter.js';
import type { LocalPackages } from './gateway/upstream/pool.js';
import type { Principals } from './http/principals.js';
import type { ConfigEvents } from './infra/events.js';
import type { Leader } from './infra/leader.js';
import type { Metrics } from './infra/metrics.js';
import type { RedisHub } from './infra/redis.js';
import type { Secrets } from './infra/secrets.js';
import type { ServiceLog } from './infra/service-log.js';
import type { Tracing } from './infra/tracing.js';
import type { AuthService } from './modules/auth/service.js';
import type { HistoryRetention } from './modules/history/retention.js';
import type { OptionsService } from './modules/options/service.js';
import type { UsersRepo } from './modules/users/repo.js';
import type { UsersService } from './modules/users/service.js';

/** What every module is built from: created once in app.ts, passed down explicitly. */
export interface AppContext {
  config: Config;
  db: Db;
  engine: Engine;
  logger: Logger;
  secrets: Secrets;
  events: ConfigEvents;
  /** The Redis all replicas share, when REDIS_URL is set (infra/redis.ts); undefined for one instance. */
  redis?: RedisHub;
  /** Whether this replica runs the cluster-wide periodic jobs (infra/leader.ts); always leads without Redis. */
  leader: Leader;
  usersRepo: UsersRepo;
  principals: Principals;
  options: OptionsService;
  /** Set right after the context is made: it needs the context itself. */
  auth: AuthService;
  /** Set right after `auth`: it revokes refresh tokens through it. */
  users: UsersService;
  /** The service log table writer (installs, process stderr, upstream failures). */
  serviceLog: ServiceLog;
  /** Configuration as the gateway reads it (modules/services/catalog.ts). */
  catalog: ServiceCatalog;
  /** Daily limits, counters and request records (gateway/metering.ts). */
  meter: Meter;
  /** The retention purge of request records, service logs and install logs (modules/history/retention.ts). */
  retention: HistoryRetention;
  /** Several replicas: local installs of the packages installed through another one (modules/market/install-replica.ts). */
  packages?: LocalPackages;
  /** The MCP data plane: proxy routes, sessions, upstream pool (gateway/index.ts). */
  gateway: Gateway;
  /** Prometheus metrics of this app, served at /metrics (infra/metrics.ts). */
  metrics: Metrics;
  /** OpenTelemetry spans, when OTEL_EXPORTER_OTLP_ENDPOINT is set (infra/tracing.ts). */
  tracing: Tracing;
  startedAt: number;
  version: string;
}
