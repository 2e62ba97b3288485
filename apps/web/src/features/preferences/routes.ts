import type { RouteObject } from 'react-router';

/** Routes of the Preferences screen; the router mounts them behind the administrator check. */
export const preferencesRoutes: RouteObject[] = [
  { path: 'preferences', lazy: async () => ({ Component: (await import('./preferences-page')).PreferencesPage }) },
];
