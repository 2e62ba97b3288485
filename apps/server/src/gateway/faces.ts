import type { FastifyInstance } from 'fastify';
import type { GatewayDeps } from './deps.js';
import { AbuseGuard } from './downstream/abuse.js';
import { CallTelemetry } from './downstream/call-telemetry.js';
import type { DispatchDeps } from './downstream/dispatcher.js';
import { GroupFace } from './downstream/group-face.js';
import { LegacyRelay } from './downstream/legacy-relay.js';
import { OpenApiFace, type OpenApiFaceDeps, registerOpenApiRoutes } from './downstream/openapi-face.js';
import { OriginPolicy } from './downstream/origin-policy.js';
import { mcpEndpointOf, ProxyAuth } from './downstream/proxy-auth.js';
import { Revocations } from './downstream/revocations.js';
import { registerProxyRoutes } from './downstream/routes.js';
import { SessionAccess } from './downstream/session-access.js';
import type { SessionRegistry } from './downstream/session-registry.js';
import { DrainingDispatcher, ProxyWork } from './drain.js';
import { OverridesCache } from './tool-policy.js';
import type { LinkPool } from './upstream/pool.js';

/**
 * The gateway's three faces over one pool and one session registry (docs/architecture.md §2): /proxy (a
 * service), /group (a group, decision 0032) and /openapi (decision 0053), with the same authentication,
 * abuse limits, dispatcher and drain. Built by createGateway (index.ts); `start` connects what listens
 * elsewhere (Redis), `mount` adds the routes.
 */
export function buildFaces(deps: GatewayDeps, pool: LinkPool, sessions: SessionRegistry) {
  const abuse = new AbuseGuard(deps.config.abuse, { metrics: deps.metrics, logger: deps.logger, redis: deps.redis });
  const revocations = new Revocations(deps.db, deps.redis, deps.gate);
  // Several replicas (REDIS_URL): legacy SSE POSTs are passed on to the replica holding the stream (docs/architecture.md §7).
  const legacyRelay = deps.redis ? new LegacyRelay(deps.redis, deps.catalog, deps.logger) : undefined;
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

  return {
    abuse,
    work,
    face,
    overrides,
    revocations,
    dispatcher: routeDeps.dispatcher,
    /** The abuse limits' shared counters, the revocations' and the legacy relay's Redis channels. */
    async start(): Promise<void> {
      await abuse.start();
      // A session DELETEd on another replica is dropped here at once.
      await revocations.listen((hash) =>
        sessions.removeWhere((s) => s.transport === 'streamable' && Revocations.hashOf(s.key) === hash, 'deleted by the client'),
      );
      await legacyRelay?.start();
      // A client's answer to a server-to-client request this replica sent, POSTed to another one.
      legacyRelay?.serveAnswers(({ sessionKey, userId, serviceId, answer }) => {
        const session = sessions.get(sessionKey);
        if (session?.userId !== userId || session.serviceId !== serviceId) return;
        // A group session's requests are its members' (group-face.ts).
        if (!session.outgoing.answer(answer) && serviceId < 0) face.takeAnswer(session, answer);
      });
    },
    stop(): void {
      legacyRelay?.close();
    },
    /** The /proxy/*, /group/* and /openapi/* routes, and the hook that tracks proxied calls for the drain. */
    async mount(app: FastifyInstance): Promise<void> {
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
  };
}

export type Faces = ReturnType<typeof buildFaces>;
