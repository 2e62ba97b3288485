import { createBrowserRouter, type RouteObject } from 'react-router';
import { analyticsRoutes } from '../features/analytics/routes';
import { auditRoutes } from '../features/audit/routes';
import { authRoutes, RequireSession } from '../features/auth';
import { dashboardRoutes } from '../features/dashboard/routes';
import { docsRoutes } from '../features/docs';
import { groupsRoutes } from '../features/groups/routes';
import { logsRoutes } from '../features/logs/routes';
import { marketRoutes } from '../features/market/routes';
import { oauthConsentRoutes, oauthErrorRoutes } from '../features/oauth-consent/routes';
import { placeholderRoutes } from '../features/placeholders/routes';
import { preferencesRoutes } from '../features/preferences/routes';
import { profileRoutes } from '../features/profile/routes';
import { servicesRoutes } from '../features/services/routes';
import { usersRoutes } from '../features/users/routes';
import { AppLayout } from './app-layout';
import { NotFoundPage } from './not-found-page';
import { RequireAdmin } from './require-admin';
import { RouteError } from './route-error';

/**
 * The console's routes (docs/console.md §2.1). Each feature folder exports its own routes (pages load lazily);
 * the server answers every other path with index.html.
 */
export const routes: RouteObject[] = [
  {
    element: <AppLayout />,
    // The layout itself failed: a screen of its own, never the router's developer screen.
    errorElement: <RouteError frame />,
    // Shown while the first page's code loads; index.html's own background is already painted.
    hydrateFallbackElement: <div className="min-h-dvh" />,
    children: [
      {
        // A page whose code cannot load or that fails to render: the error takes the page's place inside the
        // layout, so the sidebar and the way back stay.
        errorElement: <RouteError />,
        children: [
          ...authRoutes,
          ...oauthErrorRoutes,
          // The user documentation is public, like the sign-in page it explains.
          ...docsRoutes,
          {
            element: <RequireSession />,
            children: [
              ...dashboardRoutes,
              ...servicesRoutes,
              ...groupsRoutes,
              ...analyticsRoutes,
              ...profileRoutes,
              ...oauthConsentRoutes,
              ...placeholderRoutes,
              {
                element: <RequireAdmin />,
                children: [...marketRoutes, ...usersRoutes, ...logsRoutes, ...auditRoutes, ...preferencesRoutes],
              },
              { path: '*', element: <NotFoundPage /> },
            ],
          },
        ],
      },
    ],
  },
];

export function createRouter() {
  return createBrowserRouter(routes);
}
