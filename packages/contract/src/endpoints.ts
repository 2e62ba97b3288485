import { z } from 'zod';
import { HistoryQuery, ServiceUtilization, SystemOverview, UsageHistory } from './analytics.js';
import { AuditFilter, AuditPage, AuditQuery } from './audit.js';
import { LoginRequest, LogoutRequest, PublicUser, RefreshRequest, SelfUser, TokenPair } from './auth.js';
import type { OAuthProvider } from './enums.js';
import { envelope, OkEnvelope } from './envelope.js';
import {
  AccessList,
  Group,
  GroupIdParams,
  GroupInput,
  ServiceTools,
  ToolCallRequest,
  ToolCallResult,
  ToolOverrideRequest,
  ToolParams,
} from './groups.js';
import { LogPage, LogsQuery } from './logs.js';
import {
  BatchImportRequest,
  BatchImportResult,
  BatchProgressParams,
  BatchProgressQuery,
  InstallRequest,
  InstallResult,
  MarketExportQuery,
  MarketPackage,
  MarketSearchQuery,
  MarketSearchWarning,
  McpServersDocument,
  PackageDetails,
  PackageDetailsQuery,
} from './market.js';
import {
  BindingParams,
  OAuthAuthorizeQuery,
  OAuthAuthorizeResult,
  OAuthCallbackQuery,
  OAuthCallbackResult,
  oauthProviderLabels,
} from './oauth.js';
import {
  ConnectedApp,
  ConsentDecision,
  ConsentOutcome,
  ConsentParams,
  ConsentRequest,
  GrantIdParams,
  UserGrantParams,
  UserGrantsParams,
} from './oauth-server.js';
import { HeldIdentity, HeldIdentityParams, LinkedIdentity, LinkIdentityRequest, OidcSlugParams, UserIdentityParams } from './oidc.js';
import { EmbeddingsStatus, OptionEntry, ProbeResult, StatusData, UpdateOptionRequest } from './options.js';
import { type Route, routes } from './routes.js';
import {
  CustomServiceRequest,
  CustomServiceResult,
  HealthCheckResult,
  InstalledService,
  InstallStatus,
  MyEnv,
  MyEnvRequest,
  ServiceIdParams,
  TaskIdParams,
  ToggleResult,
  UninstallRequest,
  UpdatePackageResult,
  UpdateServiceRequest,
} from './services.js';
import {
  ClientMetadataDocument,
  ConnectResult,
  UpdateUpstreamOAuthRequest,
  UpstreamOAuthCallbackQuery,
  UpstreamOAuthState,
} from './upstream-oauth.js';
import {
  ChangePasswordRequest,
  CreateUserRequest,
  EditUserRequest,
  ManageUserRequest,
  UpdateSelfRequest,
  USERS_TOTAL_HEADER,
  UserIdParams,
  UserList,
  UserListQuery,
  UserSearchQuery,
} from './users.js';

/**
 * One `/api` endpoint as both sides see it: its route (method, path, auth level) with the schemas of
 * what goes in and out and its API docs. The server registers its route from this; the console calls
 * it by the same route, so a path, a body or an answer cannot drift apart between them.
 */
export interface Endpoint extends Route {
  readonly params?: z.ZodType;
  readonly query?: z.ZodType;
  readonly body?: z.ZodType;
  /** The envelope's `data`; without it the answer is `{success, message?}` alone. */
  readonly data?: z.ZodType;
  /** What went partly wrong in a success, as a `warnings` list beside `data` (a search whose sources did not all answer). */
  readonly warnings?: z.ZodType;
  /** The status of a success; 200 unless given. */
  readonly status?: 200 | 201;
  readonly tags: readonly string[];
  readonly summary: string;
  readonly description?: string;
  /** `[]` where the API docs should show that no bearer token is needed. */
  readonly security?: readonly [];
  /** Other answers the API docs describe, as whole bodies by status (a probe's 503, say). */
  readonly otherResponses?: Readonly<Record<number, z.ZodType>>;
  /** Answers `text/event-stream` rather than the JSON envelope: the console reads it with EventSource. */
  readonly eventStream?: true;
  /** Answers JSON lines (`application/x-ndjson`), one object a line, rather than the JSON envelope. */
  readonly jsonLines?: true;
}

const endpoint = <const R extends Route, const D extends Omit<Endpoint, keyof Route>>(route: R, details: D): R & D => ({
  ...route,
  ...details,
});

/** The body schema of an endpoint's success answer. */
export const responseOf = (e: Endpoint): z.ZodType => {
  if (!e.data) return OkEnvelope;
  return e.warnings ? envelope(e.data).extend({ warnings: z.array(e.warnings).optional() }) : envelope(e.data);
};

const Probe = envelope(ProbeResult);

/** The same endpoint for each sign-in provider, under the provider's own path. */
const perProvider = <const P extends Record<OAuthProvider, Route>, const D extends Omit<Endpoint, keyof Route>>(
  providerRoutes: P,
  details: (label: string) => D,
): { [K in OAuthProvider]: P[K] & D } => ({
  github: { ...providerRoutes.github, ...details(oauthProviderLabels.github) },
  google: { ...providerRoutes.google, ...details(oauthProviderLabels.google) },
});

const status = {
  status: endpoint(routes.status.status, {
    data: StatusData,
    tags: ['status'],
    summary: 'What the console needs before sign-in; never secrets',
  }),
  health: endpoint(routes.status.health, { data: ProbeResult, tags: ['status'], summary: 'Liveness probe' }),
  ready: endpoint(routes.status.ready, {
    data: ProbeResult,
    otherResponses: { 503: Probe },
    tags: ['status'],
    summary: 'Readiness probe: database reachable and migrations applied',
  }),
};

const auth = {
  login: endpoint(routes.auth.login, {
    body: LoginRequest,
    data: TokenPair,
    tags: ['auth'],
    summary: 'Sign in with username and password (rate-limited)',
    security: [],
  }),
  refresh: endpoint(routes.auth.refresh, {
    body: RefreshRequest,
    data: TokenPair,
    tags: ['auth'],
    summary: 'Exchange a refresh token for a new token pair',
    security: [],
  }),
  logout: endpoint(routes.auth.logout, {
    body: LogoutRequest.nullish(),
    tags: ['auth'],
    summary: 'Revoke a refresh token (all of the caller’s when none is given)',
  }),
};

const users = {
  self: endpoint(routes.users.self, {
    data: SelfUser,
    tags: ['users'],
    summary: 'The caller’s profile, with their own API key',
  }),
  updateSelf: endpoint(routes.users.updateSelf, {
    body: UpdateSelfRequest,
    data: PublicUser,
    tags: ['users'],
    summary: 'Edit the caller’s username, email and display name (password users only)',
  }),
  changePassword: endpoint(routes.users.changePassword, {
    body: ChangePasswordRequest,
    tags: ['users'],
    summary: 'Change the caller’s password; every session of the caller ends',
  }),
  // The console rotates with GET; POST is the honest verb for a change and is accepted too.
  rotateToken: endpoint(routes.users.rotateToken, {
    data: z.string(),
    tags: ['users'],
    summary: 'Replace the caller’s API key and return the new one',
  }),
  rotateTokenPost: endpoint(routes.users.rotateTokenPost, {
    data: z.string(),
    tags: ['users'],
    summary: 'Replace the caller’s API key and return the new one',
  }),
  list: endpoint(routes.users.list, {
    query: UserListQuery,
    data: UserList,
    tags: ['users'],
    summary: `One page of users, newest first (total in the ${USERS_TOTAL_HEADER} header)`,
  }),
  search: endpoint(routes.users.search, {
    query: UserSearchQuery,
    data: UserList,
    tags: ['users'],
    summary: 'Users whose username, display name or email contains the keyword, or whose id it is',
  }),
  create: endpoint(routes.users.create, {
    body: CreateUserRequest,
    data: PublicUser,
    status: 201,
    tags: ['users'],
    summary: 'Create a user of a lower role than the caller',
  }),
  edit: endpoint(routes.users.edit, {
    body: EditUserRequest,
    data: PublicUser,
    tags: ['users'],
    summary: 'Edit a user of a lower role, or oneself',
  }),
  remove: endpoint(routes.users.remove, {
    params: UserIdParams,
    tags: ['users'],
    summary: 'Delete a user of a lower role',
  }),
  manage: endpoint(routes.users.manage, {
    body: ManageUserRequest,
    data: PublicUser,
    tags: ['users'],
    summary: 'Enable, disable, promote or demote a user',
  }),
};

const options = {
  list: endpoint(routes.options.list, {
    data: z.array(OptionEntry),
    tags: ['options'],
    summary: 'Every preference (secrets masked)',
  }),
  update: endpoint(routes.options.update, {
    body: UpdateOptionRequest,
    tags: ['options'],
    summary: 'Set one preference',
  }),
  embeddings: endpoint(routes.options.embeddings, {
    data: EmbeddingsStatus,
    tags: ['options'],
    summary: "The embeddings provider's last status on this replica (discovery search, decision 0046)",
  }),
  checkEmbeddings: endpoint(routes.options.checkEmbeddings, {
    data: EmbeddingsStatus,
    tags: ['options'],
    summary: 'Asks the embeddings provider for one vector now and answers its status',
    description: 'Never an error for a failing provider: the status says `failing` with the reason.',
  }),
};

const services = {
  installed: endpoint(routes.services.installed, {
    data: z.array(InstalledService),
    tags: ['services'],
    summary: 'Every installed service with the caller’s usage today (values masked for non-admins)',
  }),
  createCustom: endpoint(routes.services.createCustom, {
    body: CustomServiceRequest,
    data: CustomServiceResult,
    status: 201,
    tags: ['services'],
    summary: 'Create a custom stdio, sse, streamableHttp or openapi service (openapi: preview with preview: true)',
  }),
  installStatus: endpoint(routes.services.installStatus, {
    params: TaskIdParams,
    data: InstallStatus,
    tags: ['services'],
    summary: 'An install task’s status and every log line so far',
  }),
  update: endpoint(routes.services.update, {
    params: ServiceIdParams,
    body: UpdateServiceRequest,
    tags: ['services'],
    summary: 'Set the daily limit ({rpd_limit} alone) or edit name, description, URL, headers and variables',
  }),
  toggle: endpoint(routes.services.toggle, {
    params: ServiceIdParams,
    data: ToggleResult,
    tags: ['services'],
    summary: 'Enable or disable a service: for everyone (admins) or for the caller alone (personal switch)',
  }),
  healthCheck: endpoint(routes.services.healthCheck, {
    params: ServiceIdParams,
    data: HealthCheckResult,
    tags: ['services'],
    summary: 'Check the service now with a real MCP round trip',
  }),
  reconnect: endpoint(routes.services.reconnect, {
    params: ServiceIdParams,
    data: HealthCheckResult,
    tags: ['services'],
    summary: 'Restart the service’s link (process or connection, backoff forgotten), then check it with a real MCP round trip',
  }),
  uninstall: endpoint(routes.services.uninstall, {
    body: UninstallRequest,
    tags: ['services'],
    summary: 'Stop and delete a service; its history stays',
  }),
  updatePackage: endpoint(routes.services.updatePackage, {
    params: ServiceIdParams,
    data: UpdatePackageResult,
    tags: ['services'],
    summary: 'Install the newest release of an installed package and restart the service on it (an install task)',
  }),
  myEnv: endpoint(routes.services.myEnv, {
    params: ServiceIdParams,
    data: MyEnv,
    tags: ['services'],
    summary: 'The variables the caller may set on this service, with the caller’s values masked',
  }),
  setMyEnv: endpoint(routes.services.setMyEnv, {
    params: ServiceIdParams,
    body: MyEnvRequest,
    data: MyEnv,
    tags: ['services'],
    summary: 'Replace the caller’s own values of this service’s variables',
  }),
  tools: endpoint(routes.services.tools, {
    params: ServiceIdParams,
    data: ServiceTools,
    tags: ['services'],
    summary: 'The service’s tools as its upstream lists them now, with the overrides applied',
    description: 'Fetched through the link the caller would use on /proxy. Non-admins see only enabled tools of services they may use.',
  }),
  setTool: endpoint(routes.services.setTool, {
    params: ToolParams,
    body: ToolOverrideRequest,
    data: ServiceTools,
    tags: ['services'],
    summary: 'Enable or disable a tool, give it an alias or another description (`null` clears one)',
    description:
      'Matched by the tool’s original name; applies on /proxy and in every group at once, and clients get notifications/tools/list_changed.',
  }),
  callTool: endpoint(routes.services.callTool, {
    params: ToolParams,
    body: ToolCallRequest,
    data: ToolCallResult,
    tags: ['services'],
    summary: 'Try it: call a tool through the gateway as the caller (metered and limited like /proxy)',
  }),
  access: endpoint(routes.services.access, {
    params: ServiceIdParams,
    data: AccessList,
    tags: ['services'],
    summary: 'Who may use the service (set it with `access` on PUT /mcp_services/{id})',
  }),
};

const groups = {
  list: endpoint(routes.groups.list, {
    data: z.array(Group),
    tags: ['groups'],
    summary: 'Every group (admins) or the groups open to the caller',
  }),
  create: endpoint(routes.groups.create, {
    body: GroupInput,
    data: Group,
    status: 201,
    tags: ['groups'],
    summary: 'Create a group: one MCP endpoint for several services',
  }),
  get: endpoint(routes.groups.get, {
    params: GroupIdParams,
    data: Group,
    tags: ['groups'],
    summary: 'One group',
  }),
  update: endpoint(routes.groups.update, {
    params: GroupIdParams,
    body: GroupInput,
    data: Group,
    tags: ['groups'],
    summary: 'Replace a group’s settings, members and access',
  }),
  remove: endpoint(routes.groups.remove, {
    params: GroupIdParams,
    tags: ['groups'],
    summary: 'Delete a group; its sessions end',
  }),
};

const upstreamOAuth = {
  state: endpoint(routes.upstreamOAuth.state, {
    params: ServiceIdParams,
    data: UpstreamOAuthState,
    tags: ['upstream-oauth'],
    summary: 'How a remote service is connected with OAuth, as the caller sees it (no token is ever shown)',
  }),
  update: endpoint(routes.upstreamOAuth.update, {
    params: ServiceIdParams,
    body: UpdateUpstreamOAuthRequest,
    data: UpstreamOAuthState,
    tags: ['upstream-oauth'],
    summary: 'Set the OAuth mode (shared or per user) and a client registered by hand',
  }),
  connect: endpoint(routes.upstreamOAuth.connect, {
    params: ServiceIdParams,
    data: ConnectResult,
    tags: ['upstream-oauth'],
    summary: 'Start connecting: the shared account (admins) or, in per-user mode, the caller’s own',
    description:
      'Discovers the authorization server (RFC 9728, RFC 8414, OpenID discovery), registers Toolport (Client ID Metadata Document, dynamic registration, or the client the admin entered) and answers the authorize URL (code, PKCE S256, resource indicator, single-use state bound to the caller). Following it ends on the console page /oauth/upstream, which says the result.',
  }),
  disconnect: endpoint(routes.upstreamOAuth.disconnect, {
    params: ServiceIdParams,
    data: UpstreamOAuthState,
    tags: ['upstream-oauth'],
    summary: 'Forget the connection (revoked upstream when the provider offers revocation)',
  }),
  callback: endpoint(routes.upstreamOAuth.callback, {
    query: UpstreamOAuthCallbackQuery,
    tags: ['upstream-oauth'],
    summary: 'Where the provider sends the browser back: redirects to the console page /oauth/upstream with the result',
    security: [],
  }),
  clientMetadata: endpoint(routes.upstreamOAuth.clientMetadata, {
    tags: ['upstream-oauth'],
    summary: 'Toolport’s OAuth Client ID Metadata Document (its URL is the client id when ServerAddress is https)',
    security: [],
    otherResponses: { 200: ClientMetadataDocument },
  }),
};

const analytics = {
  overview: endpoint(routes.analytics.overview, {
    data: SystemOverview,
    tags: ['analytics'],
    summary: 'Service counts by health and today’s requests and average latency',
  }),
  utilization: endpoint(routes.analytics.utilization, {
    data: z.array(ServiceUtilization),
    tags: ['analytics'],
    summary: 'Today’s requests and average latency per service',
  }),
  history: endpoint(routes.analytics.history, {
    query: HistoryQuery,
    data: UsageHistory,
    tags: ['analytics'],
    summary: 'Requests, errors, latency and bytes per day, per service and per tool over a range of days',
    description:
      'From the daily rollups, which are kept after the raw request records are purged. `from`/`to` are days (YYYY-MM-DD) in the server time zone; by default the last 30 days. At most 366 days. `user_id` other than your own needs an administrator.',
  }),
};

const logs = {
  list: endpoint(routes.logs.list, {
    query: LogsQuery,
    data: LogPage,
    tags: ['logs'],
    summary: 'The service log and the counted requests, newest first, filtered by service, phase and level',
    description:
      'Counted requests appear as `run` lines with a negative id, their outcome as level (ok: info, refused over the daily limit: warn, failed: error). Their part of `total` comes from the daily rollups. They carry the name of their service while it is installed; `service_name` matches installed services for them, `service_id` any.',
  }),
};

const audit = {
  list: endpoint(routes.audit.list, {
    query: AuditQuery,
    data: AuditPage,
    tags: ['audit'],
    summary: 'The audit trail: administrative changes, sign-ins and refused sign-ins, newest first (admins)',
    description:
      'Filters combine: `actor` (a username, exactly, or a user id), `object_type`, `object_id`, `since` (inclusive) and `until` (exclusive), each instant as Unix milliseconds or an ISO 8601 date-time with an offset. Paged like GET /mcp_logs: 1-based `page`, `page_size` up to 100, `total` of the whole filter. Secrets in `changes` are `********`.',
  }),
  export: endpoint(routes.audit.export, {
    query: AuditFilter,
    jsonLines: true,
    tags: ['audit'],
    summary: 'The audit trail as JSON lines (application/x-ndjson), oldest first, under the same filters (admins)',
    description: 'One entry a line, in the shape of GET /audit’s entries. Exporting is itself recorded.',
  }),
};

const market = {
  search: endpoint(routes.market.search, {
    query: MarketSearchQuery,
    data: z.array(MarketPackage),
    warnings: MarketSearchWarning,
    tags: ['market'],
    summary: 'Search npm, PyPI and the MCP Registry; an empty query gives an empty list',
    description:
      'When some asked sources fail, the answer has the others’ results and a `warnings` list beside `data` ({source, message}); when every asked source fails, it is a 502 whose message names each source and its reason.',
  }),
  packageDetails: endpoint(routes.market.packageDetails, {
    query: PackageDetailsQuery,
    data: PackageDetails,
    tags: ['market'],
    summary: 'One package: readme, variables, the mcpServers entry that runs it, installed state',
  }),
  install: endpoint(routes.market.install, {
    body: InstallRequest,
    data: InstallResult,
    tags: ['market'],
    summary: 'Install a package as a service (a durable task), or add the caller’s values to the installed one',
    description:
      'Missing required variables answer 400 with data.required_env_vars. Poll GET /mcp_market/install_status/{task_id} for the log.',
  }),
  batchImport: endpoint(routes.market.batchImport, {
    body: BatchImportRequest,
    data: BatchImportResult,
    tags: ['market'],
    summary: 'Import the servers of an mcpServers document (Claude Desktop, Cursor, Cherry Studio, VS Code `servers`, or a bare map)',
    description: 'Existing names are skipped; npx / uvx packages are installed. Follow GET /mcp_market/batch-import/progress/{task_id}.',
  }),
  // EventSource cannot send headers: the handler checks the admin's token from `?token=` itself.
  batchProgress: endpoint(routes.market.batchProgress, {
    params: BatchProgressParams,
    query: BatchProgressQuery,
    eventStream: true,
    tags: ['market'],
    summary: 'Progress of a batch import as text/event-stream: {name, status, message} events, then {status: "done", summary}',
    description:
      'Authenticated by an admin access token in ?token= (or the Authorization header). A late subscriber receives the whole history.',
  }),
  export: endpoint(routes.market.export, {
    query: MarketExportQuery,
    data: McpServersDocument,
    tags: ['market'],
    summary:
      'Every installed service as an mcpServers document (variable and header values and URL credentials masked unless include_secrets=true)',
    description:
      'Marketplace packages and custom npx / uvx services appear as npx / uvx commands pinned to the installed version, so ' +
      'importing the document elsewhere installs the same release. Remote services are written with type "http" or "sse", ' +
      "the types Claude Code and VS Code read. Variable and header values, and a remote URL's user info and credential " +
      'query parameters (key, api_key, apikey, token, access_token, client_secret, password, sig…), are replaced by ' +
      '"********" unless include_secrets=true (or 1) is given.',
  }),
};

const oauth = {
  authorize: perProvider(routes.oauth.authorize, (label) => ({
    query: OAuthAuthorizeQuery,
    data: OAuthAuthorizeResult,
    tags: ['oauth'],
    summary: `Start signing in with ${label} (with bind=1 and a bearer token: link ${label} to the caller)`,
    security: [],
  })),
  callback: perProvider(routes.oauth.callback, (label) => ({
    query: OAuthCallbackQuery,
    data: OAuthCallbackResult,
    tags: ['oauth'],
    summary: `Finish signing in with ${label}: exchanges the code and answers like sign-in`,
    security: [],
  })),
  unbind: endpoint(routes.oauth.unbind, {
    params: BindingParams,
    data: PublicUser,
    tags: ['oauth'],
    summary: 'Unlink GitHub or Google from the caller’s account (not the last way to sign in)',
  }),
  identities: endpoint(routes.oauth.identities, {
    params: UserIdParams,
    data: z.array(LinkedIdentity),
    tags: ['oauth', 'users'],
    summary: 'The provider identities linked to a user (admins)',
  }),
  link: endpoint(routes.oauth.link, {
    params: UserIdParams,
    body: LinkIdentityRequest,
    data: z.array(LinkedIdentity),
    tags: ['oauth', 'users'],
    summary: 'Link a provider identity (a held sign-in, or a provider and subject) to a user (admins)',
    description:
      'An admin acts only on users of a lower role; the super admin on anyone. The provider must be configured and the ' +
      'identity linked to nobody else; the user may have one identity per provider. A held sign-in of that identity is ' +
      'used up. Answers the user’s identities.',
  }),
  unlink: endpoint(routes.oauth.unlink, {
    params: UserIdentityParams,
    data: z.array(LinkedIdentity),
    tags: ['oauth', 'users'],
    summary: 'Unlink a provider identity from a user (admins; not the user’s last way to sign in)',
  }),
  held: endpoint(routes.oauth.held, {
    data: z.array(HeldIdentity),
    tags: ['oauth', 'users'],
    summary: 'Provider sign-ins refused until an admin links them (an unverified email of an existing account, sign-up closed)',
  }),
  dismissHeld: endpoint(routes.oauth.dismissHeld, {
    params: HeldIdentityParams,
    tags: ['oauth', 'users'],
    summary: 'Forget a held provider sign-in without linking it (admins)',
  }),
  oidcAuthorize: endpoint(routes.oauth.oidcAuthorize, {
    params: OidcSlugParams,
    query: OAuthAuthorizeQuery,
    data: OAuthAuthorizeResult,
    tags: ['oauth'],
    summary: 'Start signing in with an OpenID Connect provider (with bind=1 and a bearer token: link it to the caller)',
    description:
      'Authorization code flow with PKCE (S256), state and nonce; the provider sends the browser back to the console page ' +
      '/oauth/oidc/{slug}, the redirect_uri that GET /status lists.',
    security: [],
  }),
  oidcCallback: endpoint(routes.oauth.oidcCallback, {
    params: OidcSlugParams,
    query: OAuthCallbackQuery,
    data: OAuthCallbackResult,
    tags: ['oauth'],
    summary: 'Finish signing in with an OpenID Connect provider: exchanges the code, validates the ID token, answers like sign-in',
    security: [],
  }),
};

/** Every `/api` endpoint, by module. */
const oauthServer = {
  consent: endpoint(routes.oauthServer.consent, {
    params: ConsentParams,
    data: ConsentRequest,
    tags: ['oauth-server'],
    summary: 'A pending MCP client authorization, for the consent page',
    description: 'Who asks (client name, redirect host, logo) and for which endpoint; 404 once decided or expired (10 minutes).',
  }),
  decide: endpoint(routes.oauthServer.decide, {
    params: ConsentParams,
    body: ConsentDecision,
    data: ConsentOutcome,
    tags: ['oauth-server'],
    summary: 'Allow or Deny a pending MCP client authorization',
    description: 'Answers where the browser goes next: the client’s redirect URI with a code (Allow) or access_denied (Deny).',
  }),
  myApps: endpoint(routes.oauthServer.myApps, {
    data: z.array(ConnectedApp),
    tags: ['oauth-server'],
    summary: 'The caller’s connected apps: MCP clients they approved and have not revoked',
  }),
  revokeMyApp: endpoint(routes.oauthServer.revokeMyApp, {
    params: GrantIdParams,
    tags: ['oauth-server'],
    summary: 'Revoke one of the caller’s connected apps (its tokens stop working within seconds)',
  }),
  userApps: endpoint(routes.oauthServer.userApps, {
    params: UserGrantsParams,
    data: z.array(ConnectedApp),
    tags: ['oauth-server'],
    summary: 'A user’s connected apps (admins)',
  }),
  revokeUserApp: endpoint(routes.oauthServer.revokeUserApp, {
    params: UserGrantParams,
    tags: ['oauth-server'],
    summary: 'Revoke a user’s connected app (admins)',
  }),
};

export const endpoints = {
  status,
  auth,
  users,
  options,
  services,
  groups,
  upstreamOAuth,
  analytics,
  logs,
  audit,
  market,
  oauth,
  oauthServer,
};

/** Every entry of the table, for walks over all endpoints (route checks, docs). */
export function allEndpoints(): Endpoint[] {
  const found: Endpoint[] = [];
  const walk = (node: object): void => {
    for (const value of Object.values(node)) {
      if (typeof value.method === 'string' && typeof value.path === 'string') found.push(value as Endpoint);
      else walk(value);
    }
  };
  walk(endpoints);
  return found;
}

type Leaves<T> = T extends Endpoint ? T : T extends object ? { [K in keyof T]: Leaves<T[K]> }[keyof T] : never;

/** Any entry of the table, with its own schemas. */
export type AnyEndpoint = Leaves<typeof endpoints>;

/** The table's entry of a route, found by method and path (the console holds routes, not schemas). */
export type EndpointOf<R extends Route> = Extract<AnyEndpoint, { method: R['method']; path: R['path'] }>;

/** The `params` an endpoint's path takes, as the caller writes them. */
export type ParamsOf<E extends Endpoint> = E['params'] extends z.ZodType ? z.input<E['params']> : undefined;
/** The query string an endpoint reads, as the caller writes it. */
export type QueryOf<E extends Endpoint> = E['query'] extends z.ZodType ? z.input<E['query']> : undefined;
/** The request body, as the caller writes it. */
export type BodyOf<E extends Endpoint> = E['body'] extends z.ZodType ? z.input<E['body']> : undefined;
/** The envelope's `data` of a success, as the server sends it. */
export type DataOf<E extends Endpoint> = E['data'] extends z.ZodType ? z.output<E['data']> : undefined;
