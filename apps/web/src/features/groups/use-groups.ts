import { type QueryClient, useQuery } from '@tanstack/react-query';
import { routes } from '@toolport/contract';
import { call } from '../../lib/api';

export const groupsKey = ['groups'] as const;

/** GET /api/groups: every group for admins, the groups open to the caller otherwise. Quiet: the page shows its own error. */
export function useGroups() {
  return useQuery({ queryKey: groupsKey, queryFn: ({ signal }) => call(routes.groups.list, { signal, notify: false }) });
}

export const refreshGroups = (queryClient: QueryClient): Promise<void> => queryClient.invalidateQueries({ queryKey: groupsKey });
