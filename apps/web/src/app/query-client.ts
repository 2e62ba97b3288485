import { QueryClient } from '@tanstack/react-query';

/**
 * Failures are shown once by the API client's global handling, so queries do not retry (a retry would show
 * the toast again) and do not refetch on every window focus.
 */
export function createQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: { retry: false, refetchOnWindowFocus: false },
      mutations: { retry: false },
    },
  });
}
