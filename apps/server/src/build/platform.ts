import { DatabaseGate } from '../db/availability.js';
import { ConfigResync, EventRelay } from '../infra/event-relay.js';
import { Leader } from '../infra/leader.js';
import { Metrics } from '../infra/metrics.js';
import type { RedisHub } from '../infra/redis.js';
import { ServiceLog } from '../infra/service-log.js';
import { Tracing } from '../infra/tracing.js';
import { createMeteringModule, type MeteringModule } from '../modules/metering/index.js';
import { VERSION } from '../version.js';
import type { Core } from './core.js';

/**
 * What the server's modules and gateway stand on beside the core: metrics, the database gate, metering,
 * the service log, tracing, and with REDIS_URL the shared Redis, the event relay and the leader election.
 */
export interface Platform {
  metrics: Metrics;
  /** Reads on the call path are bounded, and answered from memory while the database is away (decision 0043). */
  gate: DatabaseGate;
  metering: MeteringModule;
  serviceLog: ServiceLog;
  tracing: Tracing;
  /** The Redis all replicas share, when REDIS_URL is set (infra/redis.ts); undefined for one instance. */
  redis?: RedisHub;
  /** Whether this replica runs the cluster-wide periodic jobs (infra/leader.ts); always leads without Redis. */
  leader: Leader;
}

/** Builds the platform on `core`, each part registered on its lifecycle as it is built. */
export async function buildPlatform(core: Core): Promise<Platform> {
  const { config, logger, db, secrets, events, options, lifecycle } = core;
  const metrics = new Metrics();
  const gate = new DatabaseGate(db);
  lifecycle.add({ name: 'database gate', close: () => gate.close() });
  const metering = await createMeteringModule({
    db,
    logger,
    config,
    gate,
    timeZone: () => options.service.get('TimeZone'),
    onRecordsDropped: (n) => metrics.requestRecordsDropped(n),
  });
  // Pending counters and request records reach the database before it closes.
  lifecycle.add({ name: 'metering', close: () => metering.close() });
  const serviceLog = new ServiceLog(db, logger);
  lifecycle.add({ name: 'service log', close: () => serviceLog.flush() });
  const tracing = await Tracing.create(config.tracing, VERSION, logger);
  // Spans still buffered reach the collector (bounded: a collector that is away holds nothing up).
  lifecycle.add({ name: 'tracing', close: () => tracing.shutdown() });
  // With REDIS_URL, configuration events, revocations, legacy SSE POSTs and login limits are shared too. The
  // Redis client is loaded only then: a single instance (and most test files) never needs it.
  const redis = config.redisUrl
    ? await (await import('../infra/redis.js')).RedisHub.connect({
        url: config.redisUrl,
        namespace: config.redisPrefix,
        logger,
        signingKey: secrets.replicaKey,
      })
    : undefined;
  if (redis) lifecycle.add({ name: 'redis', close: () => redis.close() });
  // A preference another replica changed is read again before its listeners hear of it.
  events.beforeReceive((event) => (event.type === 'option.changed' ? options.service.load() : undefined));
  const relay = redis
    ? await EventRelay.start(redis, events, logger, new ConfigResync({ db, options: options.service, events }))
    : undefined;
  if (relay) lifecycle.add({ name: 'event relay', close: () => relay.stop() });
  // Cluster-wide periodic jobs run on one replica (docs/decisions/0017-leader-election.md). Its close (giving
  // leadership up) is registered by build/server-parts.ts after the HTTP server's, so that it comes first.
  const report = (leading: boolean) => metrics.leaderChanged(leading);
  const leader = redis ? await Leader.start(redis, { logger, report }) : Leader.solo({ logger, report });
  return { metrics, gate, metering, serviceLog, tracing, redis, leader };
}
