import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { publicBase } from '../../http/public-base.js';
import { translate } from '../../i18n/index.js';
import { addressKey, limiter } from '../../infra/rate-limit.js';
import type { RedisHub } from '../../infra/redis.js';
import type { OAuthClients } from './clients.js';
import { OAuthError } from './errors.js';
import type { OAuthServerService } from './service.js';

export interface ProtocolDeps {
  service: OAuthServerService;
  clients: OAuthClients;
  options: { get(key: 'ServerAddress'): string; bool(key: 'OAuthClientRegistrationEnabled'): boolean };
  redis?: RedisHub;
  logger: { warn(obj: object, msg: string): void };
}

/** Registrations per client address a minute: enough for any real client, too few to fill the table. */
const REGISTRATIONS_PER_MINUTE = 10;
const FORM_LIMIT = 64 * 1024;

/**
 * The protocol side (not under /api, not the envelope): authorization server metadata (RFC 8414) and
 * its OpenID discovery alias, protected resource metadata (RFC 9728) of the server root and of each
 * MCP endpoint, and the authorize, token, registration (RFC 7591) and revocation (RFC 7009)
 * endpoints. Machines call these, cross-origin from browser-based clients too: CORS is open, no
 * cookie or console token is read.
 */
export async function registerProtocolRoutes(app: FastifyInstance, deps: ProtocolDeps): Promise<void> {
  const registrations = limiter({ keyPrefix: 'oauth_register', points: REGISTRATIONS_PER_MINUTE, duration: 60 }, deps.redis);
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

  const fail = (req: FastifyRequest, reply: FastifyReply, err: unknown) => {
    if (!(err instanceof OAuthError)) throw err;
    const description = `${translate(req.locale ?? 'en', err.key, err.params)}${err.detail ? `: ${err.detail}` : ''}`;
    return reply.code(err.status).header('cache-control', 'no-store').send({ error: err.code, error_description: description });
  };

  await app.register(async (scope) => {
    // Token, registration and revocation requests are forms (RFC 6749 §4.1.3) or JSON (RFC 7591).
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: FORM_LIMIT }, (_req, body, done) => {
      const params = new URLSearchParams(body as string);
      const out: Record<string, string | string[]> = {};
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
    // CORS preflights of browser-based clients, on the exact paths only: the other /.well-known/* paths
    // stay with whoever answers unknown ones.
    const preflight = async (_req: FastifyRequest, reply: FastifyReply) => reply.code(204).send();
    const paths = [
      '/.well-known/oauth-authorization-server',
      '/.well-known/openid-configuration',
      '/.well-known/oauth-protected-resource',
      '/.well-known/oauth-protected-resource/proxy/:name/mcp',
      '/.well-known/oauth-protected-resource/proxy/:name/sse',
      '/.well-known/oauth-protected-resource/group/:name/mcp',
      '/oauth2/token',
      '/oauth2/register',
      '/oauth2/revoke',
    ];
    for (const url of paths) scope.options(url, { config, schema }, preflight);
    for (const url of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
      scope.get(url, { config, schema }, async (req) => serverMetadata(req));
    }
    scope.get('/.well-known/oauth-protected-resource', { config, schema }, async (req) => resourceMetadata(req, '/'));
    for (const [kind, suffix] of [
      ['proxy', 'mcp'],
      ['proxy', 'sse'],
      ['group', 'mcp'],
    ] as const) {
      scope.get<{ Params: { name: string } }>(
        `/.well-known/oauth-protected-resource/${kind}/:name/${suffix}`,
        { config, schema },
        async (req) => resourceMetadata(req, `/${kind}/${encodeURIComponent(req.params.name)}/${suffix}`),
      );
    }
    scope.get('/oauth2/authorize', { config, schema }, async (req, reply) => {
      try {
        const result = await deps.service.authorize((req.query ?? {}) as Record<string, unknown>, base(req));
        return reply.redirect('consentUrl' in result ? result.consentUrl : result.errorRedirect, 302);
      } catch (err) {
        return fail(req, reply, err);
      }
    });

    scope.post('/oauth2/token', { config, schema }, async (req, reply) => {
      try {
        const answer = await deps.service.token(bodyOf(req), base(req));
        return reply.header('cache-control', 'no-store').header('pragma', 'no-cache').send(answer);
      } catch (err) {
        return fail(req, reply, err);
      }
    });

    scope.post('/oauth2/revoke', { config, schema }, async (req, reply) => {
      try {
        await deps.service.revokeToken(bodyOf(req));
        return reply.header('cache-control', 'no-store').send({});
      } catch (err) {
        return fail(req, reply, err);
      }
    });

    scope.post('/oauth2/register', { config, schema }, async (req, reply) => {
      try {
        if (!deps.options.bool('OAuthClientRegistrationEnabled'))
          throw new OAuthError('invalid_request', 'oauth_server.registration_disabled', {}, 403);
        const allowed = await registrations.consume(addressKey(req.ip)).then(
          () => true,
          (res: unknown) => {
            // The limiter's store failed (not a refusal): registration stays open rather than down.
            if (!(res instanceof Error)) return false;
            deps.logger.warn({ err: res }, 'registration limiter failed');
            return true;
          },
        );
        if (!allowed) {
          reply.header('retry-after', '60');
          throw new OAuthError('invalid_request', 'oauth_server.registration_rate_limited', { seconds: 60 }, 429);
        }
        const client = await deps.clients.register(req.body, Date.now());
        return reply.code(201).header('cache-control', 'no-store').send(client);
      } catch (err) {
        return fail(req, reply, err);
      }
    });
  });
}

function bodyOf(req: FastifyRequest): Record<string, unknown> {
  const body = req.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new OAuthError('invalid_request', 'oauth_server.bad_body');
  return body as Record<string, unknown>;
}
