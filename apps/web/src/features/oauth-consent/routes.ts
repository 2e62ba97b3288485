import type { RouteObject } from 'react-router';

/** The consent page of MCP clients signing in through Toolport's OAuth server (behind the sign-in). */
export const oauthConsentRoutes: RouteObject[] = [
  { path: 'oauth/consent', lazy: async () => ({ Component: (await import('./consent-page')).ConsentPage }) },
];

/** Toolport's own page for an authorization request it refuses without sending the browser back (public). */
export const oauthErrorRoutes: RouteObject[] = [
  { path: 'oauth/error', lazy: async () => ({ Component: (await import('./oauth-error-page')).OAuthErrorPage }) },
];
