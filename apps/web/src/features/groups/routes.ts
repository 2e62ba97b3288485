import type { RouteObject } from 'react-router';

/** The Groups screen (docs/console.md §2.9b); any signed-in user: admins manage, users see the groups open to them. */
export const groupsRoutes: RouteObject[] = [
  { path: 'groups', lazy: async () => ({ Component: (await import('./groups-page')).GroupsPage }) },
];
