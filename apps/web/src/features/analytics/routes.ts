import type { RouteObject } from 'react-router';

export const analyticsRoutes: RouteObject[] = [
  { path: 'analytics', lazy: async () => ({ Component: (await import('./analytics-page')).AnalyticsPage }) },
];
