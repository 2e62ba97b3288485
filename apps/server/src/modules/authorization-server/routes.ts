import { type ConnectedApp, endpoints, Role } from '@toolport/contract';
import type { ZodApi } from '../../http/api.js';
import { route } from '../../http/endpoints.js';
import { forbidden, notFound } from '../../http/errors.js';
import { ok } from '../../http/locale.js';
import type { Principal } from '../../http/principals.js';
import { publicBase } from '../../http/public-base.js';
import type { AuthorizationServerService, ConnectedAppEntry } from './service.js';

export interface ApiRouteDeps {
  service: AuthorizationServerService;
  options: { get(key: 'ServerAddress'): string };
  principals: { byId(id: number): Promise<Principal | null> };
}

/** One client identity's grants as one row (decision 0054): the newest approval names it, the latest use counts. */
const present = ({ newest, grants }: ConnectedAppEntry): ConnectedApp => {
  const used = grants.map((g) => g.last_used_at).filter((t): t is number => t !== null);
  return {
    id: newest.id,
    client_id: newest.client_id,
    client_name: newest.client_name,
    resource: newest.resource,
    approved_at: newest.created_at,
    last_used_at: used.length ? Math.max(...used) : null,
    grant_count: grants.length,
  };
};

/**
 * The console's side: the consent page's request and decision, the caller's Connected apps, and an
 * admin's view of a user's. An admin acts on users of lower role only (the super admin on everyone),
 * as with every other user administration (docs/decisions/0005-user-administration-rules.md).
 */
export async function oauthServerRoutes(api: ZodApi, deps: ApiRouteDeps): Promise<void> {
  const e = endpoints.oauthServer;
  const base = (req: Parameters<typeof publicBase>[0]) => publicBase(req, deps.options.get('ServerAddress'));

  route(api, e.consent, async (req, reply) => {
    const view = await deps.service.consentView(req.params.id, req.principal, base(req));
    if (!view) throw notFound('oauth_server.request_gone');
    return ok(reply, {
      client_id: view.clientId,
      client_name: view.clientName,
      redirect_host: view.redirectHost,
      logo_uri: view.logoUri,
      resource: view.resource,
      endpoint: view.endpoint,
      allowed: view.allowed,
      ...(view.refusal ? { refusal: view.refusal } : {}),
    });
  });

  route(api, e.decide, async (req, reply) => {
    const target = await deps.service.decide(req.params.id, req.principal, req.body.allow, base(req));
    if (!target) throw notFound('oauth_server.request_gone');
    // An Allow is remembered in this browser: later errors of this client may go back to it (decision 0041).
    const approval = await deps.service.rememberApproval(target, base(req).startsWith('https:'));
    if (approval) reply.header('set-cookie', approval);
    return ok(reply, { redirect_to: target });
  });

  route(api, e.myApps, async (req, reply) => ok(reply, (await deps.service.appsOf(req.principal.id)).map(present)));

  route(api, e.revokeMyApp, async (req, reply) => {
    if (!(await deps.service.revokeApp(req.params.id, req.principal.id))) throw notFound('oauth_server.grant_gone');
    return ok(reply, undefined, req.t('oauth_server.app_revoked'));
  });

  const manageable = async (actor: Principal, userId: number) => {
    const target = await deps.principals.byId(userId);
    if (!target) throw notFound('error.not_found');
    if (actor.id !== target.id && actor.role !== Role.SuperAdmin && actor.role <= target.role) throw forbidden();
  };

  route(api, e.userApps, async (req, reply) => {
    await manageable(req.principal, req.params.userId);
    return ok(reply, (await deps.service.appsOf(req.params.userId)).map(present));
  });

  route(api, e.revokeUserApp, async (req, reply) => {
    await manageable(req.principal, req.params.userId);
    if (!(await deps.service.revokeApp(req.params.id, req.params.userId))) throw notFound('oauth_server.grant_gone');
    return ok(reply, undefined, req.t('oauth_server.app_revoked'));
  });
}
