import type { RouteObject } from 'react-router';

/**
 * The user documentation (docs/decisions/0055-docs-in-the-console.md): /docs lists the pages, /docs/{page}
 * shows one. Public, like the sign-in page, and lazy: neither the page nor its text is in the first bundle.
 */
export const docsRoutes: RouteObject[] = [
  { path: 'docs', lazy: async () => ({ Component: (await import('./docs-page')).DocsPage }) },
  { path: 'docs/:page', lazy: async () => ({ Component: (await import('./docs-page')).DocsPage }) },
];

export { docPageIds, docPath } from './pages';
