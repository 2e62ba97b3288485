import { randomUUID } from 'node:crypto';
import { type JSONRPCError, type JSONRPCResponse, LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { UserStatus } from '@toolport/contract';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { DatabaseGate } from '../db/availability.js';
import type { Db } from '../db/db.js';
import type { ConfigEvents } from '../infra/events.js';
import type { Leadership } from '../infra/leader.js';
import type { Metrics } from '../infra/metrics.js';
import type { RedisHub } from '../infra/redis.js';
import type { Secrets } from '../infra/secrets.js';
import type { Tracing } from '../infra/tracing.js';
import type { AccessTokenPort } from './access-tokens.js';
import type { ServiceCatalog } from './catalog.js';
import { AbuseGuard } from './downstream/abuse.js';
import { CallScope } from './downstream/call-scope.js';
import { CallTelemetry } from './downstream/call-telemetry.js';
import type { DispatchDeps } from './downstream/dispatcher.js';
import { GroupFace } from './downstream/group-face.js';
import type { SemanticRanker } from './downstream/hybrid-search.js';
import { LegacyRelay } from './downstream/legacy-relay.js';
import { OpenApiFace, type OpenApiFaceDeps, registerOpenApiRoutes } from './downstream/openapi-face.js';
import { type OriginLists, OriginPolicy } from './downstream/origin-policy.js';
import { mcpEndpointOf, ProxyAuth } from './downstream/proxy-auth.js';
import { Revocations } from './downstream/revocations.js';
import { registerProxyRoutes } from './downstream/routes.js';
import { DownstreamSession } from './downstream/session.js';
import { SessionAccess } from './downstream/session-access.js';
import { DEFAULT_LIMITS, type SessionLimits, SessionRegistry } from './downstream/session-registry.js';
import { DrainingDispatcher, ProxyWork } from './drain.js';
import type { HealthResult, UpstreamPool } from './link-api.js';
import type { Meter } from './meter.js';
import { type GroupDirectory, type ListedTool, OverridesCache, type ToolPolicy } from './tool-policy.js';
import { createUpstreamPool } from './upstream/index.js';
import type { LocalPackages } from './upstream/pool.js';
import { OneOffHealth, type OneOffHealthDeps } from './upstream/probe.js';
import type { OptionsReader, ServiceLogWriter, UpstreamTuning } from './upstream/types.js';
import type { UpstreamAuthorization } from './upstream-auth.js';

export type { OneOffHealth, OneOffHealthDeps } from './upstream/probe.js';

/**
 * The gateway's MCP health check without the gateway: no pool, no sessions, no proxy routes. Each check
 * starts the service for one round trip and stops it; for commands that install without serving.
 */
export function createHealthProbe(deps: OneOffHealthDeps): OneOffHealth {
  return new OneOffHealth(deps);
}

/** The MCP data plane as the rest of the app sees it. */
export interface Gateway {
  pool: UpstreamPool;
  sessions: SessionRegistry;
  /** The proxy's abuse limits (docs/operations.md, "Abuse limits"). */
  abuse: AbuseGuard;
  checkHealth(serviceId: number): Promise<HealthResult>;
  /** Restarts the service's links on this replica and checks its health (the console's Reconnect). */
  reconnect(serviceId: number): Promise<HealthResult>;
  /**
   * The service's tools as its upstream lists them now (no overrides applied), fetched through the
   * link `userId` would use on /proxy (shared, per-user or isolated): the console's Tools tab.
   */
  upstreamTools(serviceId: number, userId: number): Promise<ListedTool[]>;
  /**
   * One tools/call as the user, through the proxy's own Dispatcher (overrides, in-flight cap, daily
   * limit, metering, the user's link): the console's Try it. Resolves with the JSON-RPC answer.
   */
  callTool(serviceId: number, userId: number, name: string, args: Record<string, unknown>): Promise<JSONRPCResponse | JSONRPCError>;
  /** Adds the /proxy/* and /group/* routes and the hook that tracks proxied calls for the drain to `app`. */
  mount(app: FastifyInstance): Promise<void>;
  /**
   * Lets the proxied calls in flight finish (at most `graceMs`), then ends every session and stream
   * and stops every upstream process and connection. New requests are refused by then (Fastify answers
   * 503 while it closes).
   */
  close(graceMs?: number): Promise<void>;
}

/**
 * Who a user is now, as far as the gateway cares: sessions of a disabled or deleted user are ended, and
 * the role decides whether the access lists apply to them (admins always may).
 */
export interface UserStatusLookup {
  byId(userId: number): Promise<{ status: number; role: number } | null>;
}

/**
 * Everything the gateway is built from, and all it may touch outside gateway/. The ports (catalog,
 * meter, options, principals, packages) are declared here; the modules implement them.
 */
export interface GatewayDeps {
  config: Pick<Config, 'dataDir' | 'registries' | 'abuse' | 'proxyAccess'>;
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
  /** Bounds the reads of the call path; while the database is away they answer from memory (decision 0043). */
  gate?: DatabaseGate;
  /** Several replicas: installs a service's package into this replica's DATA_DIR before it starts here. */
  packages?: LocalPackages;
  /** OAuth connections of remote services: the token each remote link sends (gateway/upstream-auth.ts). */
  authorization?: UpstreamAuthorization;
  /** OAuth access tokens (modules/authorization-server); without it only API keys are accepted. */
  accessTokens?: AccessTokenPort;
  /** Tool overrides and access (issue 17); without it no overrides apply and every service is open. */
  tools?: ToolPolicy;
  /** Groups (issue 17): without it, `/group/…` answers 404 for every name. */
  groups?: GroupDirectory;
  /** Semantic ranking of discovery search (modules/embeddings, decision 0046); without it search is lexical. */
  semantic?: SemanticRanker;
}

export interface GatewayOptions {
  /** Session limits (tests shorten them). */
  limits?: SessionLimits;
  /** Upstream timings over their production defaults (tests shorten them, e.g. the initialize timeout). */
  tuning?: Partial<UpstreamTuning>;
}

export type { AccessTokenPort, ProxyEndpoint, VerifiedToken } from './access-tokens.js';
export type { SemanticRanker, SemanticRanking } from './downstream/hybrid-search.js';
export type { SearchableTool } from './downstream/tool-search.js';

/**
 * Whether the MCP endpoints answer to a Host (origin-policy.ts: localhost, IP literals, ALLOWED_HOSTS and the
 * server address's host); the OAuth server's metadata follows the same rule.
 */
export function allowedHosts(options: GatewayDeps['options'], lists: OriginLists): (host: string) => boolean {
  const policy = new OriginPolicy(options, lists);
  return (host) => policy.hostAllowed(host);
}

const PURGE_MS = 60 * 60_000;

/**
 * Builds the gateway: the upstream pool, the session registry, the proxy routes (mounted later), and
 * the reactions to configuration events that concern sessions (a disabled or removed service, a
 * disabled user). The pool itself reacts to the same events for its processes.
 */
export async function createGateway(deps: GatewayDeps, opts: GatewayOptions = {}): Promise<Gateway> {
  const pool = createUpstreamPool(deps, opts.tuning);
  const sessions = new SessionRegistry(
    pool,
    opts.limits ?? { ...DEFAULT_LIMITS, perUserCap: deps.config.abuse.sessionsPerUser },
    deps.redis?.replicaId,
  );
  const abuse = new AbuseGuard(deps.config.abuse, { metrics: deps.metrics, logger: deps.logger, redis: deps.redis });
  await abuse.start();
  const revocations = new Revocations(deps.db, deps.redis, deps.gate);
  // Several replicas (REDIS_URL): a session DELETEd on another replica is dropped here at once, and
  // legacy SSE POSTs are passed on to the replica holding the stream (docs/architecture.md §7).
  await revocations.listen((hash) =>
    sessions.removeWhere((s) => s.transport === 'streamable' && Revocations.hashOf(s.key) === hash, 'deleted by the client'),
  );
  const legacyRelay = deps.redis ? new LegacyRelay(deps.redis, deps.catalog, deps.logger) : undefined;
  await legacyRelay?.start();
  // A client's answer to a server-to-client request this replica sent, POSTed to another one.
  legacyRelay?.serveAnswers(({ sessionKey, userId, serviceId, answer }) => {
    const session = sessions.get(sessionKey);
    if (session?.userId !== userId || session.serviceId !== serviceId) return;
    // A group session's requests are its members' (group-face.ts).
    if (!session.outgoing.answer(answer) && serviceId < 0) face.takeAnswer(session, answer);
  });
  const answers: DispatchDeps['answers'] = legacyRelay && {
    elsewhere: (session, answer) =>
      legacyRelay.passAnswer({ sessionKey: session.key, userId: session.userId, serviceId: session.serviceId, answer }),
  };
  const overrides = deps.tools ? new OverridesCache(deps.tools) : undefined;
  const work = new ProxyWork(() => pool.links().reduce((n, link) => n + link.inFlight, 0));
  const origins = new OriginPolicy(deps.options, deps.config.proxyAccess);
  const routeDeps = {
    origins,
    auth: new ProxyAuth(deps.catalog, origins, deps.options, deps.events, abuse, deps.accessTokens, deps.tools),
    access: new SessionAccess(deps.secrets, sessions, revocations),
    sessions,
    dispatcher: new DrainingDispatcher(work, {
      pool,
      meter: deps.meter,
      logger: deps.logger,
      telemetry: new CallTelemetry(deps.metrics, deps.tracing),
      abuse,
      tools: overrides,
      answers,
      serviceLog: deps.serviceLog,
    }),
    secrets: deps.secrets,
    abuse,
    legacyRelay,
  };
  const face = new GroupFace({
    directory: deps.groups ?? { byName: async () => undefined, mayUseGroup: async () => false },
    // The members' own access lists, asked as /proxy asks them (decision 0040).
    ...(deps.tools ? { policy: deps.tools } : {}),
    users: deps.principals,
    catalog: deps.catalog,
    inner: routeDeps.dispatcher,
    release: (serviceId, session) => pool.release(serviceId, session),
    tools: overrides,
    events: deps.events,
    logger: deps.logger,
    answers,
    semantic: deps.semantic,
  });
  // The group face: the proxy's transports, sessions, limits and authentication, with the group in place of a service.
  const groupDeps = {
    ...routeDeps,
    auth: { resolve: (req: Parameters<ProxyAuth['resolve']>[0], name: string) => routeDeps.auth.resolveGroup(req, name, face) },
    dispatcher: face,
    // A legacy SSE POST of a group that lands on another replica is passed on like a service's
    // (docs/decisions/0032); the replica holding the stream knows the group from its session's opening.
    legacyRelay,
    relayLookup: async (serviceId: number) => face.standInOf(serviceId),
    prefix: '/group' as const,
  };
  // The OpenAPI face (decision 0053): the same authentication and dispatchers as /proxy and /group.
  const openApiDeps: OpenApiFaceDeps = {
    origins,
    options: deps.options,
    sessions,
    abuse,
    events: deps.events,
    logger: deps.logger,
    faces: {
      proxy: { resolve: (req, name) => routeDeps.auth.resolve(req, name, mcpEndpointOf('proxy', name)), dispatcher: routeDeps.dispatcher },
      group: {
        resolve: (req, name) => routeDeps.auth.resolveGroup(req, name, face, mcpEndpointOf('group', name)),
        dispatcher: face,
        refusalOf: (userId, stand, name) => face.refusalOf(userId, stand, name),
      },
    },
  };
  const openApi = new OpenApiFace(openApiDeps);
  deps.metrics.countSessions(() => sessions.countByTransport());

  const stopListening = deps.events.on((event) => {
    if (event.type === 'service.removed') sessions.removeWhere((s) => s.serviceId === event.serviceId, 'service removed');
    if (event.type === 'service.changed') {
      // A user connected their account (or a connection changed): sessions opened before they did re-list.
      for (const s of sessions.where((s) => s.serviceId === event.serviceId && s.awaitingConnection)) {
        s.notify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
      }
      void deps.catalog.byId(event.serviceId).then((service) => {
        if (!service?.enabled)
          sessions.removeWhere((s) => s.serviceId === event.serviceId, service ? 'service disabled' : 'service removed');
      });
    }
    // A group edited, a member enabled, disabled or removed, or an access list changed (a member may now be
    // hidden from some users, or shown): every group client re-lists. (A member's own list_changed reaches
    // them through its member session.)
    if (
      event.type === 'groups.changed' ||
      event.type === 'service.changed' ||
      event.type === 'service.removed' ||
      event.type === 'access.changed'
    ) {
      if (event.type === 'groups.changed') face.forget();
      for (const s of sessions.where((s) => s.serviceId < 0)) {
        for (const kind of ['tools', 'prompts', 'resources']) s.notify({ jsonrpc: '2.0', method: `notifications/${kind}/list_changed` });
      }
    }
    if (event.type === 'tools.changed') {
      // What the service's clients list changed: they hear it like an upstream's own list_changed.
      overrides?.drop(event.serviceId);
      // Group sessions (negative ids) hear it too: the member may be one of theirs.
      for (const s of sessions.where((s) => s.serviceId === event.serviceId || s.serviceId < 0)) {
        s.notify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
      }
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
        // In their groups the member is hidden instead (group-face.ts): their group sessions re-list.
        for (const s of sessions.where((s) => s.serviceId < 0 && s.userId === event.userId)) {
          for (const kind of ['tools', 'prompts', 'resources']) s.notify({ jsonrpc: '2.0', method: `notifications/${kind}/list_changed` });
        }
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
    reconnect: (serviceId) => pool.reconnect(serviceId),

    upstreamTools: (serviceId, userId) => listUpstreamTools(pool, deps.catalog, serviceId, userId),
    async callTool(serviceId, userId, name, args) {
      const service = await deps.catalog.byId(serviceId);
      if (!service?.enabled) throw new Error(`service ${serviceId} is not available`);
      const nonce = `console-${randomUUID()}`;
      const session = new DownstreamSession({
        key: nonce,
        peerId: nonce,
        userId,
        serviceId,
        protocolVersion: LATEST_PROTOCOL_VERSION,
        issuedAt: Date.now(),
        transport: 'streamable',
        initParams: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'toolport-console', version: '1' } },
        revocationCheckedAt: Date.now(),
      });
      const request = { jsonrpc: '2.0' as const, id: 1, method: 'tools/call', params: { name, arguments: args } };
      try {
        return await new Promise<JSONRPCResponse | JSONRPCError>((resolve) => {
          void routeDeps.dispatcher.dispatch(
            session,
            service,
            [request],
            { notification() {}, response: (json) => resolve(JSON.parse(json) as JSONRPCResponse | JSONRPCError) },
            new CallScope(session),
            Buffer.byteLength(JSON.stringify(request)),
          );
        });
      } finally {
        pool.release(serviceId, session);
      }
    },
    async mount(app) {
      // Registered before the proxy routes so that they inherit it.
      app.addHook('onRequest', async (req, reply) => {
        // A 2026-07-28 listen stream is no call: it stays open until the client leaves, and a shutdown closes it.
        const listen = req.headers['mcp-method'] === 'subscriptions/listen';
        const proxied = req.url.startsWith('/proxy/') || req.url.startsWith('/group/') || req.url.startsWith('/openapi/');
        if (req.method === 'POST' && !listen && proxied) work.track(reply.raw);
      });
      await registerProxyRoutes(app, routeDeps, deps.logger);
      await registerProxyRoutes(app, groupDeps, deps.logger, '/group');
      await registerOpenApiRoutes(app, openApi, openApiDeps);
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

const MAX_TOOL_PAGES = 50;
const LIST_TIMEOUT_MS = 30_000;

/**
 * tools/list through the link a user's /proxy session would get, as a short-lived peer of its own
 * (released at the end, so an isolated service's process for it is stopped). Pages are followed.
 */
async function listUpstreamTools(pool: UpstreamPool, catalog: ServiceCatalog, serviceId: number, userId: number): Promise<ListedTool[]> {
  const service = await catalog.byId(serviceId);
  if (!service) throw new Error(`service ${serviceId} not found`);
  if (!service.enabled) throw new Error(`service ${service.name} is disabled`);
  const peer = { id: `console-${randomUUID()}`, userId, protocolVersion: LATEST_PROTOCOL_VERSION, notify() {} };
  try {
    const link = await pool.acquire(service, peer);
    await link.initialize(peer, {
      protocolVersion: LATEST_PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: 'toolport-console', version: '1' },
    });
    const tools: ListedTool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_TOOL_PAGES; page++) {
      const result = await new Promise<{ tools?: ListedTool[]; nextCursor?: string }>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('tools/list timed out')), LIST_TIMEOUT_MS);
        link.request(
          peer,
          { jsonrpc: '2.0', id: page + 1, method: 'tools/list', params: cursor ? { cursor } : {} },
          {
            notification() {},
            response(message) {
              clearTimeout(timer);
              if ('error' in message) reject(new Error(message.error.message));
              else resolve(message.result as { tools?: ListedTool[]; nextCursor?: string });
            },
          },
        );
      });
      tools.push(...(result.tools ?? []));
      cursor = result.nextCursor;
      if (!cursor) break;
    }
    return tools;
  } finally {
    pool.release(serviceId, peer);
  }
}
