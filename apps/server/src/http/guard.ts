import { type AuthLevel, isAdminRole, UserStatus } from '@toolport/contract';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Secrets } from '../infra/secrets.js';
import { verifyAccessToken } from './access-tokens.js';
import { AppError, forbidden, unauthorized } from './errors.js';
import type { Principal, Principals } from './principals.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Who may call the route; an /api route that does not say is 'user'. */
    auth?: AuthLevel;
  }
  interface FastifyRequest {
    principal: Principal | null;
  }
}

export function bearerToken(req: FastifyRequest): string | null {
  const header = req.headers.authorization;
  if (!header) return null;
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  return match?.[1] ?? null;
}

/** What checking a console request's caller reads: the token signing key and the current principals. */
export interface GuardDeps {
  secrets: Pick<Secrets, 'jwtKey'>;
  principals: Pick<Principals, 'byId'>;
}

/** The signed-in user of a console request, or an AppError (401 / 403). */
export async function authenticate(deps: GuardDeps, req: FastifyRequest): Promise<Principal> {
  const token = bearerToken(req);
  if (!token) throw unauthorized('auth.token_missing');
  const claims = await verifyAccessToken(deps.secrets.jwtKey, token);
  if (!claims) throw unauthorized();
  const principal = await deps.principals.byId(claims.userId);
  if (!principal || principal.authVersion !== claims.authVersion) throw unauthorized();
  if (principal.status !== UserStatus.Enabled) throw new AppError(401, 'auth.user_disabled');
  return principal;
}

export function installGuard(app: FastifyInstance, deps: GuardDeps): void {
  app.decorateRequest('principal', null);
  app.addHook('onRequest', async (req) => {
    // Unknown routes fall through to the JSON 404; non-API paths (console, proxy) authenticate themselves.
    if (req.routeOptions.url === undefined) return;
    const level = req.routeOptions.config?.auth ?? (req.routeOptions.url.startsWith('/api/') ? 'user' : 'public');
    if (level === 'public') return;
    req.principal = await authenticate(deps, req);
    if (level === 'admin' && !isAdminRole(req.principal.role)) throw forbidden();
  });
}
