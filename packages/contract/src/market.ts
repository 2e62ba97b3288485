import { z } from 'zod';
import { GroupMode } from './groups.js';
import { EnvVarDeclaration, Isolation, OperationFilter, TaskId } from './services.js';

/** Where a marketplace package comes from; also the `package_manager` of a result. */
export const marketSources = ['npm', 'pypi', 'mcp_registry'] as const;
export const MarketSourceName = z.enum(marketSources);
export type MarketSourceName = z.infer<typeof MarketSourceName>;

/** How services record where they came from, mapped onto marketplace sources (`uv`/`uvx` installs are PyPI packages). */
export const MARKET_SOURCE_OF_MANAGER: Readonly<Record<string, MarketSourceName>> = {
  npm: 'npm',
  npx: 'npm',
  pypi: 'pypi',
  pip: 'pypi',
  uv: 'pypi',
  uvx: 'pypi',
  mcp_registry: 'mcp_registry',
};

/** Sample values that mean "not filled in yet" (docs/console.md §5), compared case-insensitively. */
export const PLACEHOLDER_MARKERS: readonly string[] = [
  'your-',
  'enter-',
  'api-key-here',
  'api-token-here',
  'token-here',
  'key-here',
  'secret-here',
  'paste-',
  'insert-',
  'add-',
];

/** Results per source and search. */
export const MARKET_SEARCH_LIMIT = 20;

export const MarketSearchQuery = z.object({
  query: z.string().trim().max(200).default(''),
  /** One source or a comma list; all sources when absent. */
  sources: z.string().trim().max(100).optional(),
});
export type MarketSearchQuery = z.infer<typeof MarketSearchQuery>;

/**
 * A source that failed while others answered (issue 15, item 3): the search's envelope carries these beside
 * its `data`, so that a partial result is never taken for the whole one. `message` is localised and names the
 * source, the reason and the setting that points at it.
 */
export const MarketSearchWarning = z.object({
  source: MarketSourceName,
  message: z.string(),
});
export type MarketSearchWarning = z.infer<typeof MarketSearchWarning>;

export const PackageDetailsQuery = z.object({
  package_name: z.string().trim().min(1).max(214),
  package_manager: MarketSourceName,
});
export type PackageDetailsQuery = z.infer<typeof PackageDetailsQuery>;

/** One search result (docs/console.md §3). `installed_service_id` is null when not installed. */
export const MarketPackage = z.object({
  name: z.string(),
  version: z.string(),
  description: z.string(),
  package_manager: MarketSourceName,
  /** Weekly downloads; null when the source did not provide them (unknown is not 0). */
  downloads: z.number().int().min(0).nullable(),
  /** Stars of the package's GitHub repository; null when unknown (no repository, lookup failed or paused). */
  github_stars: z.number().int().min(0).nullable(),
  author: z.string(),
  homepage: z.string(),
  repository_url: z.string(),
  /** ISO 8601 time of the latest release, or '' when unknown. */
  last_publish: z.string(),
  is_installed: z.boolean(),
  installed_service_id: z.number().int().nullable(),
});
export type MarketPackage = z.infer<typeof MarketPackage>;

/** One entry of an `mcpServers` document: a command to run, or a remote URL. */
export const McpServerEntry = z.object({
  command: z.string().optional(),
  args: z.array(z.string()).optional(),
  env: z.record(z.string(), z.string()).optional(),
  /** Exports write `http` (what Claude Code and VS Code read); imports also accept `streamableHttp`. */
  type: z.enum(['stdio', 'sse', 'http', 'streamableHttp', 'openapi']).optional(),
  url: z.string().optional(),
  headers: z.record(z.string(), z.string()).optional(),
  /** Toolport's own `openapi` type (docs/openapi.md): the uploaded document, when it has no `url`. */
  document: z.string().optional(),
  /** `openapi`: the base URL override, when one was given. */
  base_url: z.string().optional(),
  /** `openapi`: the operation filter, when one was given. */
  operation_filter: OperationFilter.optional(),
  /** Toolport's own key (other clients ignore it): `session` gives each client session a process of its own. */
  isolation: Isolation.optional(),
});
export type McpServerEntry = z.infer<typeof McpServerEntry>;

/**
 * Who may use a service or group, portably: users are named by username (ids differ between
 * instances). On import, a username unknown there is left out with a warning; the restriction stays.
 */
export const PortableAccess = z.object({ restricted: z.boolean(), users: z.array(z.string().max(128)).max(10_000).default([]) });
export type PortableAccess = z.infer<typeof PortableAccess>;

/** A tool override by the tool's original name: only what is overridden is written. */
export const PortableToolOverride = z.object({
  enabled: z.boolean().optional(),
  alias: z.string().max(128).optional(),
  description: z.string().max(10_000).optional(),
});
export type PortableToolOverride = z.infer<typeof PortableToolOverride>;

/** A service's Toolport settings that no MCP client reads: its tool overrides and its access. */
export const PortableServiceSettings = z.object({
  tools: z.record(z.string(), PortableToolOverride).optional(),
  access: PortableAccess.optional(),
});
export type PortableServiceSettings = z.infer<typeof PortableServiceSettings>;

/** A group with its members named by service name (the `mcpServers` keys of the same document). */
export const PortableGroup = z.object({
  name: z.string().max(64),
  display_name: z.string().max(128).default(''),
  description: z.string().max(2000).default(''),
  mode: GroupMode.default('all'),
  separator: z.string().max(8).default('__'),
  members: z.array(z.object({ service: z.string().max(128), tools: z.array(z.string().max(255)).max(1000).optional() })).max(200),
  access: PortableAccess.optional(),
});
export type PortableGroup = z.infer<typeof PortableGroup>;

/**
 * Toolport's own block beside `mcpServers` (export and batch import, issue 17): MCP clients ignore a
 * top-level key they do not know, so the `mcpServers` entries stay exactly what every client reads.
 */
export const ToolportSettings = z.object({
  version: z.literal(1),
  /** By service name (a key of `mcpServers`). */
  services: z.record(z.string(), PortableServiceSettings).optional(),
  groups: z.array(PortableGroup).max(200).optional(),
});
export type ToolportSettings = z.infer<typeof ToolportSettings>;

export const McpServersDocument = z.object({ mcpServers: z.record(z.string(), McpServerEntry), toolport: ToolportSettings.optional() });
export type McpServersDocument = z.infer<typeof McpServersDocument>;

/** What an export writes in place of a variable or header value, or a URL credential, unless secrets are asked for. */
export const MASKED_SECRET = '********';

/** `GET /mcp_market/export?include_secrets=true`: values in clear; otherwise every value is masked. */
export const MarketExportQuery = z.object({ include_secrets: z.enum(['1', '0', 'true', 'false']).optional() });
export type MarketExportQuery = z.infer<typeof MarketExportQuery>;

/** Package details (docs/console.md §3): the result under `details`, and what the detail view reads beside it. */
export const PackageDetails = z.object({
  details: MarketPackage,
  /** Null when unknown, as in MarketPackage. */
  downloads: z.number().int().min(0).nullable(),
  stars: z.number().int().min(0).nullable(),
  author: z.string(),
  repository_url: z.string(),
  last_publish: z.string(),
  is_installed: z.boolean(),
  installed_service_id: z.number().int().nullable(),
  /** The variables the package reads (the same shape a service stores them in). */
  env_vars: z.array(EnvVarDeclaration),
  readme: z.string(),
  mcp_config: McpServersDocument,
});
export type PackageDetails = z.infer<typeof PackageDetails>;

/** Package managers an install names: `uv` is a PyPI package run the way `uvx` would. */
export const installPackageManagers = ['npm', 'pypi', 'uv', 'mcp_registry'] as const;
export const InstallPackageManager = z.enum(installPackageManagers);
export type InstallPackageManager = z.infer<typeof InstallPackageManager>;

/** `POST /mcp_market/install_or_add_service` (docs/console.md §7). */
export const InstallRequest = z.object({
  source_type: z.enum(['marketplace', 'custom']).default('marketplace'),
  package_name: z.string().trim().min(1).max(214),
  package_manager: InstallPackageManager,
  /** A version to pin; '' or 'latest' means the newest release. */
  version: z.string().trim().max(64).optional().default(''),
  user_provided_env_vars: z.record(z.string().max(128), z.string().max(8192)).optional().default({}),
  display_name: z.string().max(256).optional().default(''),
  service_description: z.string().max(2000).optional().default(''),
  /** Arguments appended after the package's own (custom installs). */
  custom_args: z.array(z.string().max(4096)).max(64).optional().default([]),
});
export type InstallRequest = z.infer<typeof InstallRequest>;

export const InstallResult = z.object({
  mcp_service_id: z.number().int(),
  /** Absent when an installed service only gained the caller's values. */
  task_id: z.string().optional(),
  status: z.enum(['pending', 'installing', 'already_installed_instance_added']),
  service_name: z.string(),
});
export type InstallResult = z.infer<typeof InstallResult>;

/** `POST /mcp_market/batch-import` answers with the task whose progress the event stream shows. */
export const BatchImportResult = z.object({ task_id: z.string(), total: z.number().int() });
export type BatchImportResult = z.infer<typeof BatchImportResult>;

export const batchItemStatuses = ['success', 'skipped', 'failed'] as const;
/** One event of `GET /mcp_market/batch-import/progress/{task_id}`: an item, then `done` with the counts. */
export const BatchProgressEvent = z.union([
  z.object({
    name: z.string(),
    status: z.enum(batchItemStatuses),
    message: z.string(),
    /** `group` for a group of the document's `toolport` block; absent for a service. */
    kind: z.enum(['service', 'group']).optional(),
    /** What was imported only in part (unknown users left out of an access list, a member not found…). */
    warnings: z.array(z.string()).optional(),
    /** A success with a caveat: created, but it does not answer yet (issue 15). */
    warning: z.boolean().optional(),
  }),
  z.object({
    status: z.literal('done'),
    summary: z.object({ success: z.number().int(), skipped: z.number().int(), failed: z.number().int() }),
  }),
]);
export type BatchProgressEvent = z.infer<typeof BatchProgressEvent>;
export const BatchProgressParams = z.object({ task_id: TaskId });
export const BatchProgressQuery = z.object({ token: z.string().max(4096).optional() });

/** `POST /mcp_market/batch-import`: the console sends the text as typed, a JSON object or the same as a string. */
export const BatchImportRequest = z.union([z.string().max(4 * 1024 * 1024), z.record(z.string(), z.unknown())]);
export type BatchImportRequest = z.infer<typeof BatchImportRequest>;
