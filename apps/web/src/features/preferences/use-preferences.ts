import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type OptionKey, routes, secretOptionKeys } from '@toolport/contract';
import { call } from '../../lib/api';
import { STATUS_CACHE_KEY } from '../../lib/server-status';
import { type Preferences, preferencesOf, SECRET_MASK } from './preference-rules';

export const preferencesQueryKey = ['options'] as const;

/** GET /api/option/: every preference, secrets masked. Quiet: the page shows its own message. */
export function usePreferences() {
  return useQuery({
    queryKey: preferencesQueryKey,
    queryFn: async ({ signal }) => preferencesOf(await call(routes.options.list, { signal, notify: false })),
  });
}

export interface OptionUpdate {
  key: OptionKey;
  value: string;
}

/**
 * PUT /api/option/ for each update in turn (a failure stops the rest). What was saved goes into the cached
 * preferences at once; the public status (sign-in buttons, server address) is read again. Failures are the
 * caller's to show: the server's message names the preference.
 */
export function useSaveOptions() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (updates: OptionUpdate[]) => {
      const saved: OptionUpdate[] = [];
      try {
        for (const update of updates) {
          await call(routes.options.update, { body: update, notify: false });
          saved.push(update);
        }
      } finally {
        if (saved.length > 0) remember(saved);
      }
    },
  });

  function remember(saved: OptionUpdate[]) {
    queryClient.setQueryData<Preferences>(preferencesQueryKey, (old) => {
      const next = { ...old };
      // The server never shows a secret again: it reads back as its mask, or empty once cleared.
      for (const { key, value } of saved) next[key] = secretOptionKeys.includes(key) && value ? SECRET_MASK : value;
      return next;
    });
    void queryClient.invalidateQueries({ queryKey: preferencesQueryKey });
    sessionStorage.removeItem(STATUS_CACHE_KEY);
    void queryClient.invalidateQueries({ queryKey: ['status'] });
  }
}
