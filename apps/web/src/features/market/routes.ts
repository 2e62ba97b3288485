import type { RouteObject } from 'react-router';

/**
 * Routes of the Market screen (docs/console.md §2.10); the router mounts them behind the administrator check.
 * The list and a package's details (/market/{source}/{package name}, scoped names keep their slash) share
 * the install and uninstall tasks of the layout.
 */
export const marketRoutes: RouteObject[] = [
  {
    path: 'market',
    lazy: async () => ({ Component: (await import('./market-actions')).MarketLayout }),
    children: [
      { index: true, lazy: async () => ({ Component: (await import('./market-page')).MarketPage }) },
      { path: ':source/*', lazy: async () => ({ Component: (await import('./package-details-page')).PackageDetailsPage }) },
    ],
  },
];
