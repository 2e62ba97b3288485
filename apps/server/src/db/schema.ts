import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';

/**
 * The whole schema. Times are unix epoch milliseconds in a BIGINT (numbers in JS: see db.ts),
 * booleans are 0/1 integers so SQLite and PostgreSQL read the same, and encrypted columns hold
 * `Secrets.encrypt` output.
 */
type Id = Generated<number>;
type Bool = number;

export interface UsersTable {
  id: Id;
  username: string;
  display_name: string;
  email: string;
  password_hash: string | null;
  role: number;
  status: number;
  /** Bumped to invalidate every access token of the user (password change, reset). */
  auth_version: ColumnType<number, number | undefined, number>;
  api_key_hash: string;
  api_key_enc: string;
  created_at: number;
  updated_at: number;
}

export interface ProviderIdentitiesTable {
  id: Id;
  user_id: number;
  provider: string;
  provider_user_id: string;
  email: string;
  created_at: number;
  /** The provider's refresh token, encrypted; '' unless the provider deprovisions at refresh (decision 0063). */
  refresh_token_enc: Generated<string>;
  /** The provider's access token, encrypted, and when it expires (0: unknown); the same. */
  access_token_enc: Generated<string>;
  access_expires_at: Generated<number>;
  /** When a refresh last claimed the provider check (decision 0063). */
  checked_at: Generated<number>;
}

/** A provider sign-in held for an admin to link (decision 0063). */
export interface HeldIdentitiesTable {
  id: Id;
  provider: string;
  provider_user_id: string;
  email: Generated<string>;
  display_name: Generated<string>;
  reason: string;
  user_id: number | null;
  attempts: Generated<number>;
  created_at: number;
  last_seen_at: number;
}

export interface RefreshTokensTable {
  id: Id;
  user_id: number;
  token_hash: string;
  expires_at: number;
  revoked_at: number | null;
  created_at: number;
}

export interface OptionsTable {
  key: string;
  value: string;
  updated_at: number;
}

export interface ServicesTable {
  id: Id;
  name: string;
  display_name: string;
  description: string;
  type: string;
  source: string;
  package_name: string;
  package_manager: string;
  version: string;
  /** stdio: the executable; sse/streamableHttp: the URL. */
  command: string;
  args_json: string;
  /** Encrypted JSON object of default variable values. */
  env_enc: string;
  /** Encrypted JSON object of upstream request headers. */
  headers_enc: string;
  /** JSON array of declared variables: name, description, is_secret, optional, default_value. */
  env_schema_json: string;
  install_dir: string;
  /**
   * A pinned `npx`/`uvx` service: the command line as the admin typed it (display, export); '' otherwise.
   * What runs is `command` and `args_json`, the installed package's executable.
   */
  typed_command: ColumnType<string, string | undefined, string>;
  /** An OpenAPI service: its compiled document as JSON (gateway/openapi/plan.ts); '' otherwise. */
  openapi_json: ColumnType<string, string | undefined, string>;
  enabled: Bool;
  /** 'shared' (one process for all) or 'session' (one process per client session). */
  isolation: string;
  rpd_limit: number;
  health_status: string;
  health_details: string;
  last_health_check: number | null;
  tool_count: number;
  created_at: number;
  updated_at: number;
}

export interface ServiceUserEnvsTable {
  service_id: number;
  user_id: number;
  env_enc: string;
  updated_at: number;
}

/** A user's personal switch: the service is off for that user alone (migration 0004). */
export interface ServiceUserSwitchesTable {
  service_id: number;
  user_id: number;
  created_at: number;
}

export interface InstallTasksTable {
  id: string;
  kind: string;
  service_id: number | null;
  status: string;
  error_message: string;
  payload_json: string;
  result_json: string;
  created_by: number | null;
  created_at: number;
  updated_at: number;
  finished_at: number | null;
}

export interface InstallTaskLogsTable {
  id: Id;
  task_id: string;
  seq: number;
  line: string;
  created_at: number;
}

export interface RequestRecordsTable {
  id: Id;
  created_at: number;
  /** YYYY-MM-DD in the server time zone preference. */
  day: string;
  service_id: number;
  user_id: number;
  method: string;
  target: string;
  latency_ms: number;
  outcome: string;
  bytes_in: number;
  bytes_out: number;
  error_message: string;
}

/** A counter batch the meter wrote, by id, so that a write whose commit is in doubt is not added twice (migration 0008). */
/** Tool vectors of discovery search (migration 0010, decision 0046). */
export interface ToolEmbeddingsTable {
  space: string;
  tool_hash: string;
  dimensions: number;
  /** Float32 bytes, base64. */
  vector: string;
  created_at: number;
}

export interface MeterBatchesTable {
  id: string;
  written_at: number;
}

/** One meter run's count of a (day, service, user): raised, never added to (decision 0043). */
export interface MeterContributionsTable {
  day: string;
  service_id: number;
  user_id: number;
  run: string;
  count: number;
}

export interface DailyCountersTable {
  day: string;
  service_id: number;
  user_id: number;
  request_count: number;
  error_count: number;
  total_latency_ms: number;
}

export interface ServiceLogsTable {
  id: Id;
  created_at: number;
  service_id: number | null;
  service_name: string;
  phase: string;
  level: string;
  message: string;
}

/** One administrative change, sign-in or refused sign-in (migration 0012, modules/audit). */
export interface AuditEntriesTable {
  id: Id;
  created_at: number;
  /** `user`, `cli` or `anonymous` (a refused sign-in names the account it tried). */
  actor_type: string;
  actor_id: number | null;
  actor_name: string;
  /** The client address as the server saw it (after TRUST_PROXY); empty for the CLI. */
  address: string;
  action: string;
  object_type: string;
  object_id: string;
  /** `ok`, `failed` (an administrator's request answered with an error) or `refused` (a sign-in). */
  outcome: string;
  /** `METHOD /api/path` of the request, or the CLI command. */
  via: string;
  /** JSON: the request's fields or the command's arguments, secrets masked. */
  changes: string;
}

export interface RevokedSessionsTable {
  session_hash: string;
  expires_at: number;
}

/** A sign-in with a provider between the redirect and the return (migration 0002). */
export interface OAuthStatesTable {
  state_hash: string;
  provider: string;
  code_verifier_enc: string;
  browser_hash: string;
  redirect_uri: string;
  bind_user_id: number | null;
  created_at: number;
  expires_at: number;
}

/** Toolport as OAuth client of a remote service (migration 0007). */
export interface UpstreamOAuthServicesTable {
  service_id: number;
  mode: Generated<string>;
  resource: Generated<string>;
  issuer: Generated<string>;
  metadata_json: Generated<string>;
  scope: Generated<string>;
  registration: Generated<string>;
  client_id: Generated<string>;
  client_secret_enc: string | null;
  redirect_uri: Generated<string>;
  updated_at: number;
}

/** One connection to a remote service's provider: owner 0 is the shared one (migration 0007). */
export interface UpstreamOAuthTokensTable {
  service_id: number;
  owner_id: number;
  user_id: number | null;
  access_token_enc: string;
  refresh_token_enc: string | null;
  expires_at: number | null;
  subject: Generated<string>;
  connected_by: number;
  version: Generated<number>;
  refreshing_until: Generated<number>;
  updated_at: number;
  /** The connection's last health check through its own link (migration 0015); null until it is first checked. */
  check_status: Generated<string | null>;
  check_details: Generated<string | null>;
  tool_count: Generated<number | null>;
  checked_at: Generated<number | null>;
}

/** An authorization started from the console, until its callback (migration 0007). */
export interface UpstreamOAuthStatesTable {
  state_hash: string;
  service_id: number;
  user_id: number;
  owner_id: number;
  code_verifier_enc: string;
  redirect_uri: string;
  created_at: number;
  expires_at: number;
}

/** The figures of a rollup row (migration 0003): admitted requests, errors, refusals, latency, bytes. */
export interface RollupFigures {
  /** Admitted requests (ok or error). */
  request_count: number;
  error_count: number;
  /** Refused over the daily limit; not part of request_count. */
  limited_count: number;
  /** Over admitted requests only. */
  latency_sum_ms: number;
  latency_max_ms: number;
  bytes_in: number;
  bytes_out: number;
}

/** Daily rollup of request_records per (day, service, user, method, target) (migration 0003). */
export interface RequestRollupsTable extends RollupFigures {
  day: string;
  service_id: number;
  user_id: number;
  method: string;
  target: string;
}

/** Daily rollup of request_records per (day, service) (migration 0003). */
export interface ServiceDayRollupsTable extends RollupFigures {
  day: string;
  service_id: number;
}

/** OAuth authorization server of the MCP endpoints (migration 0006, modules/authorization-server). */
export interface OAuthServerClientsTable {
  client_id: string;
  kind: string;
  client_name: string;
  client_uri: Generated<string>;
  logo_uri: Generated<string>;
  redirect_uris: string;
  created_at: number;
  expires_at: Generated<number>;
}

export interface OAuthServerRequestsTable {
  id_hash: string;
  client_id: string;
  redirect_uri: string;
  state: string;
  code_challenge: string;
  resource: string;
  scope: string;
  expires_at: number;
}

export interface OAuthServerGrantsTable {
  id: Generated<number>;
  user_id: number;
  client_id: string;
  client_name: string;
  resource: string;
  scope: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}

export interface OAuthServerCodesTable {
  code_hash: string;
  grant_id: number;
  redirect_uri: string;
  code_challenge: string;
  expires_at: number;
  used_at: number | null;
}

export interface OAuthServerRefreshTokensTable {
  token_hash: string;
  grant_id: number;
  expires_at: number;
  used_at: number | null;
}

export interface Database {
  users: UsersTable;
  provider_identities: ProviderIdentitiesTable;
  held_identities: HeldIdentitiesTable;
  refresh_tokens: RefreshTokensTable;
  options: OptionsTable;
  services: ServicesTable;
  service_user_envs: ServiceUserEnvsTable;
  service_user_switches: ServiceUserSwitchesTable;
  install_tasks: InstallTasksTable;
  install_task_logs: InstallTaskLogsTable;
  request_records: RequestRecordsTable;
  daily_counters: DailyCountersTable;
  meter_batches: MeterBatchesTable;
  tool_embeddings: ToolEmbeddingsTable;
  meter_contributions: MeterContributionsTable;
  service_logs: ServiceLogsTable;
  revoked_sessions: RevokedSessionsTable;
  oauth_states: OAuthStatesTable;
  request_rollups: RequestRollupsTable;
  service_day_rollups: ServiceDayRollupsTable;
  upstream_oauth_services: UpstreamOAuthServicesTable;
  upstream_oauth_tokens: UpstreamOAuthTokensTable;
  upstream_oauth_states: UpstreamOAuthStatesTable;
  oauth_server_clients: OAuthServerClientsTable;
  oauth_server_requests: OAuthServerRequestsTable;
  oauth_server_grants: OAuthServerGrantsTable;
  oauth_server_codes: OAuthServerCodesTable;
  oauth_server_refresh_tokens: OAuthServerRefreshTokensTable;
  tool_overrides: ToolOverridesTable;
  access_lists: AccessListsTable;
  access_users: AccessUsersTable;
  groups: GroupsTable;
  group_members: GroupMembersTable;
  audit_entries: AuditEntriesTable;
}

/** A tool's switch, alias and description on one service, by the tool's original name (migration 0005). */
export interface ToolOverridesTable {
  /** By name, not id: a re-installed service (a new id) finds its overrides again. */
  service_name: string;
  original_name: string;
  enabled: Bool;
  alias: string | null;
  description: string | null;
  updated_at: number;
}

/** 'service' or 'group': who an access list belongs to. No row: open to every signed-in user. */
export interface AccessListsTable {
  subject: string;
  subject_id: number;
  restricted: Bool;
}

export interface AccessUsersTable {
  subject: string;
  subject_id: number;
  user_id: number;
}

export interface GroupsTable {
  id: Id;
  name: string;
  display_name: string;
  description: string;
  /** 'all' or 'discovery'. */
  mode: string;
  separator: string;
  created_at: number;
  updated_at: number;
}

export interface GroupMembersTable {
  group_id: number;
  service_id: number;
  position: number;
  /** JSON array of original tool names; '' for the whole service. */
  tools_json: string;
}

export type ToolOverrideRow = Selectable<ToolOverridesTable>;
export type GroupRow = Selectable<GroupsTable>;
export type GroupMemberRow = Selectable<GroupMembersTable>;

export type UserRow = Selectable<UsersTable>;
export type NewUser = Insertable<UsersTable>;
export type UserUpdate = Updateable<UsersTable>;
export type ServiceRow = Selectable<ServicesTable>;
export type NewService = Insertable<ServicesTable>;
export type ServiceUpdate = Updateable<ServicesTable>;
