import type { RouteObject } from 'react-router';

const lazyDashboard = async () => ({ Component: (await import('./dashboard-page')).DashboardPage });

/** The dashboard lives at / and /dashboard (console spec §2.1). */
export const dashboardRoutes: RouteObject[] = [
  { index: true, lazy: lazyDashboard },
  { path: 'dashboard', lazy: lazyDashboard },
];
