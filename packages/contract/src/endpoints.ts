import { z } from 'zod';
import { HistoryQuery, ServiceUtilization, SystemOverview, UsageHistory } from './analytics.js';
import { LoginRequest, LogoutRequest, PublicUser, RefreshRequest, SelfUser, TokenPair } from './auth.js';
import { OAuthProvider } from './enums.js';
import { envelope, OkEnvelope } from './envelope.js';
import { LogPage, LogsQuery } from './logs.js';
import {
  BatchImportRequest,
  BatchImportResult,
  BatchProgressParams,
  BatchProgressQuery,
  InstallRequest,
  InstallResult,
  MarketPackage,
  MarketSearchQuery,
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
import { OptionEntry, ProbeResult, StatusData, UpdateOptionRequest } from './options.js';
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
  UpdateServiceRequest,
} from './services.js';
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

/** Who may call an endpoint: anyone, any signed-in user, or an administrator. */
export type AuthLevel = 'public' | 'user' | 'admin';
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/**
 * One `/api` endpoint as both sides see it. The server registers its route from this (method, path,
 * schemas, auth level, API docs); the console calls it through the same entry, so a path, a body or an
 * answer cannot drift apart between them.
 */
export interface Endpoint {
  readonly method: HttpMethod;
  /** Below `/api`, with `:name` placeholders filled from `params`. */
  readonly path: string;
  readonly auth: AuthLevel;
  readonly params?: z.ZodType;
  readonly query?: z.ZodType;
  readonly body?: z.ZodType;
  /** The envelope's `data`; without it the answer is `{success, message?}` alone. */
  readonly data?: z.ZodType;
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
}

const endpoint = <const E extends Endpoint>(e: E): E => e;

/** The body schema of an endpoint's success answer. */
export const responseOf = (e: Endpoint): z.ZodType => (e.data ? envelope(e.data) : OkEnvelope);

/** Fills an endpoint's `:name` placeholders, each value URL-encoded. */
export function pathOf(e: Pick<Endpoint, 'path'>, params?: Readonly<Record<string, string | number>>): string {
  return e.path.replace(/:(\w+)/g, (_, name: string) => {
    const value = params?.[name];
    if (value === undefined) throw new Error(`${e.path}: no value for :${name}`);
    return encodeURIComponent(String(value));
  });
}

const Probe = envelope(ProbeResult);

/** One entry per sign-in provider: the routes exist once for each, under the provider's own path. */
const perProvider = <E extends Endpoint>(make: (provider: OAuthProvider, label: string) => E): Record<OAuthProvider, E> => ({
  github: make('github', oauthProviderLabels.github),
  google: make('google', oauthProviderLabels.google),
});

const status = {
  status: endpoint({
    method: 'GET',
    path: '/status',
    auth: 'public',
    data: StatusData,
    tags: ['status'],
    summary: 'What the console needs before sign-in; never secrets',
  }),
  health: endpoint({ method: 'GET', path: '/health', auth: 'public', data: ProbeResult, tags: ['status'], summary: 'Liveness probe' }),
  ready: endpoint({
    method: 'GET',
    path: '/ready',
    auth: 'public',
    data: ProbeResult,
    otherResponses: { 503: Probe },
    tags: ['status'],
    summary: 'Readiness probe: database reachable and migrations applied',
  }),
};

const auth = {
  login: endpoint({
    method: 'POST',
    path: '/auth/login',
    auth: 'public',
    body: LoginRequest,
    data: TokenPair,
    tags: ['auth'],
    summary: 'Sign in with username and password (rate-limited)',
    security: [],
  }),
  refresh: endpoint({
    method: 'POST',
    path: '/auth/refresh',
    auth: 'public',
    body: RefreshRequest,
    data: TokenPair,
    tags: ['auth'],
    summary: 'Exchange a refresh token for a new token pair',
    security: [],
  }),
  logout: endpoint({
    method: 'POST',
    path: '/auth/logout',
    auth: 'user',
    body: LogoutRequest.nullish(),
    tags: ['auth'],
    summary: 'Revoke a refresh token (all of the caller’s when none is given)',
  }),
};

const users = {
  self: endpoint({
    method: 'GET',
    path: '/user/self',
    auth: 'user',
    data: SelfUser,
    tags: ['users'],
    summary: 'The caller’s profile, with their own API key',
  }),
  updateSelf: endpoint({
    method: 'PUT',
    path: '/user/self',
    auth: 'user',
    body: UpdateSelfRequest,
    data: PublicUser,
    tags: ['users'],
    summary: 'Edit the caller’s username, email and display name (password users only)',
  }),
  changePassword: endpoint({
    method: 'POST',
    path: '/user/change-password',
    auth: 'user',
    body: ChangePasswordRequest,
    tags: ['users'],
    summary: 'Change the caller’s password; every session of the caller ends',
  }),
  // The console rotates with GET; POST is the honest verb for a change and is accepted too.
  rotateToken: endpoint({
    method: 'GET',
    path: '/user/token',
    auth: 'user',
    data: z.string(),
    tags: ['users'],
    summary: 'Replace the caller’s API key and return the new one',
  }),
  rotateTokenPost: endpoint({
    method: 'POST',
    path: '/user/token',
    auth: 'user',
    data: z.string(),
    tags: ['users'],
    summary: 'Replace the caller’s API key and return the new one',
  }),
  list: endpoint({
    method: 'GET',
    path: '/user/',
    auth: 'admin',
    query: UserListQuery,
    data: UserList,
    tags: ['users'],
    summary: `One page of users, newest first (total in the ${USERS_TOTAL_HEADER} header)`,
  }),
  search: endpoint({
    method: 'GET',
    path: '/user/search',
    auth: 'admin',
    query: UserSearchQuery,
    data: UserList,
    tags: ['users'],
    summary: 'Users whose username, display name or email contains the keyword, or whose id it is',
  }),
  create: endpoint({
    method: 'POST',
    path: '/user',
    auth: 'admin',
    body: CreateUserRequest,
    data: PublicUser,
    status: 201,
    tags: ['users'],
    summary: 'Create a user of a lower role than the caller',
  }),
  edit: endpoint({
    method: 'PUT',
    path: '/user',
    auth: 'admin',
    body: EditUserRequest,
    data: PublicUser,
    tags: ['users'],
    summary: 'Edit a user of a lower role, or oneself',
  }),
  remove: endpoint({
    method: 'DELETE',
    path: '/user/:id',
    auth: 'admin',
    params: UserIdParams,
    tags: ['users'],
    summary: 'Delete a user of a lower role',
  }),
  manage: endpoint({
    method: 'POST',
    path: '/user/manage',
    auth: 'admin',
    body: ManageUserRequest,
    data: PublicUser,
    tags: ['users'],
    summary: 'Enable, disable, promote or demote a user',
  }),
};

const options = {
  list: endpoint({
    method: 'GET',
    path: '/option/',
    auth: 'admin',
    data: z.array(OptionEntry),
    tags: ['options'],
    summary: 'Every preference (secrets masked)',
  }),
  update: endpoint({
    method: 'PUT',
    path: '/option/',
    auth: 'admin',
    body: UpdateOptionRequest,
    tags: ['options'],
    summary: 'Set one preference',
  }),
};

const services = {
  installed: endpoint({
    method: 'GET',
    path: '/mcp_market/installed',
    auth: 'user',
    data: z.array(InstalledService),
    tags: ['services'],
    summary: 'Every installed service with the caller’s usage today (values masked for non-admins)',
  }),
  createCustom: endpoint({
    method: 'POST',
    path: '/mcp_market/custom_service',
    auth: 'admin',
    body: CustomServiceRequest,
    data: CustomServiceResult,
    status: 201,
    tags: ['services'],
    summary: 'Create a custom stdio, sse or streamableHttp service',
  }),
  installStatus: endpoint({
    method: 'GET',
    path: '/mcp_market/install_status/:taskId',
    auth: 'admin',
    params: TaskIdParams,
    data: InstallStatus,
    tags: ['services'],
    summary: 'An install task’s status and every log line so far',
  }),
  update: endpoint({
    method: 'PUT',
    path: '/mcp_services/:id',
    auth: 'admin',
    params: ServiceIdParams,
    body: UpdateServiceRequest,
    tags: ['services'],
    summary: 'Set the daily limit ({rpd_limit} alone) or edit name, description, URL, headers and variables',
  }),
  toggle: endpoint({
    method: 'POST',
    path: '/mcp_services/:id/toggle',
    auth: 'admin',
    params: ServiceIdParams,
    data: ToggleResult,
    tags: ['services'],
    summary: 'Enable or disable a service',
  }),
  healthCheck: endpoint({
    method: 'POST',
    path: '/mcp_services/:id/health/check',
    auth: 'user',
    params: ServiceIdParams,
    data: HealthCheckResult,
    tags: ['services'],
    summary: 'Check the service now with a real MCP round trip',
  }),
  uninstall: endpoint({
    method: 'POST',
    path: '/mcp_market/uninstall',
    auth: 'admin',
    body: UninstallRequest,
    tags: ['services'],
    summary: 'Stop and delete a service; its history stays',
  }),
  myEnv: endpoint({
    method: 'GET',
    path: '/mcp_services/:id/my_env',
    auth: 'user',
    params: ServiceIdParams,
    data: MyEnv,
    tags: ['services'],
    summary: 'The variables the caller may set on this service, with the caller’s values masked',
  }),
  setMyEnv: endpoint({
    method: 'PUT',
    path: '/mcp_services/:id/my_env',
    auth: 'user',
    params: ServiceIdParams,
    body: MyEnvRequest,
    data: MyEnv,
    tags: ['services'],
    summary: 'Replace the caller’s own values of this service’s variables',
  }),
};

const analytics = {
  overview: endpoint({
    method: 'GET',
    path: '/analytics/system/overview',
    auth: 'user',
    data: SystemOverview,
    tags: ['analytics'],
    summary: 'Service counts by health and today’s requests and average latency',
  }),
  utilization: endpoint({
    method: 'GET',
    path: '/analytics/services/utilization',
    auth: 'user',
    data: z.array(ServiceUtilization),
    tags: ['analytics'],
    summary: 'Today’s requests and average latency per service',
  }),
  history: endpoint({
    method: 'GET',
    path: '/analytics/history',
    auth: 'user',
    query: HistoryQuery,
    data: UsageHistory,
    tags: ['analytics'],
    summary: 'Requests, errors, latency and bytes per day, per service and per tool over a range of days',
    description:
      'From the daily rollups, which are kept after the raw request records are purged. `from`/`to` are days (YYYY-MM-DD) in the server time zone; by default the last 30 days. At most 366 days. `user_id` other than your own needs an administrator.',
  }),
};

const logs = {
  list: endpoint({
    method: 'GET',
    path: '/mcp_logs',
    auth: 'admin',
    query: LogsQuery,
    data: LogPage,
    tags: ['logs'],
    summary: 'The service log and the counted requests, newest first, filtered by service, phase and level',
    description:
      'Counted requests appear as `run` lines with a negative id, their outcome as level (ok: info, refused over the daily limit: warn, failed: error). Their part of `total` comes from the daily rollups. They carry the name of their service while it is installed; `service_name` matches installed services for them, `service_id` any.',
  }),
};

const market = {
  search: endpoint({
    method: 'GET',
    path: '/mcp_market/search',
    auth: 'user',
    query: MarketSearchQuery,
    data: z.array(MarketPackage),
    tags: ['market'],
    summary: 'Search npm, PyPI and the MCP Registry; an empty query gives an empty list',
  }),
  packageDetails: endpoint({
    method: 'GET',
    path: '/mcp_market/package_details',
    auth: 'user',
    query: PackageDetailsQuery,
    data: PackageDetails,
    tags: ['market'],
    summary: 'One package: readme, variables, the mcpServers entry that runs it, installed state',
  }),
  install: endpoint({
    method: 'POST',
    path: '/mcp_market/install_or_add_service',
    auth: 'admin',
    body: InstallRequest,
    data: InstallResult,
    tags: ['market'],
    summary: 'Install a package as a service (a durable task), or add the caller’s values to the installed one',
    description:
      'Missing required variables answer 400 with data.required_env_vars. Poll GET /mcp_market/install_status/{task_id} for the log.',
  }),
  batchImport: endpoint({
    method: 'POST',
    path: '/mcp_market/batch-import',
    auth: 'admin',
    body: BatchImportRequest,
    data: BatchImportResult,
    tags: ['market'],
    summary: 'Import the servers of an mcpServers document (Claude Desktop, Cursor, Cherry Studio, VS Code `servers`, or a bare map)',
    description: 'Existing names are skipped; npx / uvx packages are installed. Follow GET /mcp_market/batch-import/progress/{task_id}.',
  }),
  // EventSource cannot send headers: the handler checks the admin's token from `?token=` itself.
  batchProgress: endpoint({
    method: 'GET',
    path: '/mcp_market/batch-import/progress/:task_id',
    auth: 'public',
    params: BatchProgressParams,
    query: BatchProgressQuery,
    eventStream: true,
    tags: ['market'],
    summary: 'Progress of a batch import as text/event-stream: {name, status, message} events, then {status: "done", summary}',
    description:
      'Authenticated by an admin access token in ?token= (or the Authorization header). A late subscriber receives the whole history.',
  }),
  export: endpoint({
    method: 'GET',
    path: '/mcp_market/export',
    auth: 'admin',
    data: McpServersDocument,
    tags: ['market'],
    summary: 'Every installed service as an mcpServers document (variable and header values included)',
    description: 'Marketplace packages appear as pinned npx / uvx commands, so importing the document elsewhere installs them again.',
  }),
};

const oauth = {
  authorize: perProvider((provider, label) =>
    endpoint({
      method: 'GET',
      path: `/oauth/${provider}/authorize`,
      auth: 'public',
      query: OAuthAuthorizeQuery,
      data: OAuthAuthorizeResult,
      tags: ['oauth'],
      summary: `Start signing in with ${label} (with bind=1 and a bearer token: link ${label} to the caller)`,
      security: [],
    }),
  ),
  callback: perProvider((provider, label) =>
    endpoint({
      method: 'GET',
      path: `/oauth/${provider}`,
      auth: 'public',
      query: OAuthCallbackQuery,
      data: OAuthCallbackResult,
      tags: ['oauth'],
      summary: `Finish signing in with ${label}: exchanges the code and answers like sign-in`,
      security: [],
    }),
  ),
  unbind: endpoint({
    method: 'DELETE',
    path: '/user/bindings/:provider',
    auth: 'user',
    params: BindingParams,
    data: PublicUser,
    tags: ['oauth'],
    summary: 'Unlink GitHub or Google from the caller’s account (not the last way to sign in)',
  }),
};

/** Every `/api` endpoint, by module. */
export const endpoints = { status, auth, users, options, services, analytics, logs, market, oauth };

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

/** The `params` an endpoint's path takes, as the caller writes them. */
export type ParamsOf<E extends Endpoint> = E['params'] extends z.ZodType ? z.input<E['params']> : undefined;
/** The query string an endpoint reads, as the caller writes it. */
export type QueryOf<E extends Endpoint> = E['query'] extends z.ZodType ? z.input<E['query']> : undefined;
/** The request body, as the caller writes it. */
export type BodyOf<E extends Endpoint> = E['body'] extends z.ZodType ? z.input<E['body']> : undefined;
/** The envelope's `data` of a success, as the server sends it. */
export type DataOf<E extends Endpoint> = E['data'] extends z.ZodType ? z.output<E['data']> : undefined;
