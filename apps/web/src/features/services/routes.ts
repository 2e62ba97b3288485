import type { RouteObject } from 'react-router';

/** Routes of the Services screen (docs/console.md §2.5); any signed-in user. */
export const servicesRoutes: RouteObject[] = [
  { path: 'services', lazy: async () => ({ Component: (await import('./services-page')).ServicesPage }) },
  // The end of a remote service's OAuth authorization (issue 19): the server's callback redirects here.
  { path: 'oauth/upstream', lazy: async () => ({ Component: (await import('./oauth-result-page')).OAuthResultPage }) },
];
