import type { RouteObject } from 'react-router';

/** Routes of the Users screen; the router mounts them behind the administrator check. */
export const usersRoutes: RouteObject[] = [{ path: 'users', lazy: async () => ({ Component: (await import('./users-page')).UsersPage }) }];
