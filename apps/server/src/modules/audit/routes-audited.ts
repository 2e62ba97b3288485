import { type AuditObjectType, type Route, routes } from '@toolport/contract';

/** What the hook sees of an answered request. */
export interface AuditedRequest {
  params: Record<string, unknown>;
  query: Record<string, unknown>;
  body: unknown;
  /** The answer's `data`, when it had one. */
  data: Record<string, unknown> | undefined;
  /** The caller is an administrator. */
  admin: boolean;
}

/** How one route's answered requests become audit entries. */
export interface AuditedRoute {
  object: AuditObjectType;
  action: string | ((r: AuditedRequest) => string);
  /** The object's id: a path parameter, a field of the body or of the answer. */
  id?: (r: AuditedRequest) => unknown;
  /** A sign-in: refused attempts are recorded too, and the actor is the account signed in (or tried). */
  signIn?: 'password' | 'github' | 'google' | 'oidc';
  /** What to record of the request instead of its params, query and body. */
  fields?: (r: AuditedRequest) => Record<string, unknown>;
  /** A route users call for themselves too: of an administrator's successful calls, only those this says are administrative. */
  when?: (r: AuditedRequest) => boolean;
}

const param = (name: string) => (r: AuditedRequest) => r.params[name];
const field = (name: string) => (r: AuditedRequest) =>
  r.body && typeof r.body === 'object' ? (r.body as Record<string, unknown>)[name] : undefined;
const answer = (name: string) => (r: AuditedRequest) => r.data?.[name];
const either =
  (...ways: ((r: AuditedRequest) => unknown)[]) =>
  (r: AuditedRequest) =>
    ways.map((w) => w(r)).find((v) => v !== undefined && v !== null && v !== '');

/**
 * Every audited `/api` route, by the contract's route table. A test walks the app's admin routes that
 * change something (every method but GET) and fails on one missing here (test/audit-trail.test.ts), so a
 * new administrative endpoint cannot go unrecorded. GET routes that hand out configuration (exports) are
 * here too, and so are the sign-ins.
 */
const table: [Route, AuditedRoute][] = [
  // Users and roles
  [routes.users.create, { object: 'user', action: 'create', id: either(answer('id'), field('username')) }],
  [routes.users.edit, { object: 'user', action: 'update', id: field('id') }],
  [routes.users.remove, { object: 'user', action: 'delete', id: param('id') }],
  // enable, disable, promote, demote: the action is the change.
  [routes.users.manage, { object: 'user', action: (r) => String(field('action')(r)), id: either(answer('id'), field('username')) }],
  // Provider identities an administrator links to or unlinks from a user, and held sign-ins dismissed (decision 0063)
  [routes.oauth.link, { object: 'user', action: 'link_identity', id: param('id') }],
  [routes.oauth.unlink, { object: 'user', action: 'unlink_identity', id: param('id') }],
  [routes.oauth.dismissHeld, { object: 'user', action: 'dismiss_held_identity', id: () => '' }],
  // Preferences
  [routes.options.update, { object: 'option', action: 'update', id: field('key') }],
  [routes.options.checkEmbeddings, { object: 'option', action: 'check', id: () => 'EmbeddingsURL' }],
  // Services, tools and access (an update's `access` is the service's access list)
  // An OpenAPI preview (`preview: true`) creates nothing: only a refused one is recorded, as a refused create.
  [
    routes.services.createCustom,
    { object: 'service', action: 'create', id: answer('service_id'), when: (r) => field('preview')(r) !== true },
  ],
  [routes.services.update, { object: 'service', action: 'update', id: param('id') }],
  [routes.services.reconnect, { object: 'service', action: 'reconnect', id: param('id') }],
  [routes.services.uninstall, { object: 'service', action: 'delete', id: field('service_id') }],
  [routes.services.updatePackage, { object: 'service', action: 'update_package', id: param('id') }],
  [routes.services.toggle, { object: 'service', action: 'toggle', id: param('id'), when: (r) => r.data?.scope !== 'personal' }],
  [routes.services.setTool, { object: 'tool', action: 'update', id: (r) => `${r.params.id}/${r.params.original_name}` }],
  [routes.market.install, { object: 'service', action: 'install', id: either(answer('mcp_service_id'), field('package_name')) }],
  // Groups
  [routes.groups.create, { object: 'group', action: 'create', id: answer('id') }],
  [routes.groups.update, { object: 'group', action: 'update', id: param('id') }],
  [routes.groups.remove, { object: 'group', action: 'delete', id: param('id') }],
  // OAuth: remote services' client settings and shared connection; MCP clients' grants
  [routes.upstreamOAuth.update, { object: 'upstream_oauth', action: 'update', id: param('id') }],
  [routes.upstreamOAuth.disconnect, { object: 'upstream_oauth', action: 'disconnect', id: param('id') }],
  [routes.oauthServer.revokeUserApp, { object: 'oauth_grant', action: 'revoke', id: param('id') }],
  // Import and export
  [routes.market.batchImport, { object: 'import', action: 'import', id: answer('task_id') }],
  [routes.market.export, { object: 'export', action: 'export_services', id: () => '' }],
  [routes.audit.export, { object: 'export', action: 'export_audit', id: () => '' }],
  // Sign-ins, refused ones too. A provider's code and state are credentials: only the provider is recorded.
  [routes.auth.login, { object: 'session', action: 'sign_in', signIn: 'password', fields: (r) => ({ body: r.body }) }],
  [routes.oauth.callback.github, { object: 'session', action: 'sign_in', signIn: 'github', fields: () => ({ provider: 'github' }) }],
  [routes.oauth.callback.google, { object: 'session', action: 'sign_in', signIn: 'google', fields: () => ({ provider: 'google' }) }],
  [
    routes.oauth.oidcCallback,
    { object: 'session', action: 'sign_in', signIn: 'oidc', fields: (r) => ({ provider: `oidc:${String(r.params.slug ?? '')}` }) },
  ],
];

/** By `METHOD /api/path`, as Fastify names the route. */
export const auditedRoutes: ReadonlyMap<string, AuditedRoute> = new Map(table.map(([r, a]) => [`${r.method} /api${r.path}`, a]));
