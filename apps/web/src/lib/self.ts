import { useQuery } from '@tanstack/react-query';
import { routes, type SelfUser } from '@toolport/contract';
import { useEffect } from 'react';
import { call } from './api';
import { readSession, type SessionUser, saveUser } from './session';

export const selfQueryKey = ['user', 'self'] as const;

/**
 * GET /api/user/self: the caller's profile with their API key (`token`). Quiet: the frame syncs it in the
 * background and the profile page shows its own message when it fails.
 */
export function useSelf() {
  return useQuery({
    queryKey: selfQueryKey,
    queryFn: ({ signal }) => call(routes.users.self, { signal, notify: false }),
    staleTime: 30_000,
  });
}

/** The stored user without the API key: the key is shown on the profile page only, never kept in storage. */
export function storedUserOf({ token: _apiKey, ...user }: SelfUser): SessionUser {
  return user;
}

/**
 * Keeps the stored user (name in the top bar, role for the sidebar) in step with the server, so a rename,
 * a promotion or a demotion shows without signing in again.
 */
export function useStoredUserSync(): void {
  const { data } = useSelf();
  useEffect(() => {
    if (!data) return;
    const next = storedUserOf(data);
    if (JSON.stringify(readSession().user) !== JSON.stringify(next)) saveUser(next);
  }, [data]);
}
