import { useQuery } from '@tanstack/react-query';
import { routes, type StatusData } from '@toolport/contract';
import { call } from './api';

/** Session-storage key of the cached GET /api/status answer (docs/console.md §3). */
export const STATUS_CACHE_KEY = 'status';

interface CachedStatus {
  savedAt: number;
  data: StatusData;
}

function readCache(): CachedStatus | undefined {
  try {
    const cached = JSON.parse(sessionStorage.getItem(STATUS_CACHE_KEY) ?? 'null') as CachedStatus | null;
    return cached?.data ? cached : undefined;
  } catch {
    return undefined;
  }
}

export async function fetchServerStatus(signal?: AbortSignal): Promise<StatusData> {
  const data = await call(routes.status.status, { auth: false, notify: false, signal });
  sessionStorage.setItem(STATUS_CACHE_KEY, JSON.stringify({ savedAt: Date.now(), data } satisfies CachedStatus));
  return data;
}

/**
 * The server's public status. The cached copy renders at once (no flicker of the sign-in buttons); it is
 * renewed in the background once it is a minute old, as the start time changes when the server restarts.
 */
export function useServerStatus() {
  return useQuery({
    queryKey: ['status'],
    queryFn: ({ signal }) => fetchServerStatus(signal),
    initialData: () => readCache()?.data,
    initialDataUpdatedAt: () => readCache()?.savedAt,
    staleTime: 60_000,
  });
}
