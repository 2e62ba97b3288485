import { envelope, LoginRequest, LogoutRequest, OkEnvelope, RefreshRequest, TokenPair } from '@toolport/contract';
import type { ZodApi } from '../../http/api.js';
import { principalOf } from '../../http/guard.js';
import { ok } from '../../http/locale.js';
import type { AuthService } from './service.js';

export async function authRoutes(api: ZodApi, auth: AuthService): Promise<void> {
  api.post(
    '/auth/login',
    {
      config: { auth: 'public' },
      schema: {
        tags: ['auth'],
        summary: 'Sign in with username and password (rate-limited)',
        security: [],
        body: LoginRequest,
        response: { 200: envelope(TokenPair) },
      },
    },
    async (req, reply) => ok(reply, await auth.login(req.body.username, req.body.password, req.ip), req.t('auth.login_success')),
  );

  api.post(
    '/auth/refresh',
    {
      config: { auth: 'public' },
      schema: {
        tags: ['auth'],
        summary: 'Exchange a refresh token for a new token pair',
        security: [],
        body: RefreshRequest,
        response: { 200: envelope(TokenPair) },
      },
    },
    async (req, reply) => ok(reply, await auth.refresh(req.body.refresh_token)),
  );

  api.post(
    '/auth/logout',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['auth'],
        summary: 'Revoke a refresh token (all of the caller’s when none is given)',
        body: LogoutRequest.nullish(),
        response: { 200: OkEnvelope },
      },
    },
    async (req, reply) => {
      await auth.logout(principalOf(req).id, req.body?.refresh_token);
      return ok(reply, undefined, req.t('auth.logout_success'));
    },
  );
}
