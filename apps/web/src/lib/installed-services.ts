import { type QueryClient, useQuery } from '@tanstack/react-query';
import { type InstalledService, routes } from '@toolport/contract';
import { call } from './api';

export const installedServicesKey = ['services', 'installed'] as const;

/**
 * How often an open page asks for the services again (docs/console.md §2.5, "Numbers that change"): usage,
 * health and tool counts move while it is open. Only while the tab is visible; a tab coming back asks at once.
 */
export const LIVE_REFRESH_MS = 30_000;
/** A list younger than this is not asked for again on focus or mount (a quick tab switch costs nothing). */
export const LIVE_STALE_MS = 5_000;

/**
 * GET /api/mcp_market/installed; quiet, because the page shows its own error in place of the list (and keeps the
 * last list when only a background refresh failed). Live: refreshed every LIVE_REFRESH_MS while the tab is
 * visible, and when it becomes visible again.
 */
export function useInstalledServices() {
  return useQuery({
    queryKey: installedServicesKey,
    queryFn: ({ signal }) => call(routes.services.installed, { signal, notify: false }),
    refetchInterval: LIVE_REFRESH_MS,
    refetchIntervalInBackground: false,
    refetchOnWindowFocus: true,
    staleTime: LIVE_STALE_MS,
  });
}

/**
 * Changes one service in the cached list (after a toggle, health check or limit change) without waiting for a refetch.
 * A refresh already on its way may have read the list before the change, and its answer would put the old row back
 * (a switch flipping back until the next refresh): it is cancelled first, and the list asked for again after the change.
 */
export async function patchService(queryClient: QueryClient, id: number, patch: Partial<InstalledService>): Promise<void> {
  const overtaken = queryClient.isFetching({ queryKey: installedServicesKey }) > 0;
  if (overtaken) await queryClient.cancelQueries({ queryKey: installedServicesKey });
  queryClient.setQueryData<InstalledService[]>(installedServicesKey, (rows) =>
    rows?.map((row) => (row.id === id ? { ...row, ...patch } : row)),
  );
  if (overtaken) void refreshServices(queryClient);
}

export function removeService(queryClient: QueryClient, id: number): void {
  queryClient.setQueryData<InstalledService[]>(installedServicesKey, (rows) => rows?.filter((row) => row.id !== id));
}

export const refreshServices = (queryClient: QueryClient): Promise<void> =>
  queryClient.invalidateQueries({ queryKey: installedServicesKey });
