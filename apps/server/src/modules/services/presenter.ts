import type { EnvVarDeclaration, InstalledService, OpenApiSettings, ServiceType } from '@toolport/contract';
import type { ServiceRow } from '../../db/schema.js';
import type { OpenApiPlan } from '../../gateway/openapi/plan.js';
import { readStoredText, type Translator } from '../../i18n/localised-error.js';
import type { Secrets } from '../../infra/secrets.js';
import { SECRET_MASK } from '../options/index.js';
import { declaredVariables } from './catalog.js';

export const maskValues = (values: Record<string, string>): Record<string, string> =>
  Object.fromEntries(Object.keys(values).map((k) => [k, SECRET_MASK]));

/** Query values of a URL can carry credentials (`?api_key=`): non-admins see the names only. */
function maskUrlQuery(url: string): string {
  try {
    const u = new URL(url);
    if (!u.search && !u.username && !u.password) return url;
    for (const key of [...u.searchParams.keys()]) u.searchParams.set(key, SECRET_MASK);
    u.username = u.username ? SECRET_MASK : '';
    u.password = u.password ? SECRET_MASK : '';
    return u.toString();
  } catch {
    return url;
  }
}

function envVarsOf(row: ServiceRow): EnvVarDeclaration[] {
  return declaredVariables(row).map((v) => {
    const raw = v as Partial<Record<keyof EnvVarDeclaration, unknown>>;
    return {
      name: v.name,
      description: typeof raw.description === 'string' ? raw.description : '',
      is_secret: raw.is_secret !== false,
      optional: raw.optional === true,
      default_value: typeof raw.default_value === 'string' ? raw.default_value : '',
    };
  });
}

/** An OpenAPI service's settings from its stored plan; undefined for any other service (or no plan). */
function openApiSettingsOf(row: ServiceRow, admin: boolean): OpenApiSettings | undefined {
  if (row.type !== 'openapi' || !row.openapi_json) return undefined;
  try {
    const plan = JSON.parse(row.openapi_json) as Partial<OpenApiPlan>;
    const shown = (url: string) => (admin ? url : maskUrlQuery(url));
    return {
      uploaded: !plan.sourceUrl,
      title: plan.title ?? '',
      version: plan.version ?? '',
      base_url: shown(plan.baseUrl ?? ''),
      base_url_override: shown(plan.baseUrlOverride ?? ''),
      operation_filter: plan.filter ?? {},
      operations: plan.operations?.length ?? 0,
    };
  } catch {
    return undefined;
  }
}

export interface PresentOptions {
  /** The caller's language: a reason stored in words of ours (a failed install's) is said in it. */
  t: Translator;
  /** How many of its tools an admin switched off. */
  toolsDisabled?: number;
  /** Admins see variable and header values; everyone else sees the names with masked values. */
  admin: boolean;
  todayCount: number;
  myEnvNames: string[];
  /** The OAuth connection as this caller sees it (issue 19); none when the service uses none. */
  oauth?: ServiceOAuthView;
  /** The caller switched the service off for themselves. */
  switchedOffByMe: boolean;
  /** Admins only: who switched it off for themselves. */
  switchedOffBy: string[];
}

export interface ServiceOAuthView {
  mode: 'shared' | 'per_user' | null;
  status: 'none' | 'needs_authorization' | 'connected';
  /**
   * Per-user mode, connected: the last check of the caller's own connection, through their own link (issue 29).
   * The list shows it instead of the service's row, whose check has no user and cannot list a per-user service's tools.
   */
  own?: { status: string; details: string; toolCount: number | null; checkedAt: number };
}

/** An installed service as `GET /mcp_market/installed` shows it to one caller. */
export function presentService(row: ServiceRow, secrets: Secrets, opts: PresentOptions): InstalledService {
  const env = secrets.decryptJson<Record<string, string>>(row.env_enc, {});
  const headers = secrets.decryptJson<Record<string, string>>(row.headers_enc, {});
  const remote = row.type !== 'stdio';
  const remaining = row.rpd_limit > 0 ? Math.max(0, row.rpd_limit - opts.todayCount) : -1;
  const health = healthShown(row, opts.oauth?.own);
  return {
    id: row.id,
    installed_service_id: row.id,
    name: row.name,
    display_name: row.display_name || row.name,
    description: row.description,
    version: row.version,
    source: row.source,
    package_name: row.package_name,
    package_manager: row.package_manager,
    type: row.type as ServiceType,
    command: remote && !opts.admin ? maskUrlQuery(row.command) : row.command,
    args_json: row.args_json,
    typed_command: row.typed_command,
    default_envs_json: JSON.stringify(opts.admin ? env : maskValues(env)),
    headers_json: JSON.stringify(opts.admin ? headers : maskValues(headers)),
    env_vars: envVarsOf(row).map((v) => (opts.admin || !v.is_secret || !v.default_value ? v : { ...v, default_value: SECRET_MASK })),
    // What the proxy does for this caller: off globally, or off by their own switch.
    enabled: row.enabled === 1 && !opts.switchedOffByMe,
    globally_enabled: row.enabled === 1,
    switched_off_by_me: opts.switchedOffByMe,
    switched_off_by: opts.admin ? opts.switchedOffBy : [],
    isolation: row.isolation === 'session' ? 'session' : 'shared',
    health_status: health.status,
    health_details: readStoredText(health.details, opts.t),
    last_health_check: health.checkedAt,
    tool_count: health.toolCount,
    ...(row.type === 'openapi' ? { openapi: openApiSettingsOf(row, opts.admin) } : {}),
    tools_disabled: opts.toolsDisabled ?? 0,
    rpd_limit: row.rpd_limit,
    user_daily_request_count: opts.todayCount,
    remaining_requests: remaining,
    my_env_names: opts.myEnvNames,
    oauth_status: opts.oauth?.status ?? 'none',
    oauth_mode: opts.oauth?.mode ?? null,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/**
 * The health a caller sees: the service's row, or, for a user connected to a per-user OAuth service, the last check
 * of their own connection with their tool count. A later check of the service that found it down (unhealthy,
 * stopped) still shows over an older check of theirs: nobody is told a service is healthy after it was found down.
 */
function healthShown(row: ServiceRow, own: ServiceOAuthView['own']) {
  const service = { status: row.health_status, details: row.health_details, checkedAt: row.last_health_check, toolCount: row.tool_count };
  if (!own) return service;
  const toolCount = own.toolCount ?? row.tool_count;
  const down = row.health_status === 'unhealthy' || row.health_status === 'stopped';
  const downSince = down && (row.last_health_check ?? 0) > own.checkedAt;
  return downSince ? { ...service, toolCount } : { status: own.status, details: own.details, checkedAt: own.checkedAt, toolCount };
}
