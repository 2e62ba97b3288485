import type { RouteObject } from 'react-router';

/** Public routes: the sign-in page and the OAuth return addresses (docs/console.md §2.1). */
export const authRoutes: RouteObject[] = [
  { path: 'login', lazy: async () => ({ Component: (await import('./login-page')).LoginPage }) },
  { path: 'oauth/github', lazy: async () => ({ Component: (await import('./oauth-return-page')).GitHubReturnPage }) },
  { path: 'oauth/google', lazy: async () => ({ Component: (await import('./oauth-return-page')).GoogleReturnPage }) },
  { path: 'oauth/oidc/:slug', lazy: async () => ({ Component: (await import('./oauth-return-page')).OidcReturnPage }) },
];
