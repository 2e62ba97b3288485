import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import type { ServiceRow } from '../../../db/schema.js';
import type { ServiceCatalog, ServiceSpec } from '../../../gateway/catalog.js';
import { LocalisedError, redactMessage } from '../../../i18n/localised-error.js';
import type { ConfigEvents } from '../../../infra/events.js';
import { resolveInstallDir } from '../../../infra/install-dir.js';
import type { ServiceLog } from '../../../infra/service-log.js';
import type { ServiceRows } from '../../services/index.js';
import { npmInstallFiles } from '../installers/npm.js';
import { drainProcessesIn } from '../installers/processes.js';
import { pipInstallFiles } from '../installers/pypi.js';
import { InstallError, MANIFEST_FILE, type PackageManifest } from '../installers/types.js';
import { findPackage } from '../search/service.js';
import type { MarketSources } from '../sources/index.js';
import { planForLaunch } from './plan.js';

/** An installed package's directory as `services.install_dir` stores it (relative to DATA_DIR). */
const PACKAGE_DIR = /^packages\/(npm|pypi)\/[^/]+$/;
/** After a failed local install, requests get its error at once for this long before it is tried again. */
const RETRY_AFTER_MS = 30_000;
/** How long a client request waits for a local install in progress before it is told to come back. */
const REQUEST_WAIT_MS = 20_000;
const INSTALL_TIMEOUT_MS = 10 * 60_000;

/**
 * Said to a client whose request reached a replica that does not have the package (yet), in the client's
 * language (the proxy calls `localised`); the cause of a failed install is its detail, in words of ours
 * where it is ours (npm's exit code, a package the registry does not know) and the tool's own text otherwise.
 */
export class ReplicaInstallError extends LocalisedError {}

/** Why an install on this replica failed, redacted, kept for the requests of the next while. */
function causeOf(err: unknown, aborted: boolean, redact: (text: string) => string): string | LocalisedError {
  const error = aborted ? new InstallError('install.shutting_down') : err;
  if (!(error instanceof LocalisedError)) return redact(error instanceof Error ? error.message : String(error));
  return LocalisedError.from(redactMessage(error.data(), redact));
}

export interface ReplicaInstallsDeps {
  /** Names this replica in log lines and in its staging directories. */
  replicaId: string;
  dataDir: string;
  events: ConfigEvents;
  catalog: Pick<ServiceCatalog, 'byId' | 'enabledServices'>;
  /** The package fields of a service (kind, name, version), which the gateway's view leaves out. */
  rows: Pick<ServiceRows, 'byId'>;
  serviceLog: Pick<ServiceLog, 'write' | 'redact'>;
  logger: Logger;
  /** An MCP Registry entry is looked up again to learn which package it runs. */
  sources: MarketSources;
  registries: { npm: () => Promise<string>; pypi: string };
}

export interface ReplicaInstallOptions {
  /** Client requests wait this long for an install in progress (default 20 s). */
  requestWaitMs?: number;
  /** Each install command is stopped after this long (default 10 min). */
  timeoutMs?: number;
}

/**
 * Several replicas (REDIS_URL), each with its own DATA_DIR: a package installed through one replica
 * is installed again into this replica's `DATA_DIR/packages` before its process starts here — same
 * package, same version, same registry settings — eagerly when the service's event arrives (and for
 * every enabled service at start), else at the first start. Starts that find the install running wait
 * for that one install. A directory that already holds the package (its `toolport-package.json`, for
 * instance on a shared volume) is used as it is. Files go to a directory of this replica's own and are
 * moved into place when complete, so replicas sharing a volume never see a half-installed package.
 */
export class ReplicaInstalls {
  private readonly running = new Map<string, Promise<void>>();
  /** Install directories found complete, with the service version (`id:updatedAt`) they were checked for. */
  private readonly verified = new Map<string, string>();
  private readonly failures = new Map<string, { key: string; at: number; reason: string | LocalisedError }>();
  /** Services whose files this replica installed itself: removed with the service. */
  private readonly installedHere = new Map<number, string>();
  private readonly controller = new AbortController();
  private readonly stopListening: () => void;
  private readonly requestWaitMs: number;
  private readonly timeoutMs: number;
  private readonly marker: string;

  constructor(
    private readonly deps: ReplicaInstallsDeps,
    opts: ReplicaInstallOptions = {},
  ) {
    this.requestWaitMs = opts.requestWaitMs ?? REQUEST_WAIT_MS;
    this.timeoutMs = opts.timeoutMs ?? INSTALL_TIMEOUT_MS;
    this.marker = `[replica ${deps.replicaId}]`;
    this.stopListening = deps.events.on((event) => {
      if (event.type === 'service.changed') void this.eagerly(event.serviceId);
      if (event.type === 'service.removed') void this.forget(event.serviceId);
    });
  }

  /**
   * Nothing (undefined) when the service's package is here or it has none to install; else the
   * local install, started now or already running. `forRequest`: a client waits, at most a while.
   */
  ensure(spec: ServiceSpec, forRequest = false): Promise<void> | undefined {
    if (spec.type !== 'stdio' || !PACKAGE_DIR.test(spec.installDir)) return undefined;
    const dir = resolveInstallDir(this.deps.dataDir, spec.installDir);
    const key = `${spec.id}:${spec.updatedAt}`;
    let work = this.running.get(dir);
    if (!work) {
      // The common case: checked before, for this very version of the service.
      if (this.verified.get(dir) === key) return undefined;
      const failed = this.failures.get(dir);
      if (failed?.key === key && Date.now() - failed.at < RETRY_AFTER_MS)
        return Promise.reject(new ReplicaInstallError('market.replica_install_failed', { name: spec.name }, failed.reason));
      work = this.provide(spec, dir, key);
      this.running.set(dir, work);
      const started = work;
      void started.then(
        () => this.running.delete(dir),
        () => this.running.delete(dir),
      );
    }
    if (!forRequest) return work;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new ReplicaInstallError('market.installing_on_replica', { name: spec.name })), this.requestWaitMs);
    });
    return Promise.race([work, late]).finally(() => clearTimeout(timer));
  }

  /** Every enabled service's package, one after the other (a replica that starts or joins late). */
  async catchUp(): Promise<void> {
    try {
      for (const spec of await this.deps.catalog.enabledServices()) {
        if (this.controller.signal.aborted) return;
        await this.ensure(spec)?.catch(() => undefined);
      }
    } catch (err) {
      this.deps.logger.error({ err }, 'installing the packages of this replica failed');
    }
  }

  /** Stops the installs in progress (they fail) and waits for them. */
  async close(): Promise<void> {
    this.stopListening();
    this.controller.abort();
    await Promise.allSettled([...this.running.values()]);
  }

  private async eagerly(serviceId: number): Promise<void> {
    try {
      const spec = await this.deps.catalog.byId(serviceId);
      if (spec?.enabled) await this.ensure(spec)?.catch(() => undefined);
    } catch (err) {
      this.deps.logger.error({ err, serviceId }, 'installing a service’s package on this replica failed');
    }
  }

  /** The service is gone: the files this replica installed for it go too, once its processes have stopped. */
  private async forget(serviceId: number): Promise<void> {
    const dir = this.installedHere.get(serviceId);
    if (!dir) return;
    this.installedHere.delete(serviceId);
    await this.running.get(dir)?.catch(() => undefined);
    if (await this.deps.rows.byId(serviceId)) return;
    await drainProcessesIn(dir, 10_000);
    rmSync(dir, { recursive: true, force: true });
  }

  private log(spec: ServiceSpec, level: 'info' | 'error', line: string): void {
    this.deps.serviceLog.write({ serviceId: spec.id, serviceName: spec.name, phase: 'install', level, message: `${this.marker} ${line}` });
  }

  /** Checks the directory against the service's row (package kind and version) and installs when it does not match. */
  private async provide(spec: ServiceSpec, dir: string, key: string): Promise<void> {
    try {
      const row = await this.deps.rows.byId(spec.id);
      if (!row) throw new InstallError('install.service_removed');
      if (!matches(dir, row)) await this.install(spec, dir, row);
      this.verified.set(dir, key);
      this.failures.delete(dir);
    } catch (err) {
      const reason = causeOf(err, this.controller.signal.aborted, (text) => this.deps.serviceLog.redact(text));
      this.log(spec, 'error', `Installation on this replica failed: ${typeof reason === 'string' ? reason : reason.message}`);
      this.failures.set(dir, { key, at: Date.now(), reason });
      throw new ReplicaInstallError('market.replica_install_failed', { name: spec.name }, reason);
    }
  }

  private async install(spec: ServiceSpec, dir: string, row: ServiceRow): Promise<void> {
    const log = (level: 'info' | 'error', line: string) => this.log(spec, level, line);
    const staging = `${dir}.installing-${this.deps.replicaId}`;
    try {
      const kind = PACKAGE_DIR.exec(spec.installDir)?.[1] as 'npm' | 'pypi';
      const identifier = await this.identifierOf(kind, row, spec);
      const version = row.version;
      const registry = kind === 'npm' ? await this.deps.registries.npm() : this.deps.registries.pypi;
      log(
        'info',
        `${spec.name} is not installed on this replica yet: installing ${kind === 'npm' ? 'npm' : 'PyPI'} package ${identifier}${version ? `@${version}` : ''} into ${dir}`,
      );
      this.deps.logger.info({ service: spec.name, identifier, version }, 'installing a service’s package on this replica');
      rmSync(staging, { recursive: true, force: true });
      const opts = {
        dir: staging,
        registry,
        timeoutMs: this.timeoutMs,
        log: (line: string) => log('info', line),
        signal: this.controller.signal,
      };
      const manifest: PackageManifest =
        kind === 'npm' ? await this.npm(spec, identifier, version, opts) : await this.pypi(spec, identifier, version, opts);
      // The command line stored by the replica that installed it must work here too.
      for (const part of [spec.command, ...spec.args]) {
        if (part.startsWith('./') && !existsSync(path.join(staging, part)))
          throw new InstallError('install.replica_part_missing', { part, package: `${identifier}@${manifest.version}` });
      }
      writeFileSync(path.join(staging, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
      if (matches(dir, row)) {
        // Another replica on the same volume was quicker: its copy is as good.
        rmSync(staging, { recursive: true, force: true });
        log('info', `${identifier}@${manifest.version} is already present in ${dir}`);
      } else {
        rmSync(dir, { recursive: true, force: true });
        renameSync(staging, dir);
        this.installedHere.set(spec.id, dir);
        log('info', `Installed ${identifier}@${manifest.version} on this replica`);
      }
    } finally {
      rmSync(staging, { recursive: true, force: true });
    }
  }

  private async npm(
    spec: ServiceSpec,
    identifier: string,
    version: string,
    opts: Parameters<typeof npmInstallFiles>[1],
  ): Promise<PackageManifest> {
    const { pkgDir, pkg } = await npmInstallFiles({ identifier, version }, opts);
    const installed = typeof pkg.version === 'string' ? pkg.version : version;
    // `node ./node_modules/<pkg>/<bin> args…`, or the bin itself when it is not a Node script.
    const [bin = '', ...args] = spec.command === 'node' ? spec.args : [spec.command, ...spec.args];
    const bins = pkg.bin && typeof pkg.bin === 'object' ? Object.entries(pkg.bin as Record<string, unknown>) : [];
    const named = bins.find(([, file]) => typeof file === 'string' && path.resolve(pkgDir, file) === path.resolve(opts.dir, bin));
    return { kind: 'npm', identifier, version: installed, entry: bins.length > 1 && named ? named[0] : '', args };
  }

  private async pypi(
    spec: ServiceSpec,
    identifier: string,
    version: string,
    opts: Parameters<typeof pipInstallFiles>[1],
  ): Promise<PackageManifest> {
    const { distInfo } = await pipInstallFiles({ identifier, version }, opts);
    const metadata = readFileSync(path.join(distInfo, 'METADATA'), 'utf8');
    const installed = /^Version:\s*(\S+)/m.exec(metadata)?.[1] ?? version;
    // `./venv/bin/python ./venv/bin/<script> args…` (the script itself on Windows).
    const [script = '', ...args] = spec.args[0]?.includes('/venv/') ? spec.args : [spec.command, ...spec.args];
    return { kind: 'pypi', identifier, version: installed, entry: path.basename(script), args };
  }

  /** The package's name on its registry: from the command line (npm), the service row, or the MCP Registry entry. */
  private async identifierOf(kind: 'npm' | 'pypi', row: ServiceRow, spec: ServiceSpec): Promise<string> {
    if (kind === 'npm') {
      for (const part of [spec.command, ...spec.args]) {
        const m = /^\.\/node_modules\/((?:@[^/]+\/)?[^/@][^/]*)\//.exec(part);
        if (m?.[1]) return m[1];
      }
    }
    if (row.package_manager === kind || (kind === 'pypi' && row.package_manager === 'uv')) return row.package_name;
    if (row.package_manager === 'mcp_registry') {
      const plan = planForLaunch((await findPackage(this.deps.sources, row.package_name, 'mcp_registry')).launch, row.package_name);
      if (plan.kind === kind) return plan.identifier;
    }
    throw new InstallError('install.replica_package_unknown', { kind, name: spec.name });
  }
}

/**
 * The directory holds a complete install (the manifest is written last) of the service's package
 * kind and version: a copy left by an earlier service of the same name at another version does not count.
 */
function matches(dir: string, row: ServiceRow): boolean {
  let manifest: Partial<PackageManifest>;
  try {
    manifest = JSON.parse(readFileSync(path.join(dir, MANIFEST_FILE), 'utf8'));
  } catch {
    return false;
  }
  const kind = PACKAGE_DIR.exec(row.install_dir)?.[1];
  return manifest.kind === kind && (!row.version || manifest.version === row.version);
}
