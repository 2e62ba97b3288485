import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import { jsonSchemaTransform, serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { AppContext } from './context.js';
import { type DbHandle, migrateToLatest } from './db/db.js';
import type { ServiceCatalog } from './gateway/catalog.js';
import { createGateway } from './gateway/index.js';
import type { Meter } from './gateway/meter.js';
import { DbMeter, RedisAdmission } from './gateway/metering.js';
import { reapLeftoversAndRecordRun } from './gateway/upstream/leftovers.js';
import { memoryWatch } from './gateway/upstream/memory-watch.js';
import { answerClientError, answerFrameworkError, installErrorHandling } from './http/error-handler.js';
import { installGuard } from './http/guard.js';
import { attachLocale } from './http/locale.js';
import { refuseNulInput } from './http/nul-guard.js';
import { Principals } from './http/principals.js';
import { serveConsole } from './http/static.js';
import { ConfigResync, EventRelay } from './infra/event-relay.js';
import { ConfigEvents } from './infra/events.js';
import { Leader } from './infra/leader.js';
import { redactUrl } from './infra/logger.js';
import { instrumentHttp, Metrics, registerMetricsRoute } from './infra/metrics.js';
import { setAddressPolicy } from './infra/outbound.js';
import { RedisHub } from './infra/redis.js';
import { resolveMasterSecret, Secrets } from './infra/secrets.js';
import { ServiceLog } from './infra/service-log.js';
import { Tracing, traceHttp } from './infra/tracing.js';
import { AuthService } from './modules/auth/service.js';
import { HistoryRetention } from './modules/history/retention.js';
import { registerModules } from './modules/index.js';
import { OptionsRepo } from './modules/options/repo.js';
import { OptionsService } from './modules/options/service.js';
import { createServiceCatalog } from './modules/services/index.js';
import { ensureSuperAdmin } from './modules/users/bootstrap.js';
import { UsersRepo } from './modules/users/repo.js';
import { UsersService } from './modules/users/service.js';
import { httpServerOptions } from './server.js';
import { VERSION } from './version.js';

export type App = FastifyInstance;

export interface BuildOptions {
  config: Config;
  database: DbHandle;
  logger: Logger;
  /** Where bootstrap prints the generated admin password (stdout by default). */
  print?: (line: string) => void;
}

export interface BuiltApp {
  app: FastifyInstance;
  ctx: AppContext;
  /** Every route registered, for the route-table tests. */
  routes: { method: string; url: string; auth: string }[];
}

/** Builds the whole server without listening: main.ts listens, tests use `app.inject()`. */
export async function buildApp(opts: BuildOptions): Promise<BuiltApp> {
  const { config, database, logger } = opts;
  await migrateToLatest(database.db);

  const events = new ConfigEvents();
  const usersRepo = new UsersRepo(database.db);
  const secrets = new Secrets(resolveMasterSecret(config.secretKey, config.dataDir));
  const options = new OptionsService(new OptionsRepo(database.db), secrets, events);
  await options.load();
  // Remote services may reach loopback, private and link-local addresses only while this is on (infra/outbound.ts).
  setAddressPolicy(() => options.bool('AllowPrivateNetworkUpstreams'));
  // With REDIS_URL the daily limits are counted in Redis so every replica sees the same count.
  const redisAdmission = config.redisUrl ? await RedisAdmission.connect(config.redisUrl, `${config.redisPrefix}rpd:`) : undefined;
  // …and configuration events, revocations, legacy SSE POSTs and login limits are shared (architecture §7).
  const redis = config.redisUrl
    ? await RedisHub.connect({ url: config.redisUrl, namespace: config.redisPrefix, logger, signingKey: secrets.replicaKey })
    : undefined;
  // A preference another replica changed is read again before its listeners hear of it.
  events.beforeReceive((event) => (event.type === 'option.changed' ? options.load() : undefined));
  const catalog: ServiceCatalog = createServiceCatalog({ db: database.db, users: usersRepo, secrets, events });
  const meter: Meter = new DbMeter({ db: database.db, logger, timeZone: () => options.get('TimeZone'), redis: redisAdmission });
  const ctx = {
    config,
    db: database.db,
    engine: database.engine,
    logger,
    secrets,
    events,
    redis,
    usersRepo,
    principals: new Principals(usersRepo, events),
    options,
    serviceLog: new ServiceLog(database.db, logger),
    catalog,
    meter,
    metrics: new Metrics(),
    tracing: Tracing.create(config.tracing, VERSION, logger),
    startedAt: Date.now(),
    version: VERSION,
  } as AppContext;
  const relay = redis ? await EventRelay.start(redis, events, logger, new ConfigResync(ctx)) : undefined;
  // Cluster-wide periodic jobs run on one replica (docs/decisions/0017-leader-election.md).
  const report = (leading: boolean) => ctx.metrics.leaderChanged(leading);
  ctx.leader = redis ? await Leader.start(redis, { logger, report }) : Leader.solo({ logger, report });
  ctx.retention = new HistoryRetention(database.db, options, logger, { leader: ctx.leader });
  ctx.auth = new AuthService(ctx);
  ctx.users = new UsersService({ usersRepo, refreshTokens: ctx.auth.refreshTokens, secrets, events });
  await ensureSuperAdmin(ctx, opts.print);

  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    // One line per request is written by the onResponse hook below, with the URL redacted.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: 4 * 1024 * 1024,
    // Headers and request timeouts against slow clients (server.ts, docs/operations.md "Abuse limits").
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
    await ctx.meter.flush();
    await ctx.serviceLog.flush();
    await redisAdmission?.close();
    await ctx.leader.close();
    relay?.stop();
    await redis?.close();
  });
  // The retention purge runs in the background once the app is up and stops between two batches on close.
  app.addHook('onReady', async () => ctx.retention.start());
  app.addHook('onClose', async () => ctx.retention.close());
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);

  const routes: BuiltApp['routes'] = [];
  app.addHook('onRoute', (r) => {
    // The API docs page and its assets are public like the document they show.
    if (r.url.startsWith('/api/docs')) r.config = { ...r.config, auth: 'public' };
    const methods = Array.isArray(r.method) ? r.method : [r.method];
    for (const method of methods) {
      if (method === 'HEAD') continue;
      routes.push({ method, url: r.url, auth: r.config?.auth ?? (r.url.startsWith('/api/') ? 'user' : 'public') });
    }
  });
  app.addHook('onRequest', async (req) => attachLocale(req));
  app.addHook('onResponse', async (req, reply) => {
    // Proxied MCP traffic is the data plane: a line per successful call would cost more than the call
    // itself (counted calls are recorded by the meter), so only refused ones are logged at info.
    const level = reply.statusCode < 400 && req.url.startsWith('/proxy/') ? 'debug' : 'info';
    if (!logger.isLevelEnabled(level)) return;
    req.log[level]({ method: req.method, url: redactUrl(req.url), status: reply.statusCode, ms: Math.round(reply.elapsedTime) }, 'request');
  });
  installErrorHandling(app);
  refuseNulInput(app);
  // API spans start before the guard, so refused requests are traced too.
  traceHttp(app, ctx.tracing);
  installGuard(app, ctx);
  instrumentHttp(app, ctx.metrics);
  // Spans still buffered reach the collector before the process ends.
  app.addHook('onClose', async () => ctx.tracing.shutdown());
  registerMetricsRoute(app, ctx.metrics, config.metricsToken);

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

  await app.register(async (api) => registerModules(api.withTypeProvider<ZodTypeProvider>(), ctx), { prefix: '/api' });
  // Processes a killed earlier run left behind go first; this run's are marked, and watched for memory.
  const run = reapLeftoversAndRecordRun(config.dataDir, ctx.logger);
  app.addHook('onClose', async () => run.release());
  memoryWatch.configure({ maxRssMb: config.stdioMaxRssMb });
  // The data plane after the modules: /proxy/* routes, the upstream pool. On close, the proxied calls in
  // flight may finish (SHUTDOWN_GRACE_MS), then its sessions' open streams end and its processes stop.
  ctx.gateway = await createGateway(ctx, app);
  // Leadership is given up first, so another replica takes the periodic jobs over while this one drains.
  app.addHook('preClose', async () => ctx.leader.close());
  app.addHook('preClose', async () => ctx.gateway.close(config.shutdownGraceMs));
  await serveConsole(app, config.webDistDir);
  return { app, ctx, routes };
}

function trustHops(hops: number): (address: string, hop: number) => boolean {
  return (_address, hop) => hop < hops;
}
