import type { RouteObject } from 'react-router';

/** Routes of the Services screen (console spec §2.5); any signed-in user. */
export const servicesRoutes: RouteObject[] = [
  { path: 'services', lazy: async () => ({ Component: (await import('./services-page')).ServicesPage }) },
];
