// Upstream authorization: Toolport as an OAuth client of remote tool servers that require it (connect, store and
// refresh their tokens, shared or per user). Console sign-in is modules/sign-in-providers.
import type { Logger } from 'pino';
import type { Db } from '../../db/db.js';
import type { ServiceCatalog } from '../../gateway/catalog.js';
import type { ZodApi } from '../../http/api.js';
import type { ConfigEvents } from '../../infra/events.js';
import type { Leadership } from '../../infra/leader.js';
import type { FetchLike } from '../../infra/outbound.js';
import type { Secrets } from '../../infra/secrets.js';
import type { UpstreamOAuthDeps } from './common.js';
import { ConnectFlow } from './connect-flow.js';
import { ProviderClient } from './provider-client.js';
import { UpstreamOAuthRepo } from './repo.js';
import { upstreamOAuthRoutes } from './routes.js';
import { TokenKeeper } from './token-keeper.js';

export { NeedsAuthorizationError } from './common.js';
export type { ConnectFlow } from './connect-flow.js';
export type { TokenKeeper } from './token-keeper.js';

/** How often connections that end soon are looked for (the refresh happens before they do). */
const REFRESH_SCAN_MS = 60_000;

/** Everything the upstream authorization module may touch. */
export interface UpstreamAuthorizationModuleDeps {
  db: Db;
  secrets: Secrets;
  events: ConfigEvents;
  /** ServerAddress: the callback and the Client ID Metadata Document are under it. */
  options: { get(key: 'ServerAddress'): string };
  /** The services as the gateway reads them (URLs, headers). */
  catalog: Pick<ServiceCatalog, 'byId'>;
  /** Who may use a service: a user's connection state and connect/disconnect ask it (decision 0040). */
  access?: UpstreamOAuthDeps['access'];
  logger: Logger;
  /** Every replica scans; the claim in the database lets one refresh each connection. */
  leader?: Pick<Leadership, 'runs'>;
  /** The remote services' fetch (infra/outbound.ts `remoteAddresses`), under the address preference; tests may watch it. */
  fetch: FetchLike;
  /** Checks a service's health after a successful Connect (the services module's health checks). */
  recheck?: (serviceId: number, as?: { id: number }) => Promise<unknown>;
  /** Tests shorten the background scan. */
  refreshScanMs?: number;
}

export interface UpstreamAuthorizationModule {
  /** The token keeper: implements the gateway's UpstreamAuthorization port (asked once per acquisition). */
  keeper: TokenKeeper;
  /** The console's connect flow: implements the services module's ServiceOAuthPort. */
  flow: ConnectFlow;
  routes(api: ZodApi): Promise<void>;
  close(): Promise<void>;
}

/**
 * Toolport as the OAuth client of remote MCP services (issue 19, docs/decisions/0030-upstream-oauth.md,
 * 0050-credentials-in-one-step.md): the token keeper, the console's connect flow, and the discovery and
 * registration client. Separate from modules/sign-in-providers (GitHub and Google sign-in) and modules/authorization-server
 * (Toolport's own authorization server).
 */
export function createUpstreamAuthorizationModule(deps: UpstreamAuthorizationModuleDeps): UpstreamAuthorizationModule {
  const parts: UpstreamOAuthDeps = { ...deps, repo: new UpstreamOAuthRepo(deps.db), fetch: deps.fetch };
  const provider = new ProviderClient(parts, (serviceId) => keeper.changed(serviceId));
  const keeper = new TokenKeeper(parts, provider);
  const flow = new ConnectFlow(parts, provider, keeper);
  // Cached modes follow configuration on every replica (events are relayed over Redis).
  const stopListening = deps.events.on((event) => {
    if (event.type === 'service.changed' || event.type === 'service.removed') keeper.forget(event.serviceId);
  });
  const timer = setInterval(() => {
    void keeper.refreshExpiring().catch((err) => deps.logger.warn({ err }, 'upstream OAuth refresh scan failed'));
  }, deps.refreshScanMs ?? REFRESH_SCAN_MS);
  timer.unref();
  return {
    keeper,
    flow,
    routes: (api) => upstreamOAuthRoutes(api, flow, provider),
    async close() {
      clearInterval(timer);
      stopListening();
      await provider.idle();
    },
  };
}
