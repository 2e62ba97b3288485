import type { RouteObject } from 'react-router';

const lazyDashboard = async () => ({ Component: (await import('./dashboard-page')).DashboardPage });

/** The dashboard lives at / and /dashboard (docs/console.md §2.1). */
export const dashboardRoutes: RouteObject[] = [
  { index: true, lazy: lazyDashboard },
  { path: 'dashboard', lazy: lazyDashboard },
];
