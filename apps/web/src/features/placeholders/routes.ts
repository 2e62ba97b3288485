import type { RouteObject } from 'react-router';

/** /api and /models: placeholder pages behind the sign-in (docs/console.md §2.1). */
export const placeholderRoutes: RouteObject[] = [
  { path: 'api', lazy: async () => ({ Component: (await import('./reference-pages')).ApiPage }) },
  { path: 'models', lazy: async () => ({ Component: (await import('./reference-pages')).ModelsPage }) },
];
