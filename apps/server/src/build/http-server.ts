import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import { jsonSchemaTransform, serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { type DatabaseGate, DatabaseUnavailableError } from '../db/availability.js';
import { answerClientError, answerFrameworkError, installErrorHandling } from '../http/error-handler.js';
import { AppError } from '../http/errors.js';
import { installGuard } from '../http/guard.js';
import { refuseAmbiguousRequests } from '../http/hygiene.js';
import { attachLocale } from '../http/locale.js';
import { refuseNulInput } from '../http/nul-guard.js';
import { httpServerOptions } from '../http/server-options.js';
import { serveConsole } from '../http/static.js';
import { redactUrl } from '../infra/logger.js';
import { instrumentHttp, registerMetricsRoute } from '../infra/metrics.js';
import { traceHttp } from '../infra/tracing.js';
import type { Lifecycle } from '../lifecycle.js';
import { VERSION } from '../version.js';
import type { ServerModules, ServerParts } from './server-parts.js';

/** How often connections a client keeps open are looked at while the server closes. */
const IDLE_SWEEP_MS = 100;

/** API routes that answer without the database. */
const WITHOUT_DATABASE = /^\/api\/(?:health|ready|status)(?:[/?]|$)/;
/** The MCP data plane and its OpenAPI face: a service's (`/proxy/`), a group's (`/group/`), either's OpenAPI face. */
const isDataPlane = (url: string): boolean => url.startsWith('/proxy/') || url.startsWith('/group/') || url.startsWith('/openapi/');

export type RouteTable = { method: string; url: string; auth: string; endpoint: boolean }[];

/**
 * The HTTP server built from the parts: Fastify and its hooks, the API docs, every module's routes under
 * /api, the gateway's /proxy, /group and /openapi, the OAuth protocol routes and the console. Registered on
 * the lifecycle as the part `http`, closed by refusing new requests, stopping the
 * gateway (its calls in flight may finish within SHUTDOWN_GRACE_MS: their streams are this server's
 * connections), then closing Fastify. Fastify's hooks close only HTTP streams (the batch import's progress).
 */
export async function buildHttpServer(
  parts: ServerParts,
  modules: ServerModules,
  gate: DatabaseGate,
  lifecycle: Lifecycle,
): Promise<{ app: FastifyInstance; routes: RouteTable }> {
  const { config, logger, gateway, metrics } = parts;
  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
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
  let closing = false;
  let closedByFastify = false;
  lifecycle.add({
    // No start: Fastify gets ready when server.ts listens (or a test injects), so a test may add a route first.
    name: 'http',
    async close() {
      // Requests still arriving on open connections are refused; server.ts has stopped the listener already.
      closing = true;
      sweepIdleConnections(app, config.shutdownGraceMs + 15_000);
      await gateway.stop(config.shutdownGraceMs);
      if (!closedByFastify) await app.close();
    },
    closeTimeoutMs: config.shutdownGraceMs + 15_000,
  });
  // `app.close()` called directly (tests, benchmarks) takes the same path: the whole lifecycle closes here, its
  // `http` part without closing Fastify again. Parts close through the lifecycle only, never through a Fastify hook.
  app.addHook('preClose', async () => {
    if (closing) return;
    closedByFastify = true;
    await lifecycle.close();
  });
  app.addHook('onRequest', async () => {
    if (closing) throw new AppError(503, 'error.shutting_down', undefined, { headers: { connection: 'close' } });
  });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);

  const routes: RouteTable = [];
  app.addHook('onRoute', (r) => {
    // The API docs page and its assets are public like the document they show.
    if (r.url.startsWith('/api/docs')) r.config = { ...r.config, auth: 'public' };
    const methods = Array.isArray(r.method) ? r.method : [r.method];
    for (const method of methods) {
      if (method === 'HEAD') continue;
      const auth = r.config?.auth ?? (r.url.startsWith('/api/') ? 'user' : 'public');
      routes.push({ method, url: r.url, auth, endpoint: r.config?.endpoint === true });
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
    // Proxied MCP traffic is the data plane (services' and groups' faces): a line per successful call would
    // cost more than the call itself (counted calls are recorded by the meter), so only refused ones are logged at info.
    const level = reply.statusCode < 400 && isDataPlane(req.url) ? 'debug' : 'info';
    if (!logger.isLevelEnabled(level)) return;
    req.log[level]({ method: req.method, url: redactUrl(req.url), status: reply.statusCode, ms: Math.round(reply.elapsedTime) }, 'request');
  });
  installErrorHandling(app);
  refuseNulInput(app);
  // API spans start before the guard, so refused requests are traced too.
  traceHttp(app, parts.tracing);
  installGuard(app, { secrets: parts.secrets, principals: parts.principals });
  // Every administrative change and sign-in answered under /api leaves one audit entry (modules/audit).
  modules.audit.install(app);
  instrumentHttp(app, metrics);
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

  // Every API module under /api, in the order build/server-parts.ts lists them.
  await app.register(
    async (plain) => {
      const api = plain.withTypeProvider<ZodTypeProvider>();
      for (const module of modules.api) await module.routes(api);
    },
    { prefix: '/api' },
  );
  // The proxy routes after the API's.
  await gateway.mount(app);
  // The OAuth protocol routes (/.well-known/*, /oauth2/*) are not under /api and speak OAuth, not the envelope.
  await modules.authorizationServer.mount(app);
  await serveConsole(app, config.webDistDir);
  return { app, routes };
}

function trustHops(hops: number): (address: string, hop: number) => boolean {
  return (_address, hop) => hop < hops;
}

/**
 * Closes each connection a client keeps open as soon as nothing is in progress on it, until the server has
 * closed (at most `forMs`). Node's server.close() closes only the connections idle at that moment: one whose
 * request ends later would stay open for the keep-alive time (72 s) and hold the close that long.
 */
function sweepIdleConnections(app: FastifyInstance, forMs: number): void {
  const server = app.server;
  const sweep = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS);
  const stop = () => {
    clearInterval(sweep);
    clearTimeout(limit);
  };
  const limit = setTimeout(stop, forMs);
  sweep.unref();
  limit.unref();
  server.once('close', stop);
}
