import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  type EnvVarDeclaration,
  type InstallRequest,
  type InstallResult,
  type MarketSourceName,
  splitCommandLine,
} from '@toolport/contract';
import type { ServiceRow } from '../../../db/schema.js';
import { AppError, badRequest, conflict, notFound } from '../../../http/errors.js';
import type { MessageKey } from '../../../i18n/index.js';
import { resolveInstallDir, storedInstallDir } from '../../../infra/install-dir.js';
import type { Secrets } from '../../../infra/secrets.js';
import { checkedEnv, checkedHeaders, type PersonalEnvs, type ServiceRows, type ServicesService } from '../../services/index.js';
import { serviceNameFor } from '../details/mcp-config.js';
import { isPinnableVersion, parseNpmSpec, parsePypiSpec, planFromNpx, planFromUvx } from '../installers/runner-args.js';
import {
  InstallError,
  type InstallPlan,
  MANIFEST_FILE,
  type PackageManifest,
  type PackagePlan,
  type RemotePlan,
} from '../installers/types.js';
import type { MarketService } from '../search/service.js';
import { type InstallJobs, type JobOutcome, packageDirOf } from './jobs.js';
import { filledUrl, initialValues, misplacedUrlVariable, missingVariables, planForLaunch } from './plan.js';
import type { InstallTasks } from './tasks.js';

/** What is about to be installed, whichever way the request named it. */
export interface InstallTarget {
  /** The exact service name (batch import); undefined derives one from the package. */
  name?: string;
  nameSeed: string;
  displayName: string;
  description: string;
  /** How the service records where it came from (services.source / package_manager / package_name). */
  source: string;
  packageManager: string;
  packageName: string;
  /** The marketplace source whose installed state this service answers for. */
  marketSource: MarketSourceName;
  plan: InstallPlan;
  envVars: EnvVarDeclaration[];
  /** One process for every client session (the default), or one per session (batch import). */
  isolation?: 'shared' | 'session';
  /** A custom `npx`/`uvx` service: the command line as typed, kept for display and export. */
  typedCommand?: string;
}

const isUniqueViolation = (err: unknown): boolean => {
  const e = err as { code?: string; message?: string };
  return e?.code === '23505' || /UNIQUE constraint failed/i.test(e?.message ?? '');
};

const MARKET_SOURCE: Record<InstallRequest['package_manager'], MarketSourceName> = {
  npm: 'npm',
  pypi: 'pypi',
  uv: 'pypi',
  mcp_registry: 'mcp_registry',
};

/**
 * `install_or_add_service` (docs/api.md "Marketplace and installs"): a package not installed yet
 * becomes a disabled service plus an install task that the jobs run; one already installed gains the
 * caller's personal values; one being installed answers with its running task.
 */
export class MarketInstaller {
  private readonly turns = new Map<string, Promise<void>>();

  constructor(
    private readonly deps: {
      market: MarketService;
      /** The address preference of remote URLs: a registry's remote URL is held to it as one an admin types in. */
      addresses: Pick<ServicesService, 'checkedRemoteAddress'>;
      tasks: InstallTasks;
      jobs: InstallJobs;
      rows: ServiceRows;
      personal: PersonalEnvs;
      secrets: Secrets;
      dataDir: string;
    },
  ) {}

  async installOrAdd(callerId: number, req: InstallRequest): Promise<InstallResult> {
    const target = req.source_type === 'custom' ? customTarget(req) : await this.marketplaceTarget(req);
    // Requests for one package take turns: the second must see the first one's service and task.
    const key = `${target.marketSource}\n${target.packageName.toLowerCase()}`;
    const previous = this.turns.get(key) ?? Promise.resolve();
    const mine = previous.then(() => this.installOrAddTarget(callerId, req, target));
    const settled = mine.then(
      () => undefined,
      () => undefined,
    );
    this.turns.set(key, settled);
    void settled.then(() => {
      if (this.turns.get(key) === settled) this.turns.delete(key);
    });
    return mine;
  }

  private async installOrAddTarget(callerId: number, req: InstallRequest, target: InstallTarget): Promise<InstallResult> {
    const existing = (await this.deps.market.installedIndex()).serviceIdOf(target.marketSource, target.packageName);
    if (existing !== null) return this.addInstance(callerId, existing, req.user_provided_env_vars);
    if (target.plan.kind === 'unsupported') throw badRequest('market.install_unsupported', { reason: target.plan.reason });
    const missing = missingVariables(target.envVars, req.user_provided_env_vars);
    if (missing.length > 0) {
      throw new AppError(
        400,
        'market.env_required',
        { names: missing.join(', ') },
        { code: 'required_env_vars', data: { required_env_vars: missing } },
      );
    }
    let created: { row: ServiceRow; taskId: string };
    try {
      created = await this.create(callerId, target, req.user_provided_env_vars);
    } catch (err) {
      // The same package asked for at once on another replica: this one finds that one's service and task.
      const again =
        isUniqueViolation(err) && (await this.deps.market.installedIndex()).serviceIdOf(target.marketSource, target.packageName);
      if (again) return this.addInstance(callerId, again, req.user_provided_env_vars);
      throw err;
    }
    void this.run(created, target.plan as PackagePlan | RemotePlan, req.user_provided_env_vars);
    return { mcp_service_id: created.row.id, task_id: created.taskId, status: 'pending', service_name: created.row.name };
  }

  /**
   * Creates the service and its task and runs the install to the end (batch import waits for each).
   * Throws AppError for a request that cannot start (taken name, invalid variable names).
   */
  async installAndWait(
    callerId: number | null,
    target: InstallTarget,
    values: Record<string, string>,
  ): Promise<JobOutcome & { serviceId: number }> {
    if (target.plan.kind === 'unsupported') return { ok: false, error: target.plan.reason, serviceId: 0 };
    const created = await this.create(callerId, target, values);
    const outcome = await this.run(created, target.plan, values);
    return { ...outcome, serviceId: created.row.id };
  }

  /**
   * A custom `npx`/`uvx` service (decision 0035): stored disabled, its package pinned into DATA_DIR by
   * the same install job as a marketplace install, in the background. A failure leaves it disabled with
   * the reason (issue 15) instead of deleting it.
   */
  async startPinned(callerId: number, target: InstallTarget, values: Record<string, string>): Promise<{ row: ServiceRow; taskId: string }> {
    if (target.plan.kind !== 'npm' && target.plan.kind !== 'pypi') throw badRequest('service.command_parse_failed');
    let created: { row: ServiceRow; taskId: string };
    try {
      created = await this.create(callerId, target, values, 'custom');
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict('service.name_taken', { name: target.name ?? target.nameSeed }).inField('name');
      throw err;
    }
    void this.run(created, target.plan, values, 'disable');
    return created;
  }

  /**
   * Update (decision 0035): the package of an installed service again at its newest release, as a task.
   * The package is the one its install directory records (or its typed `npx`/`uvx` command names).
   */
  async startUpdate(callerId: number, serviceId: number): Promise<{ taskId: string; row: ServiceRow }> {
    const row = await this.deps.rows.byId(serviceId);
    if (!row) throw notFound('service.not_found');
    const plan = row.type === 'stdio' ? updatePlanOf(this.deps.dataDir, row) : undefined;
    if (!plan) throw badRequest('service.update_not_package', { name: row.name });
    const running = await this.deps.tasks.activeFor(serviceId);
    if (running) throw conflict('service.update_running', { name: row.name });
    const taskId = await this.deps.tasks.create({
      kind: 'update',
      serviceId,
      createdBy: callerId,
      payload: { package_name: plan.identifier, from_version: row.version },
    });
    void this.deps.jobs.update({ serviceId, serviceName: row.name, taskId, plan });
    return { taskId, row };
  }

  private run(
    created: { row: ServiceRow; taskId: string },
    plan: PackagePlan | RemotePlan,
    values: Record<string, string>,
    onFailure: 'discard' | 'disable' = 'discard',
  ): Promise<JobOutcome> {
    return this.deps.jobs.start({
      serviceId: created.row.id,
      serviceName: created.row.name,
      taskId: created.taskId,
      // A remote runs at the URL stored with its variables filled in.
      plan: plan.kind === 'remote' ? { ...plan, url: created.row.command } : plan,
      secretValues: Object.values(values),
      onFailure,
    });
  }

  private async marketplaceTarget(req: InstallRequest): Promise<InstallTarget> {
    const source = MARKET_SOURCE[req.package_manager];
    const pkg = await this.deps.market.find(req.package_name, source);
    const envVars = await this.deps.market.envVarsOf(pkg);
    let plan = planForLaunch(pkg.launch, pkg.name);
    if (plan.kind === 'npm' || plan.kind === 'pypi') {
      // A version asked for replaces the latest for npm and PyPI; an MCP Registry entry pins its package itself.
      const wanted = source === 'mcp_registry' ? '' : requestedVersion(req.version);
      plan = { ...plan, version: wanted || plan.version, args: [...plan.args, ...req.custom_args] };
    }
    return {
      nameSeed: pkg.name,
      displayName: req.display_name.trim() || pkg.name,
      description: req.service_description.trim() || pkg.description,
      source,
      packageManager: req.package_manager,
      packageName: pkg.name,
      marketSource: source,
      plan,
      envVars,
    };
  }

  private async addInstance(callerId: number, serviceId: number, provided: Record<string, string>): Promise<InstallResult> {
    const row = await this.deps.rows.byId(serviceId);
    if (!row) throw conflict('market.install_conflict');
    const running = await this.deps.tasks.activeFor(serviceId);
    if (running && (running.status === 'pending' || running.status === 'installing')) {
      return { mcp_service_id: serviceId, task_id: running.id, status: running.status, service_name: row.name };
    }
    const current = await this.deps.personal.get(row, callerId);
    const mine = Object.fromEntries(Object.entries(provided).filter(([name, value]) => current.names.includes(name) && value.trim()));
    // Values stored before stay (the mask means "keep"); the new ones are added or replace theirs.
    if (Object.keys(mine).length > 0) await this.deps.personal.set(row, callerId, { ...current.env, ...mine });
    return { mcp_service_id: serviceId, status: 'already_installed_instance_added', service_name: row.name };
  }

  private async create(
    callerId: number | null,
    target: InstallTarget,
    provided: Record<string, string>,
    taskKind: 'marketplace' | 'custom' = 'marketplace',
  ): Promise<{ row: ServiceRow; taskId: string }> {
    const values = initialValues(target.envVars, provided);
    const remote = target.plan.kind === 'remote' ? target.plan : undefined;
    // `{tenant}`-style placeholders are filled from the variables (required ones were checked before).
    const misplaced = remote ? misplacedUrlVariable(remote.url, remote.variables, values) : undefined;
    if (misplaced)
      throw urlVariableRefused(misplaced.part === 'host' ? 'market.url_variable_host' : 'market.url_variable_port', [misplaced.name]);
    const url = remote ? filledUrl(remote.url, remote.variables, values) : undefined;
    if (remote && url === undefined) throw urlVariablesMissing(remote, values);
    if (remote && url && !URL.canParse(url)) throw urlVariableRefused('market.url_variables_invalid', remote.variables);
    // A registry's remote URL is held to the address preference as one typed in by an admin.
    if (url) await this.deps.addresses.checkedRemoteAddress(url);
    const headers = remote ? headersOf(remote, values) : {};
    const env = remote ? {} : checkedEnv(values);
    const name = target.name ?? (await this.freeName(serviceNameFor(target.nameSeed)));
    const { dataDir } = this.deps;
    const now = Date.now();
    const row = await this.deps.rows.insert({
      name,
      display_name: target.displayName.slice(0, 128),
      description: target.description.slice(0, 2000),
      type: remote ? remote.transport : 'stdio',
      source: target.source,
      package_name: target.packageName,
      package_manager: target.packageManager,
      version: target.plan.kind === 'npm' || target.plan.kind === 'pypi' ? target.plan.version : '',
      command: url ?? '',
      args_json: '[]',
      env_enc: this.deps.secrets.encryptJson(env),
      headers_enc: this.deps.secrets.encryptJson(headers),
      env_schema_json: JSON.stringify(target.envVars),
      // Known from the start, so that an interrupted install can be cleaned up.
      install_dir: remote ? '' : storedInstallDir(dataDir, packageDirOf(dataDir, target.plan.kind as 'npm' | 'pypi', name)),
      typed_command: target.typedCommand ?? '',
      // Nothing runs it until the install has completed its handshake.
      enabled: 0,
      isolation: target.isolation ?? 'shared',
      rpd_limit: 0,
      health_status: 'installing',
      health_details: '',
      last_health_check: null,
      tool_count: 0,
      created_at: now,
      updated_at: now,
    });
    const taskId = await this.deps.tasks.create({
      kind: taskKind,
      serviceId: row.id,
      createdBy: callerId,
      payload: { package_name: target.packageName, package_manager: target.packageManager, plan: target.plan.kind },
    });
    return { row, taskId };
  }

  private async freeName(seed: string): Promise<string> {
    for (let n = 1; n < 1000; n += 1) {
      const suffix = n === 1 ? '' : `-${n}`;
      const candidate = `${seed.slice(0, 64 - suffix.length)}${suffix}`;
      if (!(await this.deps.rows.byName(candidate))) return candidate;
    }
    throw conflict('service.name_taken', { name: seed });
  }
}

/** The package an Update installs again: from the install directory's manifest, else the typed command. */
function updatePlanOf(dataDir: string, row: ServiceRow): PackagePlan | undefined {
  const kind = /^packages\/(npm|pypi)\/[^/]+$/.exec(row.install_dir)?.[1] as 'npm' | 'pypi' | undefined;
  if (!kind) return undefined;
  try {
    const manifest = JSON.parse(
      readFileSync(path.join(resolveInstallDir(dataDir, row.install_dir), MANIFEST_FILE), 'utf8'),
    ) as Partial<PackageManifest>;
    if (manifest.kind === kind && typeof manifest.identifier === 'string' && manifest.identifier) {
      return {
        kind,
        identifier: manifest.identifier,
        version: '',
        entry: typeof manifest.entry === 'string' ? manifest.entry : '',
        args: Array.isArray(manifest.args) ? manifest.args.map(String) : [],
      };
    }
  } catch {
    // No manifest here (a replica that has not installed it yet): the typed command tells.
  }
  const pinned = row.typed_command ? pinnedPlanOf(row.typed_command) : undefined;
  return pinned && pinned.kind === kind ? { ...pinned, version: '' } : undefined;
}

/** The package plan of a typed `npx …`/`uvx …` command line; undefined for any other command. */
export function pinnedPlanOf(commandLine: string): PackagePlan | undefined {
  const words = splitCommandLine(commandLine.trim());
  const [runner, ...args] = words ?? [];
  if (runner === 'npx') return planFromNpx(args);
  if (runner === 'uvx') return planFromUvx(args);
  return undefined;
}

const requestedVersion = (version: string): string => {
  const v = version.trim();
  if (!v || v === 'latest') return '';
  if (!isPinnableVersion(v)) throw badRequest('market.version_invalid', { version: v.slice(0, 64) });
  return v;
};

/** A custom install names an npm or PyPI package directly; nothing is looked up beforehand. */
function customTarget(req: InstallRequest): InstallTarget {
  const pypi = req.package_manager === 'pypi' || req.package_manager === 'uv';
  if (req.package_manager === 'mcp_registry') throw badRequest('market.custom_manager_invalid');
  let spec: { identifier: string; version: string };
  try {
    spec = pypi ? parsePypiSpec(req.package_name) : parseNpmSpec(req.package_name);
  } catch (err) {
    if (err instanceof InstallError) throw badRequest('market.package_name_invalid', { name: req.package_name.slice(0, 214) });
    throw err;
  }
  const plan: PackagePlan = {
    kind: pypi ? 'pypi' : 'npm',
    identifier: spec.identifier,
    version: requestedVersion(req.version) || spec.version,
    entry: '',
    args: req.custom_args,
  };
  return {
    nameSeed: spec.identifier,
    displayName: req.display_name.trim() || spec.identifier,
    description: req.service_description.trim(),
    source: 'custom',
    packageManager: req.package_manager,
    packageName: spec.identifier,
    marketSource: pypi ? 'pypi' : 'npm',
    plan,
    envVars: [],
  };
}

/** The 400 for URL variables without a value (those the registry marks optional but gives no default). */
function urlVariablesMissing(plan: RemotePlan, values: Record<string, string>): AppError {
  const missing = plan.variables.filter((name) => !values[name]?.trim());
  return new AppError(
    400,
    'market.env_required',
    { names: missing.join(', ') },
    { code: 'required_env_vars', data: { required_env_vars: missing } },
  );
}

/** The 400 for URL variables whose values cannot make the address: the variables named, never their values (they may be secret). */
function urlVariableRefused(key: MessageKey, names: readonly string[]): AppError {
  return new AppError(400, key, { name: names.join(', ') }, { code: 'url_variable_invalid', data: { variables: [...names] } });
}

/** Remote headers filled from the variables named like them; unfilled ones are left out. */
function headersOf(plan: RemotePlan, values: Record<string, string>): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [header, variable] of Object.entries(plan.headers)) {
    const value = values[variable];
    if (value) headers[header] = value;
  }
  return checkedHeaders(headers);
}
