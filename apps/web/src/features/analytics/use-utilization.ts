import { useQuery } from '@tanstack/react-query';
import type { ServiceUtilization } from '@toolport/contract';
import { api } from '../../lib/api';

/** GET /api/analytics/services/utilization; quiet, because the page shows its own 'Error fetching stats'. */
export function useUtilization() {
  return useQuery({
    queryKey: ['analytics', 'utilization'],
    queryFn: ({ signal }) => api<ServiceUtilization[]>('/analytics/services/utilization', { signal, notify: false }),
    refetchInterval: 60_000,
  });
}
