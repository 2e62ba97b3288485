import { useQuery } from '@tanstack/react-query';
import { routes } from '@toolport/contract';
import { call } from '../../lib/api';

/** GET /api/analytics/services/utilization; quiet, because the page shows its own 'Error fetching stats'. */
export function useUtilization() {
  return useQuery({
    queryKey: ['analytics', 'utilization'],
    queryFn: ({ signal }) => call(routes.analytics.utilization, { signal, notify: false }),
    refetchInterval: 60_000,
  });
}
