import { type QueryClient, useQuery } from '@tanstack/react-query';
import { type InstalledService, routes } from '@toolport/contract';
import { call } from './api';

export const installedServicesKey = ['services', 'installed'] as const;

/** GET /api/mcp_market/installed; quiet, because the page shows its own error in place of the list. */
export function useInstalledServices() {
  return useQuery({
    queryKey: installedServicesKey,
    queryFn: ({ signal }) => call(routes.services.installed, { signal, notify: false }),
  });
}

/** Changes one service in the cached list (after a toggle, health check or limit change) without a refetch. */
export function patchService(queryClient: QueryClient, id: number, patch: Partial<InstalledService>): void {
  queryClient.setQueryData<InstalledService[]>(installedServicesKey, (rows) =>
    rows?.map((row) => (row.id === id ? { ...row, ...patch } : row)),
  );
}

export function removeService(queryClient: QueryClient, id: number): void {
  queryClient.setQueryData<InstalledService[]>(installedServicesKey, (rows) => rows?.filter((row) => row.id !== id));
}

export const refreshServices = (queryClient: QueryClient): Promise<void> =>
  queryClient.invalidateQueries({ queryKey: installedServicesKey });
