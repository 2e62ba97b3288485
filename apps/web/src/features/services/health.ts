/** Health statuses the server reports; 'Healthy' counts as healthy too (docs/console.md §3). */
export type HealthState = 'healthy' | 'unhealthy' | 'stopped' | 'unknown';

/** A custom `npx`/`uvx` service whose pinned install failed: kept disabled with the reason (decision 0035). */
export const INSTALL_FAILED = 'install_failed';

export function healthStateOf(status: string | null | undefined): HealthState {
  const s = (status ?? '').toLowerCase();
  if (s === INSTALL_FAILED) return 'unhealthy';
  return s === 'healthy' || s === 'unhealthy' || s === 'stopped' ? s : 'unknown';
}

export const healthLabelKey = (status: string | null | undefined): `health.${HealthState}` => `health.${healthStateOf(status)}`;

/** The milliseconds a healthy check took, from the server's details ("13 tools, 792 ms"); undefined if absent. */
export function latencyOf(details: string | null | undefined): number | undefined {
  const match = /(\d+)\s*ms\b/.exec(details ?? '');
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
  | { key: 'health.line.unhealthyNoReason' | 'health.line.stopped' | 'health.line.unknown'; values: Record<string, never> };

export function healthLineOf(service: { health_status: string; health_details: string; tool_count: number }): HealthLine {
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
