import type { RouteObject } from 'react-router';

/** Routes of the Audit screen; the router mounts them behind the administrator check. */
export const auditRoutes: RouteObject[] = [{ path: 'audit', lazy: async () => ({ Component: (await import('./audit-page')).AuditPage }) }];
