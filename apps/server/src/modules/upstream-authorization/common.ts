/**
 * What the three parts of the upstream OAuth module share (docs/decisions/0050-credentials-in-one-step.md):
 * their dependencies, the paths under the gateway's address, and the error a call without a connection gets.
 */
import type { Logger } from 'pino';
import type { ServiceCatalog } from '../../gateway/catalog.js';
import { UpstreamConnectionMissing } from '../../gateway/upstream-auth.js';
import type { MessageKey } from '../../i18n/en.js';
import type { ConfigEvents } from '../../infra/events.js';
import type { FetchLike } from '../../infra/outbound.js';
import type { Secrets } from '../../infra/secrets.js';
import type { UpstreamOAuthRepo } from './repo.js';

export const CALLBACK_PATH = '/api/upstream_oauth/callback';
export const CLIENT_METADATA_PATH = '/api/upstream_oauth/client_metadata.json';
/** The console page where services are connected, named in errors MCP clients see. */
const SERVICES_PAGE = '/services';

export interface UpstreamOAuthDeps {
  repo: UpstreamOAuthRepo;
  secrets: Secrets;
  events: ConfigEvents;
  options: { get(key: 'ServerAddress'): string };
  catalog: Pick<ServiceCatalog, 'byId'>;
  /** Who may use a service (the exposure module's access lists): without it every service is open. */
  access?: { mayUse(user: { id: number; role: number }, subject: 'service', id: number): Promise<boolean> };
  logger: Logger;
  /** Every call to a provider goes through the outbound rules (infra/outbound.ts); tests may wrap it. */
  fetch: FetchLike;
  /**
   * A health check of the service (the services module's), run at once after a successful Connect so that its
   * health, reason and tool count are current when the console shows it again (decision 0054).
   */
  recheck?: (serviceId: number, as?: { id: number }) => Promise<unknown>;
}

/** A call that needs a connection nobody has made: the JSON-RPC error names the console page. */
export class NeedsAuthorizationError extends UpstreamConnectionMissing {}

/** A provider's OAuth error (RFC 6749 §5.2) as the SDK throws it. */
export const oauthCode = (err: unknown): string | undefined =>
  err && typeof err === 'object' && 'errorCode' in err && typeof err.errorCode === 'string' ? err.errorCode : undefined;

export const text = (err: unknown): string => (err instanceof Error ? err.message : String(err)).slice(0, 300);

/** The gateway's public address: ServerAddress, else where the browser came from. */
export function baseOf(deps: Pick<UpstreamOAuthDeps, 'options'>, origin: string): string {
  return (deps.options.get('ServerAddress') || origin).replace(/\/+$/, '');
}

/** The error a call without a usable connection gets: who must connect, and where. */
export async function missing(
  deps: Pick<UpstreamOAuthDeps, 'options' | 'catalog'>,
  serviceId: number,
  owner: number,
): Promise<NeedsAuthorizationError> {
  const service = await deps.catalog.byId(serviceId);
  const key: MessageKey = owner === 0 ? 'upstream_oauth.needs_authorization' : 'upstream_oauth.not_connected';
  return new NeedsAuthorizationError(key, {
    service: service?.displayName || service?.name || String(serviceId),
    page: `${baseOf(deps, '')}${SERVICES_PAGE}`,
  });
}
