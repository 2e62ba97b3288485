import { allowedHosts } from '../gateway/index.js';
import { Principals } from '../http/principals.js';
import { addressCheckedFetch } from '../infra/outbound.js';
import { type AuthDeps, type AuthModule, createAuthModule, createRefreshTokens } from '../modules/auth/index.js';
import { type AuthorizationServerModule, createAuthorizationServerModule } from '../modules/authorization-server/index.js';
import type { ExposurePorts } from '../modules/exposure/index.js';
import type { OptionsService } from '../modules/options/index.js';
import type { ServicesCatalog } from '../modules/services/index.js';
import { createSignInProvidersModule, type SignInProvidersModule } from '../modules/sign-in-providers/index.js';
import { createUpstreamAuthorizationModule, type UpstreamAuthorizationModule } from '../modules/upstream-authorization/index.js';
import { createUsersModule, type UsersModule } from '../modules/users/index.js';
import type { Core } from './core.js';
import type { Platform } from './platform.js';

/** Registers a module's close on the lifecycle as it is built (docs/decisions/0062), and returns it. */
export function closing<M extends { close(): Promise<void> }>(lifecycle: Core['lifecycle'], name: string, module: M): M {
  lifecycle.add({ name, close: () => module.close() });
  return module;
}

export type IdentityDeps = Pick<Core, 'config' | 'db' | 'logger' | 'secrets' | 'events' | 'lifecycle'> &
  Pick<Platform, 'redis' | 'metrics'> & {
    options: OptionsService;
    /** Where bootstrap writes the generated admin password. */
    print?: (line: string) => void;
  };

/** Who is who: users, the principals the guard asks, console sign-in and its providers. */
export interface Identity {
  users: UsersModule;
  principals: Principals;
  auth: AuthModule;
  signIn: SignInProvidersModule;
}

/** Builds the users, sign-in and its providers, and makes sure a super admin exists. */
export async function buildIdentity(d: IdentityDeps): Promise<Identity> {
  const { config, db, logger, secrets, events, lifecycle, redis, metrics, options } = d;
  // Sign-in issues refresh tokens, the users module revokes them: the store comes before both.
  const refreshTokens = createRefreshTokens(db);
  const users = closing(lifecycle, 'users', createUsersModule({ db, refreshTokens, secrets, events, config, logger }));
  const principals = new Principals(users.repo, events);
  // A refresh asks the sign-in providers (built below) whether they still vouch for the person (decision 0063).
  const providerCheck: NonNullable<AuthDeps['providerCheck']> = (user) => signIn.service.checkAtRefresh(user);
  const auth = closing(
    lifecycle,
    'auth',
    createAuthModule({ refreshTokens, usersRepo: users.repo, secrets, redis, metrics, providerCheck }),
  );
  const signIn = closing(
    lifecycle,
    'sign-in providers',
    createSignInProvidersModule({
      db,
      config,
      options,
      secrets,
      usersRepo: users.repo,
      auth: auth.service,
      events,
      redis,
      principals,
      logger,
    }),
  );
  await users.ensureSuperAdmin(d.print);
  return { users, principals, auth, signIn };
}

export type AuthorizationDeps = Pick<Core, 'config' | 'db' | 'logger' | 'secrets' | 'events' | 'lifecycle' | 'remote'> &
  Pick<Platform, 'redis' | 'leader'> & {
    options: OptionsService;
    principals: Principals;
    catalog: ServicesCatalog;
    ports: ExposurePorts;
    /** The health check of a service whose connection changed (bound late: the services module comes after the gateway). */
    recheck: (serviceId: number, as?: { id: number }) => Promise<unknown>;
  };

/** The two OAuth roles: Toolport as the authorization server of its MCP endpoints, and as the client of remote services. */
export interface Authorization {
  authorizationServer: AuthorizationServerModule;
  upstreamAuthorization: UpstreamAuthorizationModule;
}

export function buildAuthorization(d: AuthorizationDeps): Authorization {
  const { config, db, logger, secrets, events, lifecycle, remote, redis, leader, options, principals, catalog, ports } = d;
  // The proxy accepts the authorization server's access tokens through a gateway port.
  const authorizationServer = closing(
    lifecycle,
    'authorization server',
    createAuthorizationServerModule({
      db,
      secrets,
      options,
      principals,
      switchedOffBy: (userId) => catalog.switchedOffBy(userId),
      events,
      endpoints: {
        // The gateway's own access rule (decision 0040), asked through the ports /proxy and /group ask.
        access: async (user, kind, name) => {
          if (kind === 'proxy') {
            const service = await catalog.byName(name);
            if (!service?.enabled) return 'unknown_endpoint';
            return (await ports.policy.mayUseService(user, service.id)) ? 'allowed' : 'no_access';
          }
          const group = await ports.directory.byName(name);
          if (!group) return 'unknown_endpoint';
          return (await ports.directory.mayUseGroup(user, group.id)) ? 'allowed' : 'no_access';
        },
      },
      // Client ID Metadata Documents are named by anyone: private addresses only if the operator allows (decision 0041).
      fetch: addressCheckedFetch(() => config.clientFetches.allowPrivateNetwork),
      fetchTimeoutMs: config.clientFetches.timeoutMs,
      hostAllowed: allowedHosts(options, config.proxyAccess),
      redis,
      leader,
      logger,
    }),
  );
  // The gateway's remote links ask the upstream authorization for their tokens.
  const upstreamAuthorization = closing(
    lifecycle,
    'upstream authorization',
    createUpstreamAuthorizationModule({
      db,
      secrets,
      events,
      options,
      catalog,
      access: ports.access,
      logger,
      leader,
      fetch: remote.fetch,
      recheck: d.recheck,
    }),
  );
  return { authorizationServer, upstreamAuthorization };
}
