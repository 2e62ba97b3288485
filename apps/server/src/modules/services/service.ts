import type { CustomServiceRequest, InstalledService, UpdateServiceRequest } from '@toolport/contract';
import { isAdminRole } from '@toolport/contract';
import type { ServiceRow, ServiceUpdate } from '../../db/schema.js';
import type { OpenApiPlan } from '../../gateway/openapi/plan.js';
import { badRequest, conflict, forbidden, inField, notFound } from '../../http/errors.js';
import type { Principal } from '../../http/principals.js';
import type { Translator } from '../../i18n/localised-error.js';
import { dayIn } from '../../infra/day.js';
import type { ConfigEvents } from '../../infra/events.js';
import type { RemoteAddresses } from '../../infra/outbound.js';
import type { Secrets } from '../../infra/secrets.js';
import { SECRET_MASK } from '../options/index.js';
import { slugFrom } from './command-line.js';
import {
  type CustomDraft,
  checkedDisplayName,
  checkedEnv,
  checkedHeaders,
  checkedRemoteAddress,
  checkedUrl,
  draftCustomService,
} from './custom.js';
import type { PersonalConnections } from './health.js';
import { compileOpenApi, recompiledOpenApi } from './openapi.js';
import { presentService, type ServiceOAuthView } from './presenter.js';
import type { ServicesRepo } from './repo.js';

const MAX_ID = 2_147_483_647;
const MAX_LIMIT = 2_147_483_647;

/** Ids arrive as path or body text: anything but a positive integer is 'Invalid Service ID format.'. */
export function serviceIdOf(raw: string | number): number {
  const text = String(raw).trim();
  const id = /^\d{1,10}$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isInteger(id) || id < 1 || id > MAX_ID) throw badRequest('service.invalid_id', undefined, 'invalid_service_id');
  return id;
}

const isUniqueViolation = (err: unknown): boolean => {
  const e = err as { code?: string; message?: string };
  return e?.code === '23505' || /UNIQUE constraint failed/i.test(e?.message ?? '');
};

/** A submitted value equal to the mask means "unchanged": the console may send back what it was shown. */
function keepMasked(next: Record<string, string>, previous: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(next)) {
    const kept = v === SECRET_MASK ? previous[k] : v;
    if (kept !== undefined) out[k] = kept;
  }
  return out;
}

const sameValues = (a: Record<string, string>, b: Record<string, string>): boolean =>
  JSON.stringify(Object.entries(a).sort()) === JSON.stringify(Object.entries(b).sort());

/** What the rules of the services API work with. */
export interface ServicesServiceDeps {
  repo: ServicesRepo;
  secrets: Secrets;
  events: ConfigEvents;
  /** The time zone today's usage is counted in. */
  options: { get(key: 'TimeZone'): string };
  /** The address rule of remote URLs (infra/outbound.ts `remoteAddresses`): service URLs, OpenAPI documents and base URLs. */
  remote: RemoteAddresses;
  /** OAuth connections of remote services (modules/upstream-authorization), plugged in by build/server.ts. */
  oauth?: ServiceOAuthPort;
  /** Access lists (issue 17): without it every service is open to every signed-in user. */
  access?: ServiceAccess;
  /** Folds this replica's metering journal first, so today's counts read are those enforced (decision 0043). */
  settleCounts?: () => Promise<void>;
}

/** Who may use a service, as the exposure module keeps it. */
export interface ServiceAccess {
  mayUse(user: { id: number; role: number }, subject: 'service', id: number): Promise<boolean>;
  filterFor(user: { id: number; role: number }, subject: 'service'): Promise<(id: number) => boolean>;
  /** Refuses unknown users (400) before anything is written. */
  checkUsers(userIds: number[]): Promise<void>;
  set(subject: 'service', id: number, access: { restricted: boolean; user_ids: number[] }): Promise<void>;
  /** Tools switched off, per service name (tool overrides live with the access lists, decision 0026). */
  disabledTools(): Promise<Map<string, number>>;
}

/**
 * What the services API asks of the OAuth connections: the view per caller, the mode an admin sets, and a user's own
 * connection that their health check goes through.
 */
export interface ServiceOAuthPort extends PersonalConnections {
  viewsFor(caller: Principal): Promise<Map<number, ServiceOAuthView>>;
  setMode(serviceId: number, mode: 'shared' | 'per_user'): Promise<void>;
}

/**
 * Rules of the installed-services API: the list, custom-service creation, edits and toggles.
 * Configuration changes that the data plane must act on are announced as ConfigEvents; nothing here
 * touches processes or files directly.
 */
export class ServicesService {
  constructor(private readonly deps: ServicesServiceDeps) {}

  /** A remote URL the address preference allows, else the localised 400 saying why (the installs ask it too). */
  checkedRemoteAddress(url: string): Promise<void> {
    return checkedRemoteAddress(url, this.deps.remote);
  }

  private today(): string {
    return dayIn(this.deps.options.get('TimeZone'));
  }

  async mustGet(id: number): Promise<ServiceRow> {
    const row = await this.deps.repo.byId(id);
    if (!row) throw notFound('service.not_found');
    return row;
  }

  /**
   * The service, when the caller may use it: a user's doors to one service (health check, personal switch and
   * values) ask the access lists as /proxy does (decision 0040); refused by id, without the service's name.
   */
  async mustUse(id: number, caller: Principal): Promise<ServiceRow> {
    const row = await this.mustGet(id);
    if (this.deps.access && !(await this.deps.access.mayUse(caller, 'service', id))) throw forbidden('access.no_access_service_id', { id });
    return row;
  }

  /** `t`: the caller's language, which a stored reason of ours (a failed install's) is said in. */
  async installed(caller: Principal, t: Translator): Promise<InstalledService[]> {
    const admin = isAdminRole(caller.role);
    await this.deps.settleCounts?.();
    const [all, counts, myEnvs, may, oauth, switchedOff, offByUsers] = await Promise.all([
      this.deps.repo.all(),
      this.deps.repo.userCountsOn(this.today(), caller.id),
      this.deps.repo.userEnvsOf(caller.id),
      this.deps.access ? this.deps.access.filterFor(caller, 'service') : () => true,
      this.deps.oauth?.viewsFor(caller),
      this.deps.repo.switchedOffBy(caller.id),
      admin ? this.deps.repo.switchedOffUsers() : Promise.resolve(new Map<number, string[]>()),
    ]);
    const disabled = (await this.deps.access?.disabledTools()) ?? new Map<string, number>();
    // A user without access to a service does not see it (issue 17).
    const rows = all.filter((row) => may(row.id));
    return rows.map((row) => {
      const mine = myEnvs.get(row.id);
      const myEnvNames = mine ? Object.keys(this.deps.secrets.decryptJson<Record<string, string>>(mine, {})) : [];
      const view = oauth?.get(row.id);
      return presentService(row, this.deps.secrets, {
        t,
        admin,
        todayCount: counts.get(row.id) ?? 0,
        myEnvNames,
        toolsDisabled: disabled.get(row.name) ?? 0,
        ...(view ? { oauth: view } : {}),
        switchedOffByMe: switchedOff.has(row.id),
        switchedOffBy: offByUsers.get(row.id) ?? [],
      });
    });
  }

  /**
   * Stores a custom service as the request describes it, once its rules are met, and announces it.
   * Whether it works is for its first health check to tell (the install lifecycle's part).
   */
  async addCustom(req: CustomServiceRequest): Promise<ServiceRow> {
    const { draft, name } = await this.prepareCustom(req);
    const row = await this.insert(name, draft);
    this.deps.events.emit({ type: 'service.changed', serviceId: row.id });
    return row;
  }

  /**
   * The request checked (its rules, the address preference, a free name) without storing anything: a
   * custom `npx`/`uvx` service is stored by the install lifecycle, which pins its package (decision 0035).
   */
  async prepareCustom(req: CustomServiceRequest): Promise<{ draft: CustomDraft; name: string }> {
    const draft = draftCustomService(req);
    if (draft.type === 'openapi') {
      draft.openapi = await compileOpenApi(req, this.deps.remote);
      draft.command = draft.openapi.sourceUrl;
      draft.nameSeed = slugFrom(draft.openapi.title || new URL(draft.openapi.baseUrl).hostname);
    } else if (draft.type !== 'stdio')
      await inField(req.url ? 'url' : 'command', () => checkedRemoteAddress(draft.command, this.deps.remote));
    return { draft, name: await this.freeName(draft) };
  }
  /**
   * An OpenAPI preview without a name (the console's, from its create and edit dialogs): the request's other checks
   * and the document compiled, no name asked for or reserved, nothing stored.
   */
  async previewOpenApi(req: CustomServiceRequest): Promise<OpenApiPlan> {
    if (draftCustomService({ ...req, name: 'preview' }).type !== 'openapi') throw badRequest('openapi_service.preview_openapi_only');
    return compileOpenApi(req, this.deps.remote);
  }

  /** The name asked for (409 when taken), or one derived from the package or host, made unique. */
  private async freeName(draft: CustomDraft): Promise<string> {
    if (draft.name) {
      if (await this.deps.repo.byName(draft.name)) throw conflict('service.name_taken', { name: draft.name }).inField('name');
      return draft.name;
    }
    for (let n = 1; n < 1000; n += 1) {
      const suffix = n === 1 ? '' : `-${n}`;
      const candidate = `${draft.nameSeed.slice(0, 64 - suffix.length)}${suffix}`;
      if (!(await this.deps.repo.byName(candidate))) return candidate;
    }
    throw conflict('service.name_taken', { name: draft.nameSeed }).inField('name');
  }

  private async insert(name: string, draft: CustomDraft): Promise<ServiceRow> {
    const now = Date.now();
    try {
      return await this.deps.repo.insert({
        name,
        display_name: draft.displayName,
        description: draft.description,
        type: draft.type,
        source: 'custom',
        package_name: draft.packageName,
        package_manager: draft.packageManager,
        version: draft.packageVersion,
        command: draft.command,
        args_json: JSON.stringify(draft.args),
        env_enc: this.deps.secrets.encryptJson(draft.env),
        headers_enc: this.deps.secrets.encryptJson(draft.headers),
        openapi_json: draft.openapi ? JSON.stringify(draft.openapi) : '',
        env_schema_json: '[]',
        install_dir: '',
        enabled: 1,
        isolation: draft.isolation,
        rpd_limit: 0,
        health_status: 'unknown',
        health_details: '',
        last_health_check: null,
        tool_count: 0,
        created_at: now,
        updated_at: now,
      });
    } catch (err) {
      // Two creates of one name at once: the unique index decides.
      if (isUniqueViolation(err)) throw conflict('service.name_taken', { name }).inField('name');
      throw err;
    }
  }

  /** `{rpd_limit}` alone sets the limit; otherwise the edit dialog's fields. Returns what changed. */
  async update(id: number, req: UpdateServiceRequest): Promise<{ kind: 'limit'; limit: number } | { kind: 'edit' }> {
    const row = await this.mustGet(id);
    if (req.access !== undefined) {
      if (!this.deps.access) throw badRequest('error.validation');
      // Checked first, written last: a refused edit leaves the access list as it was.
      await this.deps.access.checkUsers(req.access.user_ids);
    }
    if (req.oauth_mode !== undefined) {
      if (!this.deps.oauth) throw badRequest('upstream_oauth.not_configured');
      await this.deps.oauth.setMode(id, req.oauth_mode);
      if (Object.keys(req).every((k) => k === 'oauth_mode')) return { kind: 'edit' };
    }
    const editing = [
      'display_name',
      'description',
      'command',
      'headers_json',
      'default_envs_json',
      'isolation',
      'document',
      'base_url',
      'operation_filter',
    ].some((k) => req[k as keyof UpdateServiceRequest] !== undefined);
    if (!editing && req.rpd_limit !== undefined) {
      const limit = limitOf(req.rpd_limit);
      await this.deps.repo.update(id, { rpd_limit: limit, updated_at: Date.now() });
      // The proxy drops its cached copy of the service at once; the pool restarts nothing for a limit.
      this.deps.events.emit({ type: 'service.changed', serviceId: id });
      if (req.access !== undefined) await this.deps.access?.set('service', id, req.access);
      return { kind: 'limit', limit };
    }
    const patch: ServiceUpdate = {};
    if (req.display_name !== undefined) patch.display_name = inField('display_name', () => checkedDisplayName(req.display_name as string));
    if (req.description !== undefined) patch.description = req.description.trim();
    if (req.rpd_limit !== undefined) patch.rpd_limit = limitOf(req.rpd_limit);
    // Announced when the limit or what the upstream runs with changes: the proxy re-reads the service,
    // the pool restarts only for the latter. A new display name or description concerns neither.
    let announce = req.rpd_limit !== undefined;
    if (row.type === 'openapi') {
      // Another document URL, upload, base URL or filter: the document is read and compiled again (refused
      // with the create's localised 400s, nothing changed), and the link restarts on the new plan.
      const stored: OpenApiPlan = {
        sourceUrl: '',
        document: '',
        filter: {},
        title: '',
        version: '',
        baseUrl: '',
        operations: [],
        ...JSON.parse(row.openapi_json || '{}'),
      };
      const plan = await recompiledOpenApi(stored, req, this.deps.remote);
      if (plan) {
        patch.command = plan.sourceUrl;
        patch.openapi_json = JSON.stringify(plan);
        announce = true;
      }
    } else if (row.type !== 'stdio' && req.command !== undefined) {
      const url = inField('command', () => checkedUrl(req.command as string)).toString();
      // A new address must pass the address preference; the stored one is checked again at connect.
      if (url !== row.command) await inField('command', () => checkedRemoteAddress(url, this.deps.remote));
      announce ||= url !== row.command;
      patch.command = url;
    }
    if (row.type !== 'stdio' && req.headers_json !== undefined) {
      const previous = this.deps.secrets.decryptJson<Record<string, string>>(row.headers_enc, {});
      const headers = keepMasked(
        inField('headers_json', () => checkedHeaders(req.headers_json)),
        previous,
      );
      announce ||= !sameValues(headers, previous);
      patch.headers_enc = this.deps.secrets.encryptJson(headers);
    }
    if (req.default_envs_json !== undefined) {
      const previous = this.deps.secrets.decryptJson<Record<string, string>>(row.env_enc, {});
      const env = keepMasked(
        inField('default_envs_json', () => checkedEnv(req.default_envs_json)),
        previous,
      );
      announce ||= !sameValues(env, previous);
      patch.env_enc = this.deps.secrets.encryptJson(env);
    }
    if (req.isolation !== undefined && req.isolation !== row.isolation) {
      // The gateway restarts the service: new sessions get a process of their own (or share one again).
      patch.isolation = req.isolation;
      announce = true;
    }
    patch.updated_at = Date.now();
    await this.deps.repo.update(id, patch);
    if (announce) this.deps.events.emit({ type: 'service.changed', serviceId: id });
    if (req.access !== undefined) await this.deps.access?.set('service', id, req.access);
    return { kind: 'edit' };
  }

  /**
   * An admin's toggle is the global switch; anyone else's is personal (issue 14): it turns the service
   * off or on for that user alone, whose proxy calls are then refused and open sessions ended.
   */
  async toggle(id: number, caller: Principal): Promise<{ id: number; enabled: boolean; scope: 'global' | 'personal' }> {
    if (isAdminRole(caller.role)) return { ...(await this.toggleGlobal(id)), scope: 'global' };
    const row = await this.mustUse(id, caller);
    const off = !(await this.deps.repo.switchedOffBy(caller.id)).has(id);
    await this.deps.repo.setSwitchedOff(id, caller.id, off);
    // The gateway drops its cached view of the user and ends their sessions on a service now off.
    this.deps.events.emit({ type: 'user.changed', userId: caller.id });
    return { id, enabled: row.enabled === 1 && !off, scope: 'personal' };
  }

  private async toggleGlobal(id: number): Promise<{ id: number; enabled: boolean }> {
    const row = await this.mustGet(id);
    const enabled = row.enabled !== 1;
    await this.deps.repo.update(id, {
      enabled: enabled ? 1 : 0,
      // A disabled service runs nothing; an enabled one is unknown until its next check, and the last check's reason
      // (said while it was off) no longer holds.
      health_status: enabled ? 'unknown' : 'stopped',
      ...(enabled ? { health_details: '' } : {}),
      updated_at: Date.now(),
    });
    this.deps.events.emit({ type: 'service.changed', serviceId: id });
    return { id, enabled };
  }
}

function limitOf(raw: number | string): number {
  const n = typeof raw === 'number' ? raw : /^\s*\d+\s*$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isInteger(n) || n < 0 || n > MAX_LIMIT) throw badRequest('service.rpd_limit_invalid');
  return n;
}
