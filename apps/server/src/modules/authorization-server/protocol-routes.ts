import { isAdminRole } from '@toolport/contract';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { preference } from '../../http/accept.js';
import type { Principal } from '../../http/principals.js';
import { publicBase } from '../../http/public-base.js';
import { MAX_METADATA_BYTES, type OAuthClients } from './clients.js';
import { OAuthError } from './errors.js';
import { answerUnknown, installOAuthErrors, refuseNul } from './protocol-answers.js';
import type { AuthorizationServerService } from './service.js';

export interface ProtocolDeps {
  service: AuthorizationServerService;
  clients: OAuthClients;
  options: { get(key: 'ServerAddress'): string; bool(key: 'OAuthClientRegistrationEnabled'): boolean };
  /** Whether the MCP endpoints answer to a host name (gateway's origin policy): the metadata follows the same rule. */
  hostAllowed(host: string): boolean;
  /** The console caller behind an `Authorization` header: an admin registers trusted clients (decision 0041). */
  caller(req: FastifyRequest): Promise<Principal>;
  /** Registrations per client address (infra/rate-limit.ts `admission`). */
  admitRegistration(address: string): Promise<number | undefined>;
  logger: { error(obj: object, msg: string): void };
}

const FORM_LIMIT = 64 * 1024;
/** Client metadata is at most 16 KiB; a registration body four times that is refused unread (413). */
const REGISTRATION_LIMIT = 4 * MAX_METADATA_BYTES;

const SERVER_METADATA = ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration'];
const RESOURCE_METADATA = '/.well-known/oauth-protected-resource';
const ENDPOINT_METADATA = [
  ['proxy', 'mcp'],
  ['proxy', 'sse'],
  ['group', 'mcp'],
] as const;

/**
 * The protocol side (not under /api, not the envelope): authorization server metadata (RFC 8414) and
 * its OpenID discovery alias, protected resource metadata (RFC 9728) of the server root and of each
 * MCP endpoint, and the authorize, token, registration (RFC 7591) and revocation (RFC 7009)
 * endpoints. Machines call these, cross-origin from browser-based clients too: CORS is open, no
 * console token is read except an admin's registering a client. Every refusal is an OAuth error
 * (protocol-answers.ts); the host every URL is built on must be one the gateway answers to.
 */
export async function registerProtocolRoutes(app: FastifyInstance, deps: ProtocolDeps): Promise<void> {
  const base = (req: FastifyRequest) => publicBase(req, deps.options.get('ServerAddress'));

  const serverMetadata = (req: FastifyRequest) => {
    const issuer = base(req);
    return {
      issuer,
      authorization_endpoint: `${issuer}/oauth2/authorize`,
      token_endpoint: `${issuer}/oauth2/token`,
      ...(deps.options.bool('OAuthClientRegistrationEnabled') ? { registration_endpoint: `${issuer}/oauth2/register` } : {}),
      revocation_endpoint: `${issuer}/oauth2/revoke`,
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none'],
      revocation_endpoint_auth_methods_supported: ['none'],
      authorization_response_iss_parameter_supported: true,
      client_id_metadata_document_supported: true,
      service_documentation: `${issuer}/api/docs`,
    };
  };
  const resourceMetadata = (req: FastifyRequest, path: string) => {
    const issuer = base(req);
    return {
      resource: `${issuer}${path}`,
      authorization_servers: [issuer],
      bearer_methods_supported: ['header'],
      resource_name: path === '/' ? 'Toolport: all my MCP endpoints' : `Toolport ${path}`,
      resource_documentation: `${issuer}/api/docs`,
    };
  };

  await app.register(async (scope) => {
    installOAuthErrors(scope, deps.logger);
    // Without a ServerAddress every URL below is built on the request's host: only a host the MCP
    // endpoints answer to may name the issuer (a foreign Host would poison metadata and redirects).
    scope.addHook('onRequest', async (req) => {
      if (deps.options.get('ServerAddress')) return;
      const host = req.host;
      if (!host || !deps.hostAllowed(host))
        throw new OAuthError('invalid_request', 'oauth_server.foreign_host', { host: String(host ?? '').slice(0, 100) }, 421);
    });
    // Token, registration and revocation requests are forms (RFC 6749 §4.1.3) or JSON (RFC 7591).
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: FORM_LIMIT }, (_req, body, done) => {
      const params = new URLSearchParams(body as string);
      const out: Record<string, string | string[]> = Object.create(null);
      for (const key of new Set(params.keys())) {
        const all = params.getAll(key);
        out[key] = all.length === 1 ? (all[0] as string) : all;
      }
      done(null, out);
    });
    scope.addHook('onSend', async (req, reply, payload) => {
      reply.header('access-control-allow-origin', '*');
      if (req.method === 'OPTIONS') {
        reply.header('access-control-allow-methods', 'GET, POST, OPTIONS');
        reply.header('access-control-allow-headers', 'authorization, content-type, mcp-protocol-version');
        reply.header('access-control-max-age', '600');
      }
      return payload;
    });
    const config = { auth: 'public' as const };
    const schema = { hide: true };
    // The documents name this server's address: no cache may keep one host's copy for another.
    const metadata = (reply: FastifyReply) => reply.header('cache-control', 'no-store').header('vary', 'Host');
    // CORS preflights of browser-based clients, on the exact paths only.
    const preflight = async (_req: FastifyRequest, reply: FastifyReply) => reply.code(204).send();
    const endpointPaths = ENDPOINT_METADATA.map(([kind, suffix]) => `${RESOURCE_METADATA}/${kind}/:name/${suffix}`);
    for (const url of [...SERVER_METADATA, RESOURCE_METADATA, ...endpointPaths, '/oauth2/token', '/oauth2/register', '/oauth2/revoke'])
      scope.options(url, { config, schema }, preflight);
    for (const url of SERVER_METADATA) scope.get(url, { config, schema }, async (req, reply) => metadata(reply).send(serverMetadata(req)));
    scope.get(RESOURCE_METADATA, { config, schema }, async (req, reply) => metadata(reply).send(resourceMetadata(req, '/')));
    for (const [kind, suffix] of ENDPOINT_METADATA) {
      scope.get<{ Params: { name: string } }>(`${RESOURCE_METADATA}/${kind}/:name/${suffix}`, { config, schema }, async (req, reply) =>
        metadata(reply).send(resourceMetadata(req, `/${kind}/${encodeURIComponent(req.params.name)}/${suffix}`)),
      );
    }

    scope.get('/oauth2/authorize', { config, schema }, async (req, reply) => {
      reply.header('cache-control', 'no-store');
      try {
        refuseNul(req);
        const result = await deps.service.authorize((req.query ?? {}) as Record<string, unknown>, base(req), {
          requester: req.ip,
          cookie: req.headers.cookie,
        });
        return reply.redirect('consentUrl' in result ? result.consentUrl : result.errorRedirect, 302);
      } catch (err) {
        // A person in a browser gets Toolport's own page, in their language; the client is not told (decision 0041).
        if (err instanceof OAuthError && preference(req.headers.accept) === 'html') {
          if (err.status === 429) reply.header('retry-after', String(err.params.seconds ?? 60));
          return reply.redirect(errorPage(err), 303);
        }
        throw err;
      }
    });

    scope.post('/oauth2/token', { config, schema }, async (req, reply) => {
      const answer = await deps.service.token(bodyOf(req), base(req));
      return reply.header('cache-control', 'no-store').header('pragma', 'no-cache').send(answer);
    });

    scope.post('/oauth2/revoke', { config, schema }, async (req, reply) => {
      await deps.service.revokeToken(bodyOf(req));
      return reply.header('cache-control', 'no-store').send({});
    });

    scope.post('/oauth2/register', { config, schema, bodyLimit: REGISTRATION_LIMIT }, async (req, reply) => {
      const admin = await adminOf(req, deps);
      if (!admin && !deps.options.bool('OAuthClientRegistrationEnabled'))
        throw new OAuthError('invalid_request', 'oauth_server.registration_disabled', {}, 403);
      const wait = await deps.admitRegistration(req.ip);
      if (wait !== undefined) throw new OAuthError('invalid_request', 'oauth_server.registration_rate_limited', { seconds: wait }, 429);
      const client = await deps.clients.register(req.body, Date.now(), admin ? 'admin' : 'registered');
      return reply.code(201).header('cache-control', 'no-store').send(client);
    });

    await answerUnknown(
      scope,
      [
        ...SERVER_METADATA.map((p) => [p, ['GET', 'OPTIONS']] as const),
        [RESOURCE_METADATA, ['GET', 'OPTIONS']],
        ...endpointPaths.map((p) => [p, ['GET', 'OPTIONS']] as const),
        ['/oauth2/authorize', ['GET']],
        ['/oauth2/token', ['POST', 'OPTIONS']],
        ['/oauth2/register', ['POST', 'OPTIONS']],
        ['/oauth2/revoke', ['POST', 'OPTIONS']],
      ],
      ['/oauth2', ...SERVER_METADATA, RESOURCE_METADATA],
    );
  });
}

/** Toolport's error page for a refusal shown to a person: the code and the reason's name, never input text. */
function errorPage(err: OAuthError): string {
  const reason = err.key.slice(err.key.indexOf('.') + 1);
  return `/oauth/error?${new URLSearchParams({ error: err.code, reason })}`;
}

/**
 * Whether an admin registers (with their console token as the initial access token, RFC 7591 §3): any
 * other Authorization, or none, is an ordinary registration, as clients that send one by habit expect.
 */
async function adminOf(req: FastifyRequest, deps: ProtocolDeps): Promise<boolean> {
  if (req.headers.authorization === undefined) return false;
  const principal = await deps.caller(req).catch(() => undefined);
  return principal !== undefined && isAdminRole(principal.role);
}

function bodyOf(req: FastifyRequest): Record<string, unknown> {
  const body = req.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new OAuthError('invalid_request', 'oauth_server.bad_body');
  return body as Record<string, unknown>;
}
