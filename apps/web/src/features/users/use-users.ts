import { keepPreviousData, type QueryClient, useQuery } from '@tanstack/react-query';
import { type PublicUser, routes } from '@toolport/contract';
import { call } from '../../lib/api';

/** What the table shows: one page of all users (0-based), or the results of a search (no paging, §9). */
export type UsersView = { kind: 'page'; page: number } | { kind: 'search'; keyword: string };

export const usersKey = ['users'] as const;

const queryKeyOf = (view: UsersView) => [...usersKey, view.kind, view.kind === 'page' ? view.page : view.keyword] as const;

/**
 * GET /api/user/?p={page} or GET /api/user/search?keyword=. Quiet: the page shows its own error and toast.
 * The previous rows stay on screen while the next page or search loads, so the table does not jump.
 */
export function useUsers(view: UsersView) {
  return useQuery({
    queryKey: queryKeyOf(view),
    queryFn: ({ signal }) =>
      view.kind === 'page'
        ? call(routes.users.list, { query: { p: view.page }, signal, notify: false })
        : call(routes.users.search, { query: { keyword: view.keyword }, signal, notify: false }),
    placeholderData: keepPreviousData,
  });
}

/** Puts a user as the server answered it into every cached list that shows them, without a refetch. */
export function patchUser(queryClient: QueryClient, user: PublicUser): void {
  queryClient.setQueriesData<PublicUser[]>({ queryKey: usersKey }, (rows) => rows?.map((row) => (row.id === user.id ? user : row)));
}

export const refreshUsers = (queryClient: QueryClient): Promise<void> => queryClient.invalidateQueries({ queryKey: usersKey });
