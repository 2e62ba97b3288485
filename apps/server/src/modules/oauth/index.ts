import type { Db } from '../../db/db.js';
import type { ZodApi } from '../../http/api.js';
import type { GuardDeps } from '../../http/guard.js';
import { OAuthRepo } from './repo.js';
import { oauthRoutes } from './routes.js';
import { type OAuthDeps, OAuthService } from './service.js';

export type { OAuthService } from './service.js';

export interface OAuthModuleDeps extends OAuthDeps {
  /** The pending sign-ins and the linked provider identities. */
  db: Db;
  /** Who the caller is, when a provider is linked to a signed-in account. */
  principals: GuardDeps['principals'];
}

export interface OAuthModule {
  service: OAuthService;
  routes(api: ZodApi): Promise<void>;
  close(): Promise<void>;
}

/** Sign-in with GitHub and Google, and linking them to an account. */
export function createOAuthModule(deps: OAuthModuleDeps): OAuthModule {
  const service = new OAuthService(deps, new OAuthRepo(deps.db));
  return {
    service,
    routes: (api) => oauthRoutes(api, service, deps),
    close: async () => undefined,
  };
}
