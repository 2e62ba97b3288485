import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isDatabaseUnavailable } from '../../http/db-unavailable.js';
import { nulField } from '../../http/nul-guard.js';
import { translate } from '../../i18n/index.js';
import { OAuthError, type OAuthErrorCode } from './errors.js';

/** `{error, error_description}`: the RFC's code, and a description in the caller's language (en or zh-CN). */
export function oauthBody(req: FastifyRequest, err: OAuthError): { error: OAuthErrorCode; error_description: string } {
  const text = translate(req.locale ?? 'en', err.key, err.params);
  return { error: err.code, error_description: err.detail ? `${text}: ${err.detail}` : text };
}

/** Registration speaks RFC 7591 (invalid_client_metadata); every other route RFC 6749 (invalid_request). */
const bodyCode = (req: FastifyRequest): OAuthErrorCode =>
  req.routeOptions.url === '/oauth2/register' ? 'invalid_client_metadata' : 'invalid_request';

/** The OAuth error for anything thrown on a protocol route. */
function asOAuthError(req: FastifyRequest, err: unknown, log: (err: unknown) => void): OAuthError {
  if (err instanceof OAuthError) return err;
  const fe = err as FastifyError;
  const code = bodyCode(req);
  if (fe.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new OAuthError(code, 'error.body_too_large', {}, 413);
  if (fe.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return new OAuthError(code, 'error.unsupported_media_type', {}, 415);
  if (fe.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || fe.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || err instanceof SyntaxError)
    return new OAuthError(code, 'error.invalid_json');
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500)
    return new OAuthError(code, 'error.bad_request', {}, fe.statusCode === 429 ? 429 : 400);
  if (isDatabaseUnavailable(err)) return new OAuthError('temporarily_unavailable', 'error.database_unavailable', {}, 503);
  log(err);
  return new OAuthError('server_error', 'error.internal', {}, 500);
}

/**
 * How the protocol routes answer when something is wrong (decision 0041): always `{error,
 * error_description}` with the RFC's code and a fitting status, whatever the input, never the console's
 * envelope and never a 5xx for anything a client sends. Installed on the routes' own scope, so Fastify's
 * own refusals (malformed, empty, oversized JSON or form bodies, unknown content types, `__proto__`
 * keys) land here too.
 */
export function installOAuthErrors(scope: FastifyInstance, logger: { error(obj: object, msg: string): void }): void {
  scope.setErrorHandler((err: unknown, req: FastifyRequest, reply: FastifyReply) => {
    const oauth = asOAuthError(req, err, (e) => logger.error({ err: e }, 'oauth protocol route failed'));
    if (oauth.status === 503) reply.header('retry-after', '5');
    if (oauth.status === 429) reply.header('retry-after', String(oauth.params.seconds ?? 60));
    return reply.code(oauth.status).header('cache-control', 'no-store').send(oauthBody(req, oauth));
  });
  // Text with NUL cannot be stored by PostgreSQL nor carried in a redirect: refused before any handler
  // (the authorization endpoint checks its query itself, to show a person its error page).
  scope.addHook('preValidation', async (req) => {
    if (req.routeOptions.url !== '/oauth2/authorize') refuseNul(req);
  });
}

/** Refuses a query or body holding text with NUL (http/nul-guard.ts walks it without recursion). */
export function refuseNul(req: FastifyRequest): void {
  const field = nulField('query', req.query) ?? nulField('body', req.body);
  if (field) throw new OAuthError(bodyCode(req), 'error.nul_character', { field });
}

/** Exact protocol paths and the methods they answer; any other method there is a 405. */
export type PathMethods = ReadonlyArray<readonly [path: string, methods: readonly string[]]>;

/**
 * The protocol's unknown paths and methods, in the OAuth format too: 405 with Allow on a known path, 404
 * under `/oauth2` and the metadata prefixes (never the console page nor the envelope). Not-found handlers
 * of their own prefixes rather than routes, so the route table lists only what is served.
 */
export async function answerUnknown(scope: FastifyInstance, known: PathMethods, prefixes: readonly string[]): Promise<void> {
  const patterns = known.map(([path, methods]) => ({
    pattern: new RegExp(`^${path.replace(/[.]/g, '\\.').replace(/:[a-z]+/g, '[^/]+')}/?$`),
    allow: [...methods, ...(methods.includes('GET') ? ['HEAD'] : [])].join(', '),
  }));
  const handler = (req: FastifyRequest, reply: FastifyReply) => {
    const path = (req.url.split('?')[0] ?? '').slice(0, 200);
    const known = patterns.find((p) => p.pattern.test(path));
    const err = known
      ? new OAuthError('invalid_request', 'oauth_server.method_not_allowed', { method: req.method, path }, 405)
      : new OAuthError('invalid_request', 'error.path_not_found', { method: req.method, path }, 404);
    if (known) reply.header('allow', known.allow);
    return reply.code(err.status).header('cache-control', 'no-store').send(oauthBody(req, err));
  };
  for (const prefix of prefixes) await scope.register(async (p) => p.setNotFoundHandler(handler), { prefix });
}
