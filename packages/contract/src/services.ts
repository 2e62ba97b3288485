import { z } from 'zod';
import { ServiceType } from './enums.js';
import { AccessList } from './groups.js';

/** Multi-line `KEY=VALUE` text as the console sends it, or the same as a JSON object. */
const KeyValueInput = z.union([z.string().max(65_536), z.record(z.string(), z.unknown())]);

/**
 * How a service's processes are shared: one for every client session, or one per client session
 * (for servers that keep per-client state), capped per user and service.
 */
/**
 * A name usable as it is in `/proxy/{name}/mcp`. Any other name given to a custom install is kept as the display
 * name, and the endpoint's name is derived from the package, the executable or the URL host (decision 0054).
 */
export const SERVICE_NAME_PATTERN = /^[a-zA-Z0-9][a-zA-Z0-9_-]{0,63}$/;

export const Isolation = z.enum(['shared', 'session']);
export type Isolation = z.infer<typeof Isolation>;

/**
 * Isolated ('session') processes one user may hold on one service at once. At the cap the user's link idle
 * longest makes room; the console shows the number where isolation is chosen.
 */
export const ISOLATED_SESSIONS_PER_USER = 10;

const FilterList = z.array(z.string().max(512)).max(500);
export const OperationFilter = z.object({
  tags: FilterList.optional(),
  paths: FilterList.optional(),
  operation_ids: FilterList.optional(),
});
export type OperationFilter = z.infer<typeof OperationFilter>;

/** One tool an OpenAPI service would create (a preview). */
export const OpenApiToolPreview = z.object({
  name: z.string(),
  description: z.string(),
  method: z.string(),
  path: z.string(),
  input_schema: z.record(z.string(), z.unknown()),
});
export type OpenApiToolPreview = z.infer<typeof OpenApiToolPreview>;

/** `POST /mcp_market/custom_service` (docs/console.md §2.7, §5). Deeper rules are checked by the server. */
export const CustomServiceRequest = z.object({
  name: z.string().max(256).default(''),
  type: ServiceType.default('streamableHttp'),
  command: z.string().max(8192).optional().default(''),
  environments: KeyValueInput.optional(),
  url: z.string().max(4096).optional().default(''),
  headers: KeyValueInput.optional(),
  description: z.string().max(2000).optional().default(''),
  /** Absent: shared. */
  isolation: Isolation.optional(),
  /** `openapi`: the document's text (JSON or YAML), instead of its `url`. The server caps it (docs/openapi.md). */
  document: z
    .string()
    .max(4 * 1024 * 1024)
    .optional(),
  /** `openapi`: where requests go, instead of the document's first server. */
  base_url: z.string().max(4096).optional(),
  /** `openapi`: the operations kept (any tag, path or operation id listed); absent or empty: all. */
  operation_filter: OperationFilter.optional(),
  /** `openapi`: check the document and answer the tools it would create, creating nothing. */
  preview: z.boolean().optional(),
});
export type CustomServiceRequest = z.infer<typeof CustomServiceRequest>;

export const CustomServiceResult = z.object({
  service_id: z.number().int(),
  name: z.string(),
  display_name: z.string(),
  /** `preview`: nothing was created (`service_id` is 0), `tools` says what would be. */
  status: z.enum(['installing', 'completed', 'preview']),
  tools: z.array(OpenApiToolPreview).optional(),
  /** openapi: where requests go. */
  base_url: z.string().optional(),
  /** stdio only: poll `GET /mcp_market/install_status/{task_id}` until the first health check is done. */
  task_id: z.string().optional(),
  /**
   * Remotes: the first health check, when it finished in time. Anything but `healthy` means the service
   * was created but does not answer yet (`health_details` says why).
   */
  health_status: z.string().optional(),
  health_details: z.string().optional(),
  /**
   * The name given cannot be an address (all Chinese, spaces): it is the display name, and `name` — the endpoint's
   * name, /proxy/{name}/mcp — was derived from the package, command or URL host. The message says so.
   */
  endpoint_name_derived: z.boolean().optional(),
});
export type CustomServiceResult = z.infer<typeof CustomServiceResult>;

/**
 * `PUT /mcp_services/{id}`: either `{rpd_limit}` alone or the edit dialog's fields. `headers_json` and
 * `default_envs_json` are JSON object text (KEY=VALUE lines and objects are accepted too).
 */
export const UpdateServiceRequest = z.object({
  rpd_limit: z.union([z.number(), z.string().max(20)]).optional(),
  display_name: z.string().max(256).optional(),
  description: z.string().max(2000).optional(),
  command: z.string().max(4096).optional(),
  headers_json: KeyValueInput.optional(),
  default_envs_json: KeyValueInput.optional(),
  /** Remote services: how their OAuth connection is shared (issue 19). */
  oauth_mode: z.enum(['shared', 'per_user']).optional(),
  /** Who may use the service (issue 17); absent keeps it. */
  access: AccessList.optional(),
  /** stdio: one process shared by every client session, or one per client session (capped per user). */
  isolation: Isolation.optional(),
  /**
   * `openapi` (`command` is then the document's URL): a new uploaded document, the base URL override ('' for the
   * document's own server) and the filter. When any of these or the URL changes, the document is read and compiled
   * again and the service restarts on its new tools; a document refused is a 400 as on create, and nothing changes.
   */
  document: z
    .string()
    .max(4 * 1024 * 1024)
    .optional(),
  base_url: z.string().max(4096).optional(),
  operation_filter: OperationFilter.optional(),
});
export type UpdateServiceRequest = z.infer<typeof UpdateServiceRequest>;

/** Ids come as path text; the server answers 'Invalid Service ID format.' itself for a non-integer. */
export const ServiceIdParams = z.object({ id: z.string().max(32) });
export const UninstallRequest = z.object({ service_id: z.union([z.number(), z.string().max(32)]) });

export const EnvVarDeclaration = z.object({
  name: z.string(),
  description: z.string(),
  is_secret: z.boolean(),
  optional: z.boolean(),
  default_value: z.string(),
});
export type EnvVarDeclaration = z.infer<typeof EnvVarDeclaration>;

/** An OpenAPI service's settings as the edit dialog shows them (the document's URL is `command`). */
export const OpenApiSettings = z.object({
  /** The document was uploaded (its text is kept, not shown here), not fetched from a URL. */
  uploaded: z.boolean(),
  /** The document's `info.title` and `info.version`. */
  title: z.string(),
  version: z.string(),
  /** Where requests go: the override, else the document's first server. */
  base_url: z.string(),
  /** The override given ('' when the document's server is used). */
  base_url_override: z.string(),
  operation_filter: OperationFilter,
  /** Operations kept, as tools. */
  operations: z.number().int(),
});
export type OpenApiSettings = z.infer<typeof OpenApiSettings>;

/** One row of `GET /mcp_market/installed`: for non-admins, variable and header values are masked. */
export const InstalledService = z.object({
  id: z.number().int(),
  installed_service_id: z.number().int(),
  name: z.string(),
  display_name: z.string(),
  description: z.string(),
  version: z.string(),
  source: z.string(),
  package_name: z.string(),
  package_manager: z.string(),
  type: ServiceType,
  /** stdio: the executable; sse/streamableHttp: the URL. */
  command: z.string(),
  args_json: z.string(),
  /**
   * A pinned `npx`/`uvx` service (decision 0035): the command line as typed, shown and exported instead of
   * `command`/`args_json` (which run the installed package's executable); '' for any other service.
   */
  typed_command: z.string().default(''),
  default_envs_json: z.string(),
  headers_json: z.string(),
  env_vars: z.array(EnvVarDeclaration),
  /** On for the caller: on globally and not switched off by the caller's personal switch. */
  enabled: z.boolean(),
  /** The admins' global switch. */
  globally_enabled: z.boolean(),
  /** The caller switched the service off for themselves (POST /mcp_services/{id}/toggle as a non-admin). */
  switched_off_by_me: z.boolean(),
  /** Admins only (empty for others): usernames of the users who switched the service off for themselves. */
  switched_off_by: z.array(z.string()),
  isolation: Isolation,
  health_status: z.string(),
  health_details: z.string(),
  /** Unix milliseconds of the last health check, null before the first. */
  last_health_check: z.number().int().nullable(),
  tool_count: z.number().int(),
  /** `openapi` services only: the document, base URL and filter (URLs with their query masked for non-admins). */
  openapi: OpenApiSettings.optional(),
  /** Tools switched off by an admin (decision 0026): cards show "N of M tools enabled". */
  tools_disabled: z.number().int().default(0),
  rpd_limit: z.number().int(),
  user_daily_request_count: z.number().int(),
  /** -1 means unlimited. */
  remaining_requests: z.number().int(),
  /** Names of the variables the caller has personal values for. */
  my_env_names: z.array(z.string()),
  /** Remote services that need OAuth: the connection as the caller sees it (per user in per-user mode). */
  oauth_status: z.enum(['none', 'needs_authorization', 'connected']),
  oauth_mode: z.enum(['shared', 'per_user']).nullable(),
  created_at: z.number().int(),
  updated_at: z.number().int(),
});
export type InstalledService = z.infer<typeof InstalledService>;

export const HealthCheckResult = z.object({
  health_status: z.string(),
  health_details: z.string(),
  /** Unix milliseconds. */
  last_checked: z.number().int(),
  tool_count: z.number().int(),
});
export type HealthCheckResult = z.infer<typeof HealthCheckResult>;

/** `scope`: an admin's toggle is global; anyone else's is their personal switch. */
export const ToggleResult = z.object({ id: z.number().int(), enabled: z.boolean(), scope: z.enum(['global', 'personal']) });

/**
 * `PUT /mcp_services/{id}/my_env`: replaces the caller's own values. A value equal to the mask keeps the
 * stored one; an empty value (or leaving the name out) removes it.
 */
export const MyEnvRequest = z.object({ env: z.record(z.string().max(128), z.string().max(8192)) });
export type MyEnvRequest = z.infer<typeof MyEnvRequest>;
export const MyEnv = z.object({
  /** Variables the caller may set (those the service declares or has defaults for). */
  names: z.array(z.string()),
  /** The caller's own values, masked. */
  env: z.record(z.string(), z.string()),
});
export type MyEnv = z.infer<typeof MyEnv>;

export const installTaskStatuses = ['pending', 'installing', 'completed', 'failed'] as const;
export const InstallStatus = z.object({
  task_id: z.string(),
  kind: z.string(),
  service_id: z.number().int().nullable(),
  status: z.enum(installTaskStatuses),
  logs: z.array(z.string()),
  error_message: z.string(),
  /** Same as error_message: the console reads either. */
  error: z.string(),
  created_at: z.number().int(),
  finished_at: z.number().int().nullable(),
  /** A completed install or Update: the version now installed. */
  version: z.string().optional(),
  /** A completed Update that found the newest release already running: nothing was reinstalled or restarted. */
  already_latest: z.boolean().optional(),
  /** The outcome in the caller's language, when there is more to say than the status (already the latest). */
  message: z.string().optional(),
});
export type InstallStatus = z.infer<typeof InstallStatus>;

/** `POST /mcp_services/{id}/update_package`: follow the task like an install's. */
export const UpdatePackageResult = z.object({
  service_id: z.number().int(),
  name: z.string(),
  task_id: z.string(),
  /** The version installed before the Update. */
  from_version: z.string(),
});
export type UpdatePackageResult = z.infer<typeof UpdatePackageResult>;
/** Task ids are base64url tokens: anything else (a NUL byte PostgreSQL refuses, say) is a 400, not a lookup. */
export const TaskId = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9_-]+$/, 'not a task id');
export const TaskIdParams = z.object({ taskId: TaskId });
