import { endpoints } from '@toolport/contract';
import type { ZodApi } from '../../http/api.js';
import { route } from '../../http/endpoints.js';
import { ok } from '../../http/locale.js';
import type { AuthService } from './service.js';

export async function authRoutes(api: ZodApi, auth: AuthService): Promise<void> {
  route(api, endpoints.auth.login, async (req, reply) =>
    ok(reply, await auth.login(req.body.username, req.body.password, req.ip), req.t('auth.login_success')),
  );

  route(api, endpoints.auth.refresh, async (req, reply) => ok(reply, await auth.refresh(req.body.refresh_token)));

  route(api, endpoints.auth.logout, async (req, reply) => {
    await auth.logout(req.principal.id, req.body?.refresh_token);
    return ok(reply, undefined, req.t('auth.logout_success'));
  });
}
