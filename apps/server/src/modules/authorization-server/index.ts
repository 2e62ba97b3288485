// The authorization server: Toolport issues OAuth 2.1 tokens to MCP clients for its own endpoints (registration,
// authorize and consent, token, revocation, metadata). Console sign-in is modules/sign-in-providers.
import type { FastifyInstance } from 'fastify';
import type { Db } from '../../db/db.js';
import type { AccessTokenPort } from '../../gateway/index.js';
import type { ZodApi } from '../../http/api.js';
import { authenticate } from '../../http/guard.js';
import type { Principal } from '../../http/principals.js';
import type { ConfigEvents } from '../../infra/events.js';
import type { Leadership } from '../../infra/leader.js';
import type { FetchLike } from '../../infra/outbound.js';
import { addressKey, admission } from '../../infra/rate-limit.js';
import type { RedisHub } from '../../infra/redis.js';
import type { Secrets } from '../../infra/secrets.js';
import { OAuthClients } from './clients.js';
import { registerProtocolRoutes } from './protocol-routes.js';
import { OAuthServerRepo } from './repo.js';
import { oauthServerRoutes } from './routes.js';
import { AuthorizationServerService, type OAuthServerDeps } from './service.js';

export type { AuthorizationServerService, EndpointAccess } from './service.js';

export interface AuthorizationServerModuleDeps {
  /** Clients, pending requests, grants, codes and refresh tokens (migration 0006). */
  db: Db;
  /** Its own key for access tokens (Secrets.mcpTokenKey); the console's (jwtKey) to know an admin registering a client. */
  secrets: Pick<Secrets, 'mcpTokenKey' | 'jwtKey'>;
  /** ServerAddress (issuer and URLs) and OAuthClientRegistrationEnabled. */
  options: { get(key: 'ServerAddress'): string; bool(key: 'OAuthClientRegistrationEnabled'): boolean };
  principals: { byId(id: number): Promise<Principal | null> };
  /** The services a user switched off for themselves (issue 14): a token's user carries them like a key's. */
  switchedOffBy(userId: number): Promise<ReadonlySet<number>>;
  /** Which endpoints exist, are enabled and open to a user (decision 0040): a user may authorize only those. */
  endpoints: OAuthServerDeps['endpoints'];
  /** Revocations are announced as `user.changed` (the proxy drops its cached token answers). */
  events: Pick<ConfigEvents, 'emit'>;
  /**
   * Client ID Metadata Documents are fetched through this: infra/outbound.ts's `addressCheckedFetch`
   * under the rule for fetches strangers cause (decision 0041).
   */
  fetch: FetchLike;
  /** The time cap of one metadata fetch; every failed one is answered no sooner (config `clientFetches`). */
  fetchTimeoutMs: number;
  /** Whether the MCP endpoints answer to a host name: the metadata names only such hosts (origin policy). */
  hostAllowed(host: string): boolean;
  /** Registration and metadata-fetch rate limits shared by replicas. */
  redis?: RedisHub;
  leader: Pick<Leadership, 'runs'>;
  logger: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

export interface AuthorizationServerModule {
  service: AuthorizationServerService;
  /** The port through which the proxy accepts access tokens (gateway/index.ts). */
  accessTokens: AccessTokenPort;
  /** The protocol routes on the root app: /.well-known/* and /oauth2/*. */
  mount(app: FastifyInstance): Promise<void>;
  routes(api: ZodApi): Promise<void>;
  close(): Promise<void>;
}

const PURGE_MS = 15 * 60_000;
/** Registrations per client address a minute: enough for any real client, too few to fill the table. */
const REGISTRATIONS = { keyPrefix: 'oauth_register', points: 10, duration: 60 };
/** Metadata documents fetched for one client address a minute (cached documents do not count). */
const DOCUMENT_FETCHES = { keyPrefix: 'oauth_client_fetch', points: 10, duration: 60 };

/** Toolport as the OAuth 2.1 authorization server of its MCP endpoints (docs/decisions/0028-oauth-authorization-server.md). */
export function createAuthorizationServerModule(deps: AuthorizationServerModuleDeps): AuthorizationServerModule {
  const repo = new OAuthServerRepo(deps.db);
  const limit = (l: typeof REGISTRATIONS) => {
    const admit = admission(l, deps.redis, (err) => deps.logger.warn({ err }, `${l.keyPrefix} limiter failed`));
    return (address: string) => admit(addressKey(address));
  };
  const clients = new OAuthClients(repo, deps.fetch, {
    timeoutMs: deps.fetchTimeoutMs,
    admit: limit(DOCUMENT_FETCHES),
    logger: deps.logger,
  });
  const service = new AuthorizationServerService({
    repo,
    clients,
    tokenKey: deps.secrets.mcpTokenKey,
    principals: deps.principals,
    switchedOffBy: (userId) => deps.switchedOffBy(userId),
    endpoints: deps.endpoints,
    events: deps.events,
  });
  // Expired requests, codes and refresh tokens go; one replica (the leader) does it for the cluster.
  const purge = setInterval(() => {
    if (!deps.leader.runs('guarded')) return;
    void service.purge().catch((err) => deps.logger.warn({ err }, 'oauth server purge failed'));
  }, PURGE_MS);
  purge.unref();
  return {
    service,
    accessTokens: service,
    mount: (app) =>
      registerProtocolRoutes(app, {
        service,
        clients,
        options: deps.options,
        hostAllowed: deps.hostAllowed,
        caller: (req) => authenticate({ secrets: deps.secrets, principals: deps.principals }, req),
        admitRegistration: limit(REGISTRATIONS),
        logger: deps.logger,
      }),
    routes: (api) => oauthServerRoutes(api, { service, options: deps.options, principals: deps.principals }),
    close: async () => clearInterval(purge),
  };
}
