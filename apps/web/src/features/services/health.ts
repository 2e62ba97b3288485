/** Health statuses the server reports; 'Healthy' counts as healthy too (docs/console.md §3). */
export type HealthState = 'healthy' | 'unhealthy' | 'stopped' | 'needs_authorization' | 'unknown';

/**
 * A remote service whose OAuth connection is missing (decision 0054): shared, its health says so; per user,
 * the caller's own `oauth_status` does (its health stays healthy, since it is up).
 */
export const NEEDS_AUTHORIZATION = 'needs_authorization';

/** A custom `npx`/`uvx` service whose pinned install failed: kept disabled with the reason (decision 0035). */
export const INSTALL_FAILED = 'install_failed';

export function healthStateOf(status: string | null | undefined): HealthState {
  const s = (status ?? '').toLowerCase();
  if (s === INSTALL_FAILED) return 'unhealthy';
  return s === 'healthy' || s === 'unhealthy' || s === 'stopped' || s === NEEDS_AUTHORIZATION ? s : 'unknown';
}

type OAuthFacts = { oauth_status?: string; oauth_mode?: string | null };

/**
 * Whether the caller is missing an OAuth connection to this service, and whose it is: `shared` (one an
 * administrator makes for everyone) or `mine` (per-user mode: the caller's own). Undefined when none is missing.
 */
export function missingConnectionOf(service: { health_status: string } & OAuthFacts): 'shared' | 'mine' | undefined {
  if (service.oauth_mode === 'per_user') return service.oauth_status === NEEDS_AUTHORIZATION ? 'mine' : undefined;
  if (healthStateOf(service.health_status) === NEEDS_AUTHORIZATION) return 'shared';
  return undefined;
}

/** The state the card shows: a per-user service the caller has not connected needs *their* authorization. */
export const shownStateOf = (service: { health_status: string } & OAuthFacts): HealthState =>
  missingConnectionOf(service) ? NEEDS_AUTHORIZATION : healthStateOf(service.health_status);

export const healthLabelKey = (status: string | null | undefined): `health.${HealthState}` => `health.${healthStateOf(status)}`;

/** The milliseconds a healthy check took, from the server's details; undefined if absent. */
export function latencyOf(details: string | null | undefined): number | undefined {
  // The server says it in the reader's language (decision 0054): "13 tools, 792 ms" or "13 个工具，792 毫秒".
  const match = /(\d+)\s*(?:ms\b|毫秒)/.exec(details ?? '');
  return match ? Number(match[1]) : undefined;
}

/**
 * Why a service is in its state, as one line a user can act on (issue 15, item 1): a healthy one says how many
 * tools it has and how fast it answered; an unhealthy one gives the server's reason (the server words it,
 * e.g. "could not start: upstream request failed: fetch failed"), which the console shows as it is.
 */
export type HealthLine =
  | { key: 'health.line.healthy'; values: { count: number; ms?: number } }
  | { key: 'health.line.healthyLatency'; values: { count: number; ms: number } }
  | { key: 'health.line.unhealthy'; values: { reason: string } }
  | {
      key: 'health.line.needsAuthorization' | 'health.line.needsAdminAuthorization' | 'health.line.needsMyAuthorization';
      values: Record<string, never>;
    }
  | { key: 'health.line.unhealthyNoReason' | 'health.line.stopped' | 'health.line.unknown'; values: Record<string, never> };

export function healthLineOf(
  service: { health_status: string; health_details: string; tool_count: number } & OAuthFacts,
  admin = false,
): HealthLine {
  const missing = missingConnectionOf(service);
  if (missing === 'mine') return { key: 'health.line.needsMyAuthorization', values: {} };
  if (missing === 'shared') return { key: admin ? 'health.line.needsAuthorization' : 'health.line.needsAdminAuthorization', values: {} };
  const state = healthStateOf(service.health_status);
  if (state === 'healthy') {
    const ms = latencyOf(service.health_details);
    return ms === undefined
      ? { key: 'health.line.healthy', values: { count: service.tool_count } }
      : { key: 'health.line.healthyLatency', values: { count: service.tool_count, ms } };
  }
  if (state === 'unhealthy') {
    const reason = service.health_details.trim();
    return reason ? { key: 'health.line.unhealthy', values: { reason } } : { key: 'health.line.unhealthyNoReason', values: {} };
  }
  return { key: state === 'stopped' ? 'health.line.stopped' : 'health.line.unknown', values: {} };
}
