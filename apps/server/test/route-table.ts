import type { BuiltApp } from '../src/app.js';

/**
 * The walk over every route the app registered, shared by the route-authorization and access-matrix
 * suites: a route added later is covered by both without touching either.
 */
export type RouteEntry = BuiltApp['routes'][number];

export const routeKey = (r: Pick<RouteEntry, 'method' | 'url'>): string => `${r.method} ${r.url}`;

/** Every console API route (`/api/…`), API docs included. */
export const apiRoutes = (routes: RouteEntry[]): RouteEntry[] => routes.filter((r) => r.url.startsWith('/api/'));

/**
 * The MCP faces: services under /proxy, groups under /group (issue 17), and their OpenAPI face under /openapi
 * (decision 0053); all authenticate by API key.
 */
export const proxyRoutes = (routes: RouteEntry[]): RouteEntry[] =>
  routes.filter((r) => r.url.startsWith('/proxy/') || r.url.startsWith('/group/') || r.url.startsWith('/openapi/'));

/** The OAuth protocol routes of Toolport as an authorization server (`/.well-known/…`, `/oauth2/…`): public by design. */
export const oauthProtocolRoutes = (routes: RouteEntry[]): RouteEntry[] =>
  routes.filter((r) => r.url.startsWith('/.well-known/') || r.url.startsWith('/oauth2/'));

/** The only /api routes anyone may call without a console token. Adding one here is a security decision. */
export const publicApiRoutes = new Set([
  'GET /api/status',
  'GET /api/health',
  'GET /api/ready',
  'POST /api/auth/login',
  'POST /api/auth/refresh',
  // Sign-in with a provider: the caller has no token yet (authorize checks one itself for ?bind=1).
  'GET /api/oauth/github/authorize',
  'GET /api/oauth/github',
  'GET /api/oauth/google/authorize',
  'GET /api/oauth/google',
  // EventSource cannot send headers: the route checks a token in the query itself.
  'GET /api/mcp_market/batch-import/progress/:task_id',
  // Upstream OAuth (issue 19): the provider sends the browser back here, proven by a single-use state;
  // authorization servers fetch Toolport's Client ID Metadata Document without credentials.
  'GET /api/upstream_oauth/callback',
  'GET /api/upstream_oauth/client_metadata.json',
]);

export const isPublicApiRoute = (method: string, url: string): boolean =>
  url.startsWith('/api/docs') || publicApiRoutes.has(`${method} ${url}`);

/** Any value reaches the guard: it runs before parameters are validated. */
export const fillParams = (url: string): string => url.replace(/:\w+/g, '1').replace(/\*/g, 'x');
