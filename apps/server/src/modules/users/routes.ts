import { endpoints, USERS_TOTAL_HEADER } from '@toolport/contract';
import type { ZodApi } from '../../http/api.js';
import { route } from '../../http/endpoints.js';
import { ok } from '../../http/locale.js';
import type { UsersService } from './service.js';

/** The caller's own account (any signed-in user) and user administration (admins). */
export async function userRoutes(api: ZodApi, users: UsersService): Promise<void> {
  route(api, endpoints.users.self, async (req, reply) => ok(reply, await users.self(req.principal.id)));

  route(api, endpoints.users.updateSelf, async (req, reply) =>
    ok(reply, await users.updateSelf(req.principal.id, req.body), req.t('user.profile_updated')),
  );

  route(api, endpoints.users.changePassword, async (req, reply) => {
    await users.changePassword(req.principal.id, req.body);
    return ok(reply, undefined, req.t('user.password_changed'));
  });

  for (const rotateToken of [endpoints.users.rotateToken, endpoints.users.rotateTokenPost]) {
    route(api, rotateToken, async (req, reply) => ok(reply, await users.rotateApiKey(req.principal.id), req.t('user.token_rotated')));
  }

  route(api, endpoints.users.list, async (req, reply) => {
    const { users: page, total } = await users.list(req.query.p);
    reply.header(USERS_TOTAL_HEADER, String(total));
    return ok(reply, page);
  });

  route(api, endpoints.users.search, async (req, reply) => ok(reply, await users.search(req.query.keyword)));

  route(api, endpoints.users.create, async (req, reply) =>
    ok(reply, await users.createAs(req.principal, req.body), req.t('user.created'), 201),
  );

  route(api, endpoints.users.edit, async (req, reply) => ok(reply, await users.editAs(req.principal, req.body), req.t('user.updated')));

  route(api, endpoints.users.remove, async (req, reply) => {
    await users.deleteAs(req.principal, req.params.id);
    return ok(reply, undefined, req.t('user.deleted'));
  });

  route(api, endpoints.users.manage, async (req, reply) =>
    ok(reply, await users.manageAs(req.principal, req.body.username, req.body.action), req.t('user.manage_done')),
  );
}
