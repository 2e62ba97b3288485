// Sign-in providers: people sign in to the console with GitHub, Google or any OpenID Connect provider, and link
// those identities to their account. (Toolport as an authorization server for MCP clients is
// modules/authorization-server; Toolport as an OAuth client of remote tool servers is modules/upstream-authorization.)
import type { Db } from '../../db/db.js';
import type { ZodApi } from '../../http/api.js';
import type { GuardDeps } from '../../http/guard.js';
import { OAuthRepo } from './repo.js';
import { oauthRoutes } from './routes.js';
import { type SignInProvidersDeps, SignInProvidersService } from './service.js';

export type { SignInProvidersService } from './service.js';

export interface SignInProvidersModuleDeps extends SignInProvidersDeps {
  /** The pending sign-ins and the linked provider identities. */
  db: Db;
  /** Who the caller is, when a provider is linked to a signed-in account. */
  principals: GuardDeps['principals'];
}

export interface SignInProvidersModule {
  service: SignInProvidersService;
  routes(api: ZodApi): Promise<void>;
  close(): Promise<void>;
}

/** Sign-in with GitHub, Google and OpenID Connect providers, and linking them to an account. */
export function createSignInProvidersModule(deps: SignInProvidersModuleDeps): SignInProvidersModule {
  const service = new SignInProvidersService(deps, new OAuthRepo(deps.db));
  return {
    service,
    routes: (api) => oauthRoutes(api, service, deps),
    close: async () => undefined,
  };
}
