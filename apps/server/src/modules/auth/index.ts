import type { Db } from '../../db/db.js';
import type { ZodApi } from '../../http/api.js';
import { RefreshTokensRepo } from './repo.js';
import { authRoutes } from './routes.js';
import { type AuthDeps, AuthService } from './service.js';

export type { RefreshTokensRepo } from './repo.js';
export type { AuthDeps, AuthService } from './service.js';

export interface AuthModule {
  service: AuthService;
  routes(api: ZodApi): Promise<void>;
  close(): Promise<void>;
}

/** Password sign-in, token refresh and sign-out; `deps.refreshTokens` comes from `createRefreshTokens`. */
export function createAuthModule(deps: AuthDeps): AuthModule {
  const service = new AuthService(deps);
  return {
    service,
    routes: (api) => authRoutes(api, service),
    close: async () => undefined,
  };
}

/**
 * The refresh token store, built before both modules that use it: sign-in issues and rotates the
 * tokens, the users module revokes them all when a password changes or an account is disabled.
 */
export const createRefreshTokens = (db: Db): RefreshTokensRepo => new RefreshTokensRepo(db);
