import { render } from '@testing-library/react';
import type { Resource } from 'i18next';
import type { ReactElement } from 'react';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { installApiHooks } from '../app/api-hooks';
import { Providers } from '../app/providers';
import { createQueryClient } from '../app/query-client';
import { routes } from '../app/router';
import { createI18n } from '../lib/i18n';

/** The real locale files, bundled instead of fetched: jsdom has no server to load them from. */
const files = import.meta.glob<Record<string, unknown>>('../../public/locales/*/*.json', { eager: true, import: 'default' });

export const localeResources: Resource = {};
for (const [file, content] of Object.entries(files)) {
  const [, lng, ns] = /locales\/([^/]+)\/([^/]+)\.json$/.exec(file) ?? [];
  if (!lng || !ns) continue;
  localeResources[lng] = { ...localeResources[lng], [ns]: content };
}

/**
 * Renders `ui` inside the app's providers and a router at `path`, with a fresh i18n instance (language
 * detected as in the browser) and query cache, and the API client's global handling plugged in.
 */
export async function renderWithProviders(ui: ReactElement, { path = '/' }: { path?: string } = {}) {
  return renderRouter(createMemoryRouter([{ path: '*', element: ui }], { initialEntries: [path] }));
}

/** The whole console (layout, guard, lazy pages) at `path`. */
export async function renderApp(path: string, state?: unknown) {
  const { pathname, search, hash } = new URL(path, 'http://console.test');
  return renderRouter(createMemoryRouter(routes, { initialEntries: [{ pathname, search, hash, state }] }));
}

async function renderRouter(router: ReturnType<typeof createMemoryRouter>) {
  const i18n = await createI18n(localeResources);
  const queryClient = createQueryClient();
  installApiHooks(router, i18n, queryClient);
  const result = render(
    <Providers i18n={i18n} queryClient={queryClient}>
      <RouterProvider router={router} />
    </Providers>,
  );
  return { i18n, queryClient, router, ...result };
}
