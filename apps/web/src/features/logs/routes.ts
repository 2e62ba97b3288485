import type { RouteObject } from 'react-router';

/** Routes of the Logs screen; the router mounts them behind the administrator check. */
export const logsRoutes: RouteObject[] = [{ path: 'logs', lazy: async () => ({ Component: (await import('./logs-page')).LogsPage }) }];
