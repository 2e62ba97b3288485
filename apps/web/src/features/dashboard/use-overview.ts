import { useQuery } from '@tanstack/react-query';
import { routes } from '@toolport/contract';
import { call } from '../../lib/api';

/** GET /api/analytics/system/overview: service counts and today's requests; live, so refreshed each minute. */
export function useOverview() {
  return useQuery({
    queryKey: ['analytics', 'overview'],
    queryFn: ({ signal }) => call(routes.analytics.overview, { signal }),
    refetchInterval: 60_000,
  });
}
