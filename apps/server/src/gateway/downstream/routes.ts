import type { ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { isDatabaseUnavailable } from '../../http/db-unavailable.js';
import { LegacySse } from './legacy-sse.js';
import { DATABASE_AWAY, failures, type ProxyFailure, RpcCode, sendFailure } from './rpc-errors.js';
import { type ProxyDeps, type ProxyRequest, StreamableHttp } from './streamable-http.js';

type Handler<R> = (req: R, res: ServerResponse) => Promise<void>;

/**
 * A route answered on the raw response (the MCP faces and the OpenAPI face): CORS headers first, then
 * the handler; a failure it did not answer itself is the database away for a moment (503, the client
 * may retry) or the gateway's own (500, logged, no details), written by `fail` in the face's format.
 */
export function rawRoute(
  origins: Pick<ProxyDeps['origins'], 'decorate'>,
  logger: Logger,
  fail: (res: ServerResponse, failure: ProxyFailure, req: FastifyRequest) => void,
) {
  return <R = ProxyRequest>(handler: Handler<R>) =>
    async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
      reply.hijack();
      // Before anything is written, so that a browser client on an allowed origin can read every answer.
      origins.decorate(req, reply.raw);
      try {
        await handler(req as R, reply.raw);
      } catch (err) {
        // The database away for a moment (a key or session lookup failed): the client may retry.
        if (isDatabaseUnavailable(err)) {
          logger.warn({ url: req.routeOptions.url, err: (err as Error).message }, 'proxy request failed: database unavailable');
          fail(reply.raw, { status: 503, code: RpcCode.InternalError, message: DATABASE_AWAY, headers: { 'retry-after': '5' } }, req);
          return;
        }
        logger.error({ err, url: req.routeOptions.url }, 'proxy request failed');
        fail(reply.raw, { status: 500, code: RpcCode.InternalError, message: 'Internal error' }, req);
      }
    };
}

/**
 * Registers the proxy routes on the root app (not under /api). They are 'public' for the console's
 * guard because they authenticate by API key themselves, and they answer on the raw response: the
 * body is read by the handler (after authentication, within the 4 MiB cap) and replies may turn
 * into event streams.
 */
export async function registerProxyRoutes(
  app: FastifyInstance,
  deps: ProxyDeps,
  logger: Logger,
  /** `/proxy` for services; `/group` for groups' faces, with the group's auth and dispatcher in `deps` (group-face.ts). */
  prefix: '/proxy' | '/group' = '/proxy',
): Promise<void> {
  const http = new StreamableHttp(deps);
  const legacy = new LegacySse(deps);

  const raw = rawRoute(deps.origins, logger, (res, failure) => sendFailure(res, failure));
  const notAllowed = (allow: string) => raw(async (_req, res) => sendFailure(res, failures.methodNotAllowed(allow)));
  /** A CORS preflight gets what the route allows (or 403 for a refused origin); a plain OPTIONS gets 405. */
  const options = (allow: string) =>
    raw(async (req, res) => {
      if (!deps.origins.preflight(req, res, allow)) sendFailure(res, failures.methodNotAllowed(allow));
    });

  await app.register(async (scope) => {
    // Bodies are read by the handlers themselves; no parser runs before authentication.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_req, _payload, done) => done(null, undefined));
    const config = { auth: 'public' as const };
    const others = ['PUT', 'PATCH'] as const;

    scope.post(
      `${prefix}/:name/mcp`,
      { config },
      raw((req, res) => http.post(req, res)),
    );
    scope.get(
      `${prefix}/:name/mcp`,
      { config, exposeHeadRoute: false },
      raw((req, res) => http.get(req, res)),
    );
    scope.delete(
      `${prefix}/:name/mcp`,
      { config },
      raw((req, res) => http.delete(req, res)),
    );
    scope.route({ method: [...others], url: `${prefix}/:name/mcp`, config, handler: notAllowed('GET, POST, DELETE') });
    scope.options(`${prefix}/:name/mcp`, { config }, options('GET, POST, DELETE'));

    scope.get(
      `${prefix}/:name/sse`,
      { config, exposeHeadRoute: false },
      raw((req, res) => legacy.open(req, res)),
    );
    scope.route({ method: [...others, 'POST', 'DELETE'], url: `${prefix}/:name/sse`, config, handler: notAllowed('GET') });
    scope.options(`${prefix}/:name/sse`, { config }, options('GET'));
    scope.post(
      `${prefix}/:name/message`,
      { config },
      raw((req, res) => legacy.message(req, res)),
    );
    scope.route({ method: [...others, 'GET', 'DELETE'], url: `${prefix}/:name/message`, config, handler: notAllowed('POST') });
    scope.options(`${prefix}/:name/message`, { config }, options('POST'));
  });
}
