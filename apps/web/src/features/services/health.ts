/** Health statuses the server reports; 'Healthy' counts as healthy too (console spec §3). */
export type HealthState = 'healthy' | 'unhealthy' | 'stopped' | 'unknown';

export function healthStateOf(status: string | null | undefined): HealthState {
  const s = (status ?? '').toLowerCase();
  return s === 'healthy' || s === 'unhealthy' || s === 'stopped' ? s : 'unknown';
}

export const healthLabelKey = (status: string | null | undefined): `health.${HealthState}` => `health.${healthStateOf(status)}`;
