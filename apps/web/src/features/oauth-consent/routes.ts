import type { RouteObject } from 'react-router';

/** The consent page of MCP clients signing in through Toolport's OAuth server (behind the sign-in). */
export const oauthConsentRoutes: RouteObject[] = [
  { path: 'oauth/consent', lazy: async () => ({ Component: (await import('./consent-page')).ConsentPage }) },
];
