import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import { jsonSchemaTransform, serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { DatabaseGate, DatabaseUnavailableError } from './db/availability.js';
import { type Db, type DbHandle, type Engine, migrateToLatest } from './db/db.js';
import type { ServiceCatalog } from './gateway/catalog.js';
import { allowedHosts, createGateway, type Gateway, type GatewayOptions } from './gateway/index.js';
import type { Meter } from './gateway/meter.js';
import { reapLeftoversAndRecordRun } from './gateway/upstream/leftovers.js';
import { memoryWatch } from './gateway/upstream/memory-watch.js';
import { census } from './gateway/upstream/process-census.js';
import { answerClientError, answerFrameworkError, installErrorHandling } from './http/error-handler.js';
import { installGuard } from './http/guard.js';
import { refuseAmbiguousRequests } from './http/hygiene.js';
import { attachLocale } from './http/locale.js';
import { refuseNulInput } from './http/nul-guard.js';
import { Principals } from './http/principals.js';
import { httpServerOptions } from './http/server-options.js';
import { serveConsole } from './http/static.js';
import { ConfigResync, EventRelay } from './infra/event-relay.js';
import { ConfigEvents } from './infra/events.js';
import { Leader } from './infra/leader.js';
import { redactUrl } from './infra/logger.js';
import { instrumentHttp, Metrics, registerMetricsRoute } from './infra/metrics.js';
import { addressCheckedFetch, configuredFetch, setAddressPolicy } from './infra/outbound.js';
import { RedisHub } from './infra/redis.js';
import type { Secrets } from './infra/secrets.js';
import { ServiceLog } from './infra/service-log.js';
import { Tracing, traceHttp } from './infra/tracing.js';
import { createAnalyticsModule } from './modules/analytics/index.js';
import { type AuditRepo, type AuditTrail, createAuditModule } from './modules/audit/index.js';
import { type AuthService, createAuthModule, createRefreshTokens } from './modules/auth/index.js';
import { createAuthorizationServerModule } from './modules/authorization-server/index.js';
import { createEmbeddingsModule } from './modules/embeddings/index.js';
import { createExposureModule, createExposurePorts } from './modules/exposure/index.js';
import { createHistoryModule, type HistoryRetention } from './modules/history/index.js';
import { createLogsModule } from './modules/logs/index.js';
import {
  createMarketModule,
  createMarketSources,
  createReplicaInstalls,
  type MarketModule,
  type ReplicaInstalls,
} from './modules/market/index.js';
import { createMeteringModule } from './modules/metering/index.js';
import { createOptionsModule, type OptionsService } from './modules/options/index.js';
import { createServiceCatalog, createServiceRows, createServicesModule, type ServicesModule } from './modules/services/index.js';
import { createSignInProvidersModule } from './modules/sign-in-providers/index.js';
import { createStatusModule } from './modules/status/index.js';
import { createUpstreamAuthorizationModule } from './modules/upstream-authorization/index.js';
import { createUsersModule, type UsersRepo, type UsersService } from './modules/users/index.js';
import { openSecrets } from './secrets-rotation/start-check.js';
import { VERSION } from './version.js';

export type App = FastifyInstance;

export interface BuildOptions {
  config: Config;
  database: DbHandle;
  logger: Logger;
  /** Where bootstrap prints the generated admin password (stdout by default). */
  print?: (line: string) => void;
  /** Session limits and upstream timings of the gateway; production runs on their defaults, tests shorten them. */
  gateway?: GatewayOptions;
}

/** Every part of the server, built once by `buildApp` (tests read them). */
export interface AppParts {
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
  metrics: Metrics;
  /** OpenTelemetry spans, when OTEL_EXPORTER_OTLP_ENDPOINT is set (infra/tracing.ts). */
  tracing: Tracing;
  serviceLog: ServiceLog;
  principals: Principals;
  options: OptionsService;
  usersRepo: UsersRepo;
  users: UsersService;
  auth: AuthService;
  /** Configuration as the gateway reads it (modules/services/catalog.ts). */
  catalog: ServiceCatalog;
  /** Daily limits, counters and request records (modules/metering). */
  meter: Meter;
  /** The retention purge of request records, service logs and install logs (modules/history). */
  retention: HistoryRetention;
  /** Who changed what (modules/audit): the entries written and the store read. */
  audit: { trail: AuditTrail; repo: AuditRepo };
  /** Several replicas: local installs of the packages installed through another one (modules/market/install/replica.ts). */
  packages?: ReplicaInstalls;
  /** The MCP data plane: proxy routes, sessions, upstream pool (gateway/index.ts). */
  gateway: Gateway;
  /** The catalog of services: rows, edits, health checks, personal values (modules/services). */
  services: ServicesModule;
  /** Search, the install lifecycle, batch import and export (modules/market). */
  market: MarketModule;
  startedAt: number;
  version: string;
}

/** API routes that answer without the database. */
const WITHOUT_DATABASE = /^\/api\/(?:health|ready|status)(?:[/?]|$)/;

export interface BuiltApp {
  app: FastifyInstance;
  ctx: AppParts;
  /** Every route registered, for the route-table tests; `endpoint` when it came from the contract's endpoint table. */
  routes: { method: string; url: string; auth: string; endpoint: boolean }[];
}

/**
 * The composition root: builds every part of the server once, in dependency order, without
 * listening (main.ts listens, tests use `app.inject()`).
 */
export async function buildApp(opts: BuildOptions): Promise<BuiltApp> {
  const { config, database, logger } = opts;
  const { db } = database;
  await migrateToLatest(db);
  const startedAt = Date.now();

  const events = new ConfigEvents();
  const secrets = await openSecrets(db, config, database.describe);
  const options = createOptionsModule({ db, secrets, events });
  await options.service.load();
  // Remote services may reach loopback, private and link-local addresses only while this is on (infra/outbound.ts).
  setAddressPolicy(() => options.service.bool('AllowPrivateNetworkUpstreams'));
  const metrics = new Metrics();
  // Reads on the call path are bounded, and answered from memory while the database is away (decision 0043).
  const gate = new DatabaseGate(db);
  const metering = await createMeteringModule({
    db,
    logger,
    config,
    gate,
    timeZone: () => options.service.get('TimeZone'),
    onRecordsDropped: (n) => metrics.requestRecordsDropped(n),
  });
  // With REDIS_URL, configuration events, revocations, legacy SSE POSTs and login limits are shared too.
  const redis = config.redisUrl
    ? await RedisHub.connect({ url: config.redisUrl, namespace: config.redisPrefix, logger, signingKey: secrets.replicaKey })
    : undefined;
  // A preference another replica changed is read again before its listeners hear of it.
  events.beforeReceive((event) => (event.type === 'option.changed' ? options.service.load() : undefined));
  const tracing = Tracing.create(config.tracing, VERSION, logger);
  const serviceLog = new ServiceLog(db, logger);
  // Sign-in issues refresh tokens, the users module revokes them: the store comes before both.
  const refreshTokens = createRefreshTokens(db);
  const users = createUsersModule({ db, refreshTokens, secrets, events, config, logger });
  const principals = new Principals(users.repo, events);
  const catalog: ServiceCatalog = createServiceCatalog({ db, users: users.repo, secrets, events, gate });
  const rows = createServiceRows({ db, events });
  const relay = redis
    ? await EventRelay.start(redis, events, logger, new ConfigResync({ db, options: options.service, events }))
    : undefined;
  // Cluster-wide periodic jobs run on one replica (docs/decisions/0017-leader-election.md).
  const report = (leading: boolean) => metrics.leaderChanged(leading);
  const leader = redis ? await Leader.start(redis, { logger, report }) : Leader.solo({ logger, report });
  const history = createHistoryModule({ db, options: options.service, logger, leader });
  const auth = createAuthModule({ refreshTokens, usersRepo: users.repo, secrets, redis, metrics });
  // Groups, tool overrides and access (issue 17): the gateway asks their answers through its ToolPolicy and
  // GroupDirectory ports, built first; the module lists live tools through the gateway, built after it.
  const hub = createExposurePorts({ db, events, gate });
  const analytics = createAnalyticsModule({ db, options: options.service, access: hub.access, settleCounts: metering.settle });
  const logs = createLogsModule({ db, serviceLog, options: options.service });
  const audit = createAuditModule({ db, options: options.service, logger });
  const oauth = createSignInProvidersModule({
    db,
    config,
    options: options.service,
    secrets,
    usersRepo: users.repo,
    auth: auth.service,
    events,
    redis,
    principals,
    logger,
  });
  const status = createStatusModule({
    db,
    gate,
    options: options.service,
    version: VERSION,
    startedAt,
    oidcProviders: (origin) => oauth.service.publicOidcProviders(origin),
  });
  // Toolport as the OAuth server of its MCP endpoints; the proxy accepts its access tokens through a gateway port.
  const oauthServer = createAuthorizationServerModule({
    db,
    secrets,
    options: options.service,
    principals,
    switchedOffBy: (userId) => catalog.switchedOffBy(userId),
    events,
    endpoints: {
      // Called per consent and token request, after every part below is built: the gateway's own access rule
      // (decision 0040), asked through the ports /proxy and /group ask.
      access: async (user, kind, name) => {
        if (kind === 'proxy') {
          const service = await catalog.byName(name);
          if (!service?.enabled) return 'unknown_endpoint';
          return (await hub.policy.mayUseService(user, service.id)) ? 'allowed' : 'no_access';
        }
        const group = await hub.directory.byName(name);
        if (!group) return 'unknown_endpoint';
        return (await hub.directory.mayUseGroup(user, group.id)) ? 'allowed' : 'no_access';
      },
    },
    // Client ID Metadata Documents are named by anyone: private addresses only if the operator allows (decision 0041).
    fetch: addressCheckedFetch(() => config.clientFetches.allowPrivateNetwork),
    fetchTimeoutMs: config.clientFetches.timeoutMs,
    hostAllowed: allowedHosts(options.service, config.proxyAccess),
    redis,
    leader,
    logger,
  });
  await users.ensureSuperAdmin(opts.print);

  // Processes a killed earlier run left behind go first, and this run is recorded before the pool can start any
  // tool server, `boot` ones included (docs/decisions/0045); its processes are counted against the memory cap.
  const run = await reapLeftoversAndRecordRun(config.dataDir, logger);
  census.configure({ logger });
  memoryWatch.configure({ maxRssMb: config.stdioMaxRssMb });

  // The data plane: the upstream pool, sessions and abuse limits. Its proxy routes are mounted after the API's.
  const sources = createMarketSources(config, logger);
  const packages = createReplicaInstalls({ config, redis, events, catalog, rows, serviceLog, logger, sources });
  const meter = metering.meter;
  // Toolport as the OAuth client of remote services: the gateway's links ask it for their tokens.
  const upstreamOAuth = createUpstreamAuthorizationModule({
    db,
    secrets,
    events,
    options: options.service,
    catalog,
    access: hub.access,
    logger,
    leader,
    // Bound late: the services module is built after the gateway, which needs this module's token keeper.
    recheck: (serviceId) => services.health.check(serviceId),
  });
  // The optional embeddings provider of discovery search: its URL is the admin's, so trusted as to address.
  const embeddings = createEmbeddingsModule({ db, options: options.service, events, fetch: configuredFetch, logger });
  const gateway = await createGateway(
    {
      config,
      db,
      catalog,
      meter,
      gate,
      options: options.service,
      principals,
      events,
      serviceLog,
      secrets,
      logger,
      metrics,
      tracing,
      leader,
      redis,
      packages,
      authorization: upstreamOAuth.keeper,
      accessTokens: oauthServer.accessTokens,
      tools: hub.policy,
      groups: hub.directory,
      semantic: embeddings.ranker,
    },
    opts.gateway,
  );
  const groups = createExposureModule({ events, ports: hub, catalog, gateway });
  const services = createServicesModule({
    db,
    secrets,
    events,
    options: options.service,
    serviceLog,
    rows,
    catalog,
    gateway,
    oauth: upstreamOAuth.flow,
    access: hub.access,
    settleCounts: metering.settle,
  });
  const market = createMarketModule({
    db,
    config,
    logger,
    secrets,
    events,
    serviceLog,
    metrics,
    leader,
    principals,
    services,
    sources,
    replicaInstalls: packages,
    gateway,
    transfer: groups.transfer,
  });

  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    // Fastify bounds every preClose/onClose hook by pluginTimeout (10 s by default): the gateway's hook
    // waits up to SHUTDOWN_GRACE_MS for calls in flight and then stops processes, so a call longer than
    // 10 s made the shutdown fail with AVV_ERR_READY_TIMEOUT and exit 1. server.ts's own timer
    // (SHUTDOWN_GRACE_MS + 15 s) remains the last resort.
    pluginTimeout: Math.max(10_000, config.shutdownGraceMs + 15_000),
    // One line per request is written by the onResponse hook below, with the URL redacted.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: 4 * 1024 * 1024,
    // Headers and request timeouts against slow clients (http/server-options.ts, docs/operations.md "Abuse limits").
    ...httpServerOptions(config.abuse),
    // A number of hops becomes the function Fastify's types take for it: the nearest n proxies are believed.
    trustProxy: typeof config.trustProxy === 'number' ? trustHops(config.trustProxy) : config.trustProxy,
    routerOptions: { ignoreTrailingSlash: true },
    genReqId: () => crypto.randomUUID(),
    // Requests refused before routing (undecodable URL, overlong path parameter, unparseable HTTP) get the envelope too.
    frameworkErrors: answerFrameworkError,
    clientErrorHandler: answerClientError,
  });
  app.addHook('onClose', async () => {
    // Pending counters, request records and log lines reach the database before the process ends.
    await metering.close();
    gate.close();
    await serviceLog.flush();
    await leader.close();
    relay?.stop();
    await redis?.close();
  });
  // The retention purge runs in the background once the app is up and stops between two batches on close.
  app.addHook('onReady', async () => history.start());
  app.addHook('onClose', async () => history.close());
  app.addHook('onClose', async () => {
    for (const module of [upstreamOAuth, oauth, oauthServer, logs, audit, analytics, options, users, auth, status, groups, embeddings])
      await module.close();
  });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);

  const routes: BuiltApp['routes'] = [];
  app.addHook('onRoute', (r) => {
    // The API docs page and its assets are public like the document they show.
    if (r.url.startsWith('/api/docs')) r.config = { ...r.config, auth: 'public' };
    const methods = Array.isArray(r.method) ? r.method : [r.method];
    for (const method of methods) {
      if (method === 'HEAD') continue;
      routes.push({
        method,
        url: r.url,
        auth: r.config?.auth ?? (r.url.startsWith('/api/') ? 'user' : 'public'),
        endpoint: r.config?.endpoint === true,
      });
    }
  });
  app.addHook('onRequest', async (req) => attachLocale(req));
  refuseAmbiguousRequests(app);
  // While the database is known to be away, API requests get the translated 503 at once instead of each
  // waiting for a connection timeout; the probes and the status page need no database.
  app.addHook('onRequest', async (req) => {
    if (!gate.up && req.url.startsWith('/api/') && !WITHOUT_DATABASE.test(req.url)) throw new DatabaseUnavailableError();
  });
  app.addHook('onResponse', async (req, reply) => {
    // Proxied MCP traffic is the data plane: a line per successful call would cost more than the call
    // itself (counted calls are recorded by the meter), so only refused ones are logged at info.
    const level = reply.statusCode < 400 && (req.url.startsWith('/proxy/') || req.url.startsWith('/openapi/')) ? 'debug' : 'info';
    if (!logger.isLevelEnabled(level)) return;
    req.log[level]({ method: req.method, url: redactUrl(req.url), status: reply.statusCode, ms: Math.round(reply.elapsedTime) }, 'request');
  });
  installErrorHandling(app);
  refuseNulInput(app);
  // API spans start before the guard, so refused requests are traced too.
  traceHttp(app, tracing);
  installGuard(app, { secrets, principals });
  // Every administrative change and sign-in answered under /api leaves one audit entry (modules/audit).
  audit.install(app);
  instrumentHttp(app, metrics);
  // Spans still buffered reach the collector before the process ends.
  app.addHook('onClose', async () => tracing.shutdown());
  registerMetricsRoute(app, metrics, config.metricsToken);

  await app.register(fastifySwagger, {
    openapi: {
      info: { title: 'Toolport API', version: VERSION, description: 'Admin and console API of the Toolport MCP gateway.' },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } } },
      security: [{ bearer: [] }],
    },
    transform: jsonSchemaTransform,
    hideUntagged: false,
  });
  await app.register(fastifySwaggerUi, { routePrefix: '/api/docs', uiConfig: { docExpansion: 'list' }, staticCSP: true });
  // The conventional name for client generators, beside the plugin's own /api/docs/json.
  app.get('/api/docs/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  // Every API module under /api; a new module adds one line here.
  await app.register(
    async (plain) => {
      const api = plain.withTypeProvider<ZodTypeProvider>();
      // The gateway stops in preClose; then installs and first checks finish writing before the database closes.
      api.addHook('onClose', async () => {
        await market.close();
        await services.close();
      });
      await status.routes(api);
      await auth.routes(api);
      await users.routes(api);
      await options.routes(api);
      await embeddings.routes(api);
      await services.routes(api);
      await groups.routes(api);
      await analytics.routes(api);
      await logs.routes(api);
      await audit.routes(api);
      await market.start();
      await market.routes(api);
      await oauth.routes(api);
      await upstreamOAuth.routes(api);
      await oauthServer.routes(api);
    },
    { prefix: '/api' },
  );
  // Removes the run's file once its tool servers are stopped (the gateway stops them in preClose).
  app.addHook('onClose', async () => run.release());
  // The proxy routes after the API's. On close, the proxied calls in flight may finish (SHUTDOWN_GRACE_MS),
  // then the sessions' open streams end and the processes stop.
  await gateway.mount(app);
  // The OAuth protocol routes (/.well-known/*, /oauth2/*) are not under /api and speak OAuth, not the envelope.
  await oauthServer.mount(app);
  // Leadership is given up first, so another replica takes the periodic jobs over while this one drains.
  app.addHook('preClose', async () => leader.close());
  app.addHook('preClose', async () => gateway.close(config.shutdownGraceMs));
  await serveConsole(app, config.webDistDir);
  const parts: AppParts = {
    config,
    db,
    engine: database.engine,
    logger,
    secrets,
    events,
    redis,
    leader,
    metrics,
    tracing,
    serviceLog,
    principals,
    options: options.service,
    usersRepo: users.repo,
    users: users.service,
    auth: auth.service,
    catalog,
    meter,
    retention: history.retention,
    audit: { trail: audit.trail, repo: audit.repo },
    packages,
    gateway,
    services,
    market,
    startedAt,
    version: VERSION,
  };
  return { app, ctx: parts, routes };
}

function trustHops(hops: number): (address: string, hop: number) => boolean {
  return (_address, hop) => hop < hops;
}
