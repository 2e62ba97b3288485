import { UserStatus } from '@toolport/contract';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Db } from '../db/db.js';
import type { ConfigEvents } from '../infra/events.js';
import type { Leadership } from '../infra/leader.js';
import type { Metrics } from '../infra/metrics.js';
import type { RedisHub } from '../infra/redis.js';
import type { Secrets } from '../infra/secrets.js';
import type { Tracing } from '../infra/tracing.js';
import type { ServiceCatalog } from './catalog.js';
import { AbuseGuard } from './downstream/abuse.js';
import { CallTelemetry } from './downstream/call-telemetry.js';
import { LegacyRelay } from './downstream/legacy-relay.js';
import { ProxyAuth } from './downstream/proxy-auth.js';
import { Revocations } from './downstream/revocations.js';
import { registerProxyRoutes } from './downstream/routes.js';
import { SessionAccess } from './downstream/session-access.js';
import { DEFAULT_LIMITS, type SessionLimits, SessionRegistry } from './downstream/session-registry.js';
import { DrainingDispatcher, ProxyWork } from './drain.js';
import type { HealthResult, UpstreamPool } from './link-api.js';
import type { Meter } from './meter.js';
import { createUpstreamPool } from './upstream/index.js';
import type { LocalPackages } from './upstream/pool.js';
import type { OptionsReader, ServiceLogWriter } from './upstream/types.js';

/** The MCP data plane as the rest of the app sees it. */
export interface Gateway {
  pool: UpstreamPool;
  sessions: SessionRegistry;
  /** The proxy's abuse limits (docs/operations.md, "Abuse limits"). */
  abuse: AbuseGuard;
  checkHealth(serviceId: number): Promise<HealthResult>;
  /** Adds the /proxy/* routes and the hook that tracks proxied calls for the drain to `app`. */
  mount(app: FastifyInstance): Promise<void>;
  /**
   * Lets the proxied calls in flight finish (at most `graceMs`), then ends every session and stream
   * and stops every upstream process and connection. New requests are refused by then (Fastify answers
   * 503 while it closes).
   */
  close(graceMs?: number): Promise<void>;
}

/** Who a user is now, as far as the gateway cares: sessions of a disabled or deleted user are ended. */
export interface UserStatusLookup {
  byId(userId: number): Promise<{ status: number } | null>;
}

/**
 * Everything the gateway is built from, and all it may touch outside gateway/. The ports (catalog,
 * meter, options, principals, packages) are declared here; the modules implement them.
 */
export interface GatewayDeps {
  config: Pick<Config, 'dataDir' | 'registries' | 'abuse'>;
  /** The revoked streamable sessions' table (downstream/revocations.ts). */
  db: Db;
  catalog: ServiceCatalog;
  meter: Meter;
  options: OptionsReader;
  principals: UserStatusLookup;
  events: ConfigEvents;
  serviceLog: ServiceLogWriter;
  secrets: Secrets;
  logger: Logger;
  metrics: Metrics;
  tracing: Tracing;
  leader: Pick<Leadership, 'runs'>;
  /** The Redis all replicas share, when REDIS_URL is set. */
  redis?: RedisHub;
  /** Several replicas: installs a service's package into this replica's DATA_DIR before it starts here. */
  packages?: LocalPackages;
}

export interface GatewayOptions {
  /** Session limits (tests shorten them). */
  limits?: SessionLimits;
}

const PURGE_MS = 60 * 60_000;

/**
 * Builds the gateway: the upstream pool, the session registry, the proxy routes (mounted later), and
 * the reactions to configuration events that concern sessions (a disabled or removed service, a
 * disabled user). The pool itself reacts to the same events for its processes.
 */
export async function createGateway(deps: GatewayDeps, opts: GatewayOptions = {}): Promise<Gateway> {
  const pool = createUpstreamPool(deps);
  const sessions = new SessionRegistry(pool, opts.limits ?? { ...DEFAULT_LIMITS, perUserCap: deps.config.abuse.sessionsPerUser });
  const abuse = new AbuseGuard(deps.config.abuse, { metrics: deps.metrics, logger: deps.logger, redis: deps.redis });
  await abuse.start();
  const revocations = new Revocations(deps.db, deps.redis);
  // Several replicas (REDIS_URL): a session DELETEd on another replica is dropped here at once, and
  // legacy SSE POSTs are passed on to the replica holding the stream (architecture §7).
  await revocations.listen((hash) =>
    sessions.removeWhere((s) => s.transport === 'streamable' && Revocations.hashOf(s.key) === hash, 'deleted by the client'),
  );
  const legacyRelay = deps.redis ? new LegacyRelay(deps.redis, deps.catalog, deps.logger) : undefined;
  await legacyRelay?.start();
  const work = new ProxyWork(() => pool.links().reduce((n, link) => n + link.inFlight, 0));
  const routeDeps = {
    auth: new ProxyAuth(deps.catalog, deps.options, deps.events, abuse),
    access: new SessionAccess(deps.secrets, sessions, revocations),
    sessions,
    dispatcher: new DrainingDispatcher(work, {
      pool,
      meter: deps.meter,
      logger: deps.logger,
      telemetry: new CallTelemetry(deps.metrics, deps.tracing),
      abuse,
    }),
    secrets: deps.secrets,
    abuse,
    legacyRelay,
  };
  deps.metrics.countSessions(() => sessions.countByTransport());

  const stopListening = deps.events.on((event) => {
    if (event.type === 'service.removed') sessions.removeWhere((s) => s.serviceId === event.serviceId, 'service removed');
    if (event.type === 'service.changed') {
      void deps.catalog.byId(event.serviceId).then((service) => {
        if (!service?.enabled)
          sessions.removeWhere((s) => s.serviceId === event.serviceId, service ? 'service disabled' : 'service removed');
      });
    }
    if (event.type === 'user.changed') {
      void deps.principals.byId(event.userId).then(async (user) => {
        if (user?.status !== UserStatus.Enabled) {
          sessions.removeWhere((s) => s.userId === event.userId, user ? 'user disabled' : 'user deleted');
          return;
        }
        // A personal switch turned off ends that user's sessions on the service, and theirs only.
        const off = await deps.catalog.switchedOffBy(event.userId);
        if (off.size > 0) sessions.removeWhere((s) => s.userId === event.userId && off.has(s.serviceId), 'service switched off');
      });
    }
  });
  // One DELETE of expired rows for the whole cluster: the leader's (idempotent, so every replica
  // runs it while Redis is away and nobody leads).
  const purge = setInterval(() => {
    if (!deps.leader.runs('guarded')) return;
    void revocations.purgeExpired().catch((err) => deps.logger.warn({ err }, 'revocation purge failed'));
  }, PURGE_MS);
  purge.unref();

  return {
    pool,
    sessions,
    abuse,
    checkHealth: (serviceId) => pool.checkHealth(serviceId),
    async mount(app) {
      // Registered before the proxy routes so that they inherit it.
      app.addHook('onRequest', async (req, reply) => {
        if (req.method === 'POST' && req.url.startsWith('/proxy/')) work.track(reply.raw);
      });
      await registerProxyRoutes(app, routeDeps, deps.logger);
    },
    async close(graceMs = 0) {
      const pending = work.pending;
      if (pending > 0) {
        deps.logger.info({ pending, graceMs }, 'waiting for proxied calls in flight to finish');
        const left = await work.settle(graceMs);
        if (left > 0) deps.logger.warn({ left, graceMs }, 'shutdown grace period over: ending the calls still in flight');
      }
      stopListening();
      legacyRelay?.close();
      clearInterval(purge);
      // The pool first: it answers every call still waiting with an error at once (so the client hears
      // it and the meter records it) and then stops the processes. Ending a session first would drop
      // its calls unanswered.
      const stopped = pool.shutdown();
      sessions.removeAll();
      await stopped;
    },
  };
}
