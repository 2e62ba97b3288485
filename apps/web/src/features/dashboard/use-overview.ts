import { useQuery } from '@tanstack/react-query';
import type { SystemOverview } from '@toolport/contract';
import { api } from '../../lib/api';

/** GET /api/analytics/system/overview: service counts and today's requests; live, so refreshed each minute. */
export function useOverview() {
  return useQuery({
    queryKey: ['analytics', 'overview'],
    queryFn: ({ signal }) => api<SystemOverview>('/analytics/system/overview', { signal }),
    refetchInterval: 60_000,
  });
}
