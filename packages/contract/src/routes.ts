/**
 * Method, path and auth level of every `/api` endpoint. The schemas and API docs of each are added in
 * endpoints.ts; this module stays free of zod so the console can call endpoints without loading zod on
 * its first screen.
 */

/** Who may call an endpoint: anyone, any signed-in user, or an administrator. */
export type AuthLevel = 'public' | 'user' | 'admin';
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

export interface Route {
  readonly method: HttpMethod;
  /** Below `/api`, with `:name` placeholders filled from the endpoint's params. */
  readonly path: string;
  readonly auth: AuthLevel;
}

export const routes = {
  status: {
    status: { method: 'GET', path: '/status', auth: 'public' },
    health: { method: 'GET', path: '/health', auth: 'public' },
    ready: { method: 'GET', path: '/ready', auth: 'public' },
  },
  auth: {
    login: { method: 'POST', path: '/auth/login', auth: 'public' },
    refresh: { method: 'POST', path: '/auth/refresh', auth: 'public' },
    logout: { method: 'POST', path: '/auth/logout', auth: 'user' },
  },
  users: {
    self: { method: 'GET', path: '/user/self', auth: 'user' },
    updateSelf: { method: 'PUT', path: '/user/self', auth: 'user' },
    changePassword: { method: 'POST', path: '/user/change-password', auth: 'user' },
    // The console rotates with GET; POST is the honest verb for a change and is accepted too.
    rotateToken: { method: 'GET', path: '/user/token', auth: 'user' },
    rotateTokenPost: { method: 'POST', path: '/user/token', auth: 'user' },
    list: { method: 'GET', path: '/user/', auth: 'admin' },
    search: { method: 'GET', path: '/user/search', auth: 'admin' },
    create: { method: 'POST', path: '/user', auth: 'admin' },
    edit: { method: 'PUT', path: '/user', auth: 'admin' },
    remove: { method: 'DELETE', path: '/user/:id', auth: 'admin' },
    manage: { method: 'POST', path: '/user/manage', auth: 'admin' },
  },
  options: {
    list: { method: 'GET', path: '/option/', auth: 'admin' },
    update: { method: 'PUT', path: '/option/', auth: 'admin' },
    embeddings: { method: 'GET', path: '/option/embeddings', auth: 'admin' },
    checkEmbeddings: { method: 'POST', path: '/option/embeddings/check', auth: 'admin' },
  },
  services: {
    installed: { method: 'GET', path: '/mcp_market/installed', auth: 'user' },
    createCustom: { method: 'POST', path: '/mcp_market/custom_service', auth: 'admin' },
    installStatus: { method: 'GET', path: '/mcp_market/install_status/:taskId', auth: 'admin' },
    update: { method: 'PUT', path: '/mcp_services/:id', auth: 'admin' },
    toggle: { method: 'POST', path: '/mcp_services/:id/toggle', auth: 'user' },
    healthCheck: { method: 'POST', path: '/mcp_services/:id/health/check', auth: 'user' },
    reconnect: { method: 'POST', path: '/mcp_services/:id/reconnect', auth: 'admin' },
    uninstall: { method: 'POST', path: '/mcp_market/uninstall', auth: 'admin' },
    updatePackage: { method: 'POST', path: '/mcp_services/:id/update_package', auth: 'admin' },
    myEnv: { method: 'GET', path: '/mcp_services/:id/my_env', auth: 'user' },
    setMyEnv: { method: 'PUT', path: '/mcp_services/:id/my_env', auth: 'user' },
    tools: { method: 'GET', path: '/mcp_services/:id/tools', auth: 'user' },
    setTool: { method: 'PUT', path: '/mcp_services/:id/tools/:original_name', auth: 'admin' },
    access: { method: 'GET', path: '/mcp_services/:id/access', auth: 'admin' },
    callTool: { method: 'POST', path: '/mcp_services/:id/tools/:original_name/call', auth: 'user' },
  },
  groups: {
    list: { method: 'GET', path: '/groups', auth: 'user' },
    create: { method: 'POST', path: '/groups', auth: 'admin' },
    get: { method: 'GET', path: '/groups/:id', auth: 'user' },
    update: { method: 'PUT', path: '/groups/:id', auth: 'admin' },
    remove: { method: 'DELETE', path: '/groups/:id', auth: 'admin' },
  },
  upstreamOAuth: {
    state: { method: 'GET', path: '/mcp_services/:id/oauth', auth: 'user' },
    update: { method: 'PUT', path: '/mcp_services/:id/oauth', auth: 'admin' },
    connect: { method: 'POST', path: '/mcp_services/:id/oauth/connect', auth: 'user' },
    disconnect: { method: 'POST', path: '/mcp_services/:id/oauth/disconnect', auth: 'user' },
    // The provider sends the browser back here; `state` (single use, bound to the user) is the proof.
    callback: { method: 'GET', path: '/upstream_oauth/callback', auth: 'public' },
    // Toolport's Client ID Metadata Document: authorization servers fetch it without credentials.
    clientMetadata: { method: 'GET', path: '/upstream_oauth/client_metadata.json', auth: 'public' },
  },
  analytics: {
    overview: { method: 'GET', path: '/analytics/system/overview', auth: 'user' },
    utilization: { method: 'GET', path: '/analytics/services/utilization', auth: 'user' },
    history: { method: 'GET', path: '/analytics/history', auth: 'user' },
  },
  logs: {
    list: { method: 'GET', path: '/mcp_logs', auth: 'admin' },
  },
  audit: {
    list: { method: 'GET', path: '/audit', auth: 'admin' },
    export: { method: 'GET', path: '/audit/export', auth: 'admin' },
  },
  market: {
    search: { method: 'GET', path: '/mcp_market/search', auth: 'user' },
    packageDetails: { method: 'GET', path: '/mcp_market/package_details', auth: 'user' },
    install: { method: 'POST', path: '/mcp_market/install_or_add_service', auth: 'admin' },
    batchImport: { method: 'POST', path: '/mcp_market/batch-import', auth: 'admin' },
    // EventSource cannot send headers: the handler checks the admin's token from `?token=` itself.
    batchProgress: { method: 'GET', path: '/mcp_market/batch-import/progress/:task_id', auth: 'public' },
    export: { method: 'GET', path: '/mcp_market/export', auth: 'admin' },
  },
  oauth: {
    // One route per sign-in provider, under the provider's own path; the caller has no token yet
    // (authorize checks one itself for ?bind=1).
    authorize: {
      github: { method: 'GET', path: '/oauth/github/authorize', auth: 'public' },
      google: { method: 'GET', path: '/oauth/google/authorize', auth: 'public' },
    },
    callback: {
      github: { method: 'GET', path: '/oauth/github', auth: 'public' },
      google: { method: 'GET', path: '/oauth/google', auth: 'public' },
    },
    unbind: { method: 'DELETE', path: '/user/bindings/:provider', auth: 'user' },
    // An administrator links and unlinks provider identities of other users (decision 0063).
    identities: { method: 'GET', path: '/user/:id/identities', auth: 'admin' },
    link: { method: 'POST', path: '/user/:id/identities', auth: 'admin' },
    unlink: { method: 'DELETE', path: '/user/:id/identities/:identityId', auth: 'admin' },
    held: { method: 'GET', path: '/user/held_identities', auth: 'admin' },
    dismissHeld: { method: 'DELETE', path: '/user/held_identities/:id', auth: 'admin' },
    // Any OpenID Connect provider an admin configured, by its slug (decision 0048).
    oidcAuthorize: { method: 'GET', path: '/oauth/oidc/:slug/authorize', auth: 'public' },
    oidcCallback: { method: 'GET', path: '/oauth/oidc/:slug', auth: 'public' },
  },
  // Toolport as the OAuth server of its MCP endpoints: the console's side of it (consent, connected apps).
  oauthServer: {
    consent: { method: 'GET', path: '/oauth-server/requests/:id', auth: 'user' },
    decide: { method: 'POST', path: '/oauth-server/requests/:id', auth: 'user' },
    myApps: { method: 'GET', path: '/oauth-server/grants', auth: 'user' },
    revokeMyApp: { method: 'DELETE', path: '/oauth-server/grants/:id', auth: 'user' },
    userApps: { method: 'GET', path: '/oauth-server/users/:userId/grants', auth: 'admin' },
    revokeUserApp: { method: 'DELETE', path: '/oauth-server/users/:userId/grants/:id', auth: 'admin' },
  },
} as const satisfies Record<string, Record<string, Route | Record<string, Route>>>;

/** Fills a path's `:name` placeholders, each value URL-encoded. */
export function pathOf(route: Pick<Route, 'path'>, params?: Readonly<Record<string, string | number>>): string {
  return route.path.replace(/:(\w+)/g, (_, name: string) => {
    const value = params?.[name];
    if (value === undefined) throw new Error(`${route.path}: no value for :${name}`);
    return encodeURIComponent(String(value));
  });
}
