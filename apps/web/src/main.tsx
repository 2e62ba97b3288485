import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { RouterProvider } from 'react-router/dom';
import { installApiHooks } from './app/api-hooks';
import { Providers } from './app/providers';
import { createQueryClient } from './app/query-client';
import { createRouter } from './app/router';
import { createI18n } from './lib/i18n';
import './app/styles.css';

const root = document.getElementById('root');
if (!root) throw new Error('index.html has no #root element');

// The router starts loading the first page's code at once, while the translations load.
const router = createRouter();
const queryClient = createQueryClient();
// The translations load before the first render, so no page ever shows raw keys.
const i18n = await createI18n();
installApiHooks(router, i18n, queryClient);

createRoot(root).render(
  <StrictMode>
    <Providers i18n={i18n} queryClient={queryClient}>
      <RouterProvider router={router} />
    </Providers>
  </StrictMode>,
);
