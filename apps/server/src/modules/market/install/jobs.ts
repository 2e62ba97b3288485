import { existsSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { translate } from '../../../i18n/index.js';
import { LocalisedError, type MessageData, redactMessage, sayMessage, storedText } from '../../../i18n/localised-error.js';
import type { ConfigEvents } from '../../../infra/events.js';
import { relativeToInstallDir, resolveInstallDir, storedInstallDir } from '../../../infra/install-dir.js';
import type { Metrics } from '../../../infra/metrics.js';
import type { ServiceLog } from '../../../infra/service-log.js';
import type { HealthProbe, ServiceRows } from '../../services/index.js';
import { installNpm } from '../installers/npm.js';
import { drainProcessesIn } from '../installers/processes.js';
import { installPypi } from '../installers/pypi.js';
import { InstallError, type InstalledPackage, MANIFEST_FILE, type PackagePlan, type RemotePlan } from '../installers/types.js';
import type { InstallTasks } from './tasks.js';

export interface InstallTimeouts {
  /** Each install command (npm, pip, uv) is killed after this long. */
  installMs: number;
  /** Starting the server and its MCP handshake. */
  handshakeMs: number;
}

export const DEFAULT_TIMEOUTS: InstallTimeouts = { installMs: 10 * 60_000, handshakeMs: 90_000 };

/** What install jobs work with. */
export interface InstallJobsDeps {
  tasks: InstallTasks;
  rows: ServiceRows;
  /** The MCP handshake of a newly installed service is a health check by the gateway. */
  gateway: HealthProbe;
  events: ConfigEvents;
  serviceLog: Pick<ServiceLog, 'write' | 'redact' | 'registerSecrets'>;
  metrics: Pick<Metrics, 'installStarted' | 'installEnded'>;
  logger: Logger;
  dataDir: string;
  registries: { npm: () => Promise<string>; pypi: string };
  timeouts?: InstallTimeouts;
}

/** A service row and its install task, created and waiting for the work to be done. */
export interface Job {
  serviceId: number;
  serviceName: string;
  taskId: string;
  plan: PackagePlan | RemotePlan;
  /** Values that must never appear in the log (variable and header values). */
  secretValues: string[];
  /**
   * What a failure leaves: `discard` deletes the half-made service (a marketplace install); `disable`
   * keeps it switched off with the reason as its health details, for the admin to read and remove (a
   * custom `npx`/`uvx` service, issue 15).
   */
  onFailure?: 'discard' | 'disable';
}

/** An Update (decision 0035): the package of an installed service again, at its newest release. */
export interface UpdateJob {
  serviceId: number;
  serviceName: string;
  taskId: string;
  plan: PackagePlan;
}

export interface JobOutcome {
  ok: boolean;
  /** The reason of a failure, redacted, in English. */
  error: string;
  /** The same reason in words of ours, to be said in each reader's language (absent for an unforeseen error). */
  reason?: MessageData;
  toolCount?: number;
  /** The version installed. */
  version?: string;
}

/**
 * Why a job failed, redacted: in words of ours (kept as a message, said in each reader's language) when the
 * error is one of ours, else the error's own text. `text` is the English, for logs and older readers.
 */
function failureOf(err: unknown, aborted: boolean, redact: (text: string) => string): { text: string; reason?: MessageData } {
  const error = aborted ? new InstallError('install.shutting_down') : err;
  if (!(error instanceof LocalisedError)) return { text: redact(errorText(error)) };
  const reason = redactMessage(error.data(), redact);
  return { text: sayMessage(reason, (key, params) => translate('en', key, params)), reason };
}

/** What the service row records when an install left it disabled. */
export const INSTALL_FAILED = 'install_failed';

/** Where a package's files live: one directory per service, so two services never share files. */
export const packageDirOf = (dataDir: string, kind: 'npm' | 'pypi', serviceName: string) =>
  path.join(dataDir, 'packages', kind, serviceName);

const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** The MCP handshake of a freshly installed server, given up after `ms`. */
function handshakeWithin<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new InstallError('install.handshake_timeout', { seconds: Math.round(ms / 1000) })), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/**
 * The durable part of an install (docs/api.md, install_status): every step and every line of
 * the install tools goes to the task log (redacted) and the service log; the service is enabled
 * only after a real MCP handshake. A failure keeps the log, deletes the half-made service and its
 * files, waits until no process of it is left, and only then reports `failed`.
 */
export class InstallJobs {
  private readonly running = new Map<string, AbortController>();
  private readonly background = new Set<Promise<JobOutcome>>();
  private readonly tasks: InstallTasks;
  private readonly timeouts: InstallTimeouts;

  constructor(private readonly deps: InstallJobsDeps) {
    this.tasks = deps.tasks;
    this.timeouts = deps.timeouts ?? DEFAULT_TIMEOUTS;
  }

  /** Starts the job; the returned promise settles when the task is finished either way. */
  start(job: Job): Promise<JobOutcome> {
    const work = this.track(job.taskId, 'install', (signal) => this.execute(job, signal));
    this.deps.metrics.installStarted();
    void work.then((outcome) => this.deps.metrics.installEnded(job.plan.kind, outcome.ok ? 'completed' : 'failed'));
    return work;
  }

  /** Shutdown: running installs are stopped and recorded as failed before the database closes. */
  async close(): Promise<void> {
    for (const controller of this.running.values()) controller.abort();
    await Promise.allSettled([...this.background]);
  }

  private async execute(job: Job, signal: AbortSignal): Promise<JobOutcome> {
    const { serviceLog } = this.deps;
    serviceLog.registerSecrets(job.secretValues);
    const log = (level: 'info' | 'error', line: string) => {
      serviceLog.write({ serviceId: job.serviceId, serviceName: job.serviceName, phase: 'install', level, message: line });
      return this.tasks.log(job.taskId, serviceLog.redact(line));
    };
    const dir = job.plan.kind === 'remote' ? '' : packageDirOf(this.deps.dataDir, job.plan.kind, job.serviceName);
    try {
      await this.tasks.setStatus(job.taskId, 'installing');
      if (job.plan.kind === 'remote') {
        await log('info', `Remote ${job.plan.transport} server at ${job.plan.url}: nothing to install`);
      } else {
        const installed = await this.installPackage(job.plan, dir, (line) => void log('info', line).catch(() => undefined), signal);
        await log('info', `Installed ${installed.manifest.identifier}@${installed.version}`);
        // Stored relative to DATA_DIR and to the install directory: it runs wherever DATA_DIR is mounted.
        await this.deps.rows.update(job.serviceId, {
          command: relativeToInstallDir(dir, installed.command),
          args_json: JSON.stringify(installed.args.map((arg) => relativeToInstallDir(dir, arg))),
          version: installed.version,
          install_dir: storedInstallDir(this.deps.dataDir, dir),
          updated_at: Date.now(),
        });
      }
      if (signal.aborted) throw new InstallError('install.shutting_down');
      // Enabled in the database only: the gateway's probe reads it, but nothing is announced (and
      // no `boot` process started) before the handshake has succeeded.
      await this.deps.rows.update(job.serviceId, { enabled: 1, health_status: 'unknown', updated_at: Date.now() });
      await log('info', 'Starting the server and completing the MCP handshake (initialize, tools/list)…');
      const health = await handshakeWithin(this.deps.gateway.checkHealth(job.serviceId), this.timeouts.handshakeMs);
      if (health.status !== 'healthy') throw new InstallError('install.handshake_failed', {}, health.details);
      const toolCount = health.toolCount ?? 0;
      await log('info', `Handshake complete: ${toolCount} tools. ${job.serviceName} is ready at /proxy/${job.serviceName}/mcp`);
      this.deps.events.emit({ type: 'service.changed', serviceId: job.serviceId });
      const version = job.plan.kind === 'remote' ? undefined : (await this.deps.rows.byId(job.serviceId))?.version;
      await this.tasks.finish(job.taskId, 'completed', '', { service_id: job.serviceId, tool_count: toolCount, version });
      return { ok: true, error: '', toolCount, ...(version ? { version } : {}) };
    } catch (err) {
      const { text: reason, reason: cause } = failureOf(err, signal.aborted, (text) => serviceLog.redact(text));
      await log('error', `Installation failed: ${reason}`);
      if (job.onFailure === 'disable') {
        await disableService(this.deps, job.serviceId, dir, cause ?? reason);
        await log('info', 'The service is disabled: read the reason, then remove it or correct the command');
      } else {
        await discardService(this.deps, job.serviceId, dir);
        await log('info', 'The service and its files were removed');
        await this.tasks.detachService(job.taskId);
      }
      await this.tasks.finish(job.taskId, 'failed', reason, cause ? { reason: cause } : {});
      return { ok: false, error: reason, ...(cause ? { reason: cause } : {}) };
    }
  }

  /** Starts an Update; the returned promise settles when its task is finished either way. */
  update(job: UpdateJob): Promise<JobOutcome> {
    return this.track(job.taskId, 'update', (signal) => this.executeUpdate(job, signal));
  }

  /** Runs a task's work, cancellable by its id and awaited at shutdown, until it is finished either way. */
  private track(taskId: string, what: 'install' | 'update', run: (signal: AbortSignal) => Promise<JobOutcome>): Promise<JobOutcome> {
    const controller = new AbortController();
    this.running.set(taskId, controller);
    const work = run(controller.signal)
      .catch((err): JobOutcome => {
        // Only the bookkeeping itself can fail here (the database went away): the sweep of
        // interrupted tasks will record it.
        this.deps.logger.error({ err, taskId }, `${what} task bookkeeping failed`);
        return { ok: false, error: errorText(err) };
      })
      .finally(() => this.running.delete(taskId));
    this.background.add(work);
    void work.finally(() => this.background.delete(work));
    return work;
  }

  /**
   * The newest release goes into a directory beside the current one and takes its place only once
   * complete; the gateway then restarts the service on its new files and the handshake must pass, or
   * the previous files and row come back. The previous files go once no process runs in them.
   */
  private async executeUpdate(job: UpdateJob, signal: AbortSignal): Promise<JobOutcome> {
    const { serviceLog, rows, events } = this.deps;
    const log = (level: 'info' | 'error', line: string) => {
      serviceLog.write({ serviceId: job.serviceId, serviceName: job.serviceName, phase: 'install', level, message: line });
      return this.tasks.log(job.taskId, serviceLog.redact(line));
    };
    const before = await rows.byId(job.serviceId);
    const dir = packageDirOf(this.deps.dataDir, job.plan.kind, job.serviceName);
    const next = `${dir}.next`;
    const previous = `${dir}.previous`;
    let swapped = false;
    try {
      if (!before) throw new InstallError('install.service_removed');
      await this.tasks.setStatus(job.taskId, 'installing');
      const installed = await this.installPackage(job.plan, next, (line) => void log('info', line).catch(() => undefined), signal);
      if (signal.aborted) throw new InstallError('install.shutting_down');
      if (before.version && installed.version === before.version) {
        // Already the newest release (decision 0054): the running files and process stay as they are.
        rmSync(next, { recursive: true, force: true });
        await log('info', `${installed.manifest.identifier}@${installed.version} is already the latest version: nothing changed`);
        await this.tasks.finish(job.taskId, 'completed', '', {
          service_id: job.serviceId,
          version: installed.version,
          already_latest: true,
          name: before.display_name || before.name,
        });
        return { ok: true, error: '', version: installed.version };
      }
      await log('info', `Installed ${installed.manifest.identifier}@${installed.version} (was ${before.version || 'unknown'})`);
      rmSync(previous, { recursive: true, force: true });
      if (existsSync(dir)) renameSync(dir, previous);
      renameSync(next, dir);
      swapped = true;
      // The paths are relative to the install directory, which the new files now occupy.
      await rows.update(job.serviceId, {
        command: relativeToInstallDir(next, installed.command),
        args_json: JSON.stringify(installed.args.map((arg) => relativeToInstallDir(next, arg))),
        version: installed.version,
        install_dir: storedInstallDir(this.deps.dataDir, dir),
        health_status: 'unknown',
        health_details: '',
        updated_at: Date.now(),
      });
      // The gateway restarts the service on the new files (a running one as a changed configuration does).
      events.emit({ type: 'service.changed', serviceId: job.serviceId });
      await log('info', 'Restarting the server and completing the MCP handshake (initialize, tools/list)…');
      const health = await handshakeWithin(this.deps.gateway.checkHealth(job.serviceId), this.timeouts.handshakeMs);
      if (health.status !== 'healthy') throw new InstallError('install.handshake_failed', {}, health.details);
      const toolCount = health.toolCount ?? 0;
      await log('info', `Updated to ${installed.version}: ${toolCount} tools`);
      void drainProcessesIn(previous, 10_000).then(() => rmSync(previous, { recursive: true, force: true }));
      await this.tasks.finish(job.taskId, 'completed', '', {
        service_id: job.serviceId,
        tool_count: toolCount,
        version: installed.version,
      });
      return { ok: true, error: '', toolCount, version: installed.version };
    } catch (err) {
      const { text: reason, reason: cause } = failureOf(err, signal.aborted, (text) => serviceLog.redact(text));
      await log('error', `Update failed: ${reason}`);
      if (swapped && before) {
        // Back to what ran before: its files and its row.
        rmSync(next, { recursive: true, force: true });
        renameSync(dir, next);
        renameSync(previous, dir);
        await rows.update(job.serviceId, {
          command: before.command,
          args_json: before.args_json,
          version: before.version,
          health_status: 'unknown',
          updated_at: Date.now(),
        });
        events.emit({ type: 'service.changed', serviceId: job.serviceId });
        void drainProcessesIn(next, 10_000).then(() => rmSync(next, { recursive: true, force: true }));
        await log('info', `Kept version ${before.version}`);
      } else {
        rmSync(next, { recursive: true, force: true });
      }
      await this.tasks.finish(job.taskId, 'failed', reason, cause ? { reason: cause } : {});
      return { ok: false, error: reason, ...(cause ? { reason: cause } : {}) };
    }
  }

  private async installPackage(
    plan: PackagePlan,
    dir: string,
    onLine: (line: string) => void,
    signal: AbortSignal,
  ): Promise<InstalledPackage> {
    // A directory left by an earlier, interrupted attempt must not mix with this one.
    rmSync(dir, { recursive: true, force: true });
    const registry = plan.kind === 'npm' ? await this.deps.registries.npm() : this.deps.registries.pypi;
    const opts = { dir, registry, timeoutMs: this.timeouts.installMs, log: onLine, signal };
    onLine(
      `Installing ${plan.kind === 'npm' ? 'npm' : 'PyPI'} package ${plan.identifier}${plan.version ? `@${plan.version}` : ' (latest)'} into ${dir}`,
    );
    const installed = plan.kind === 'npm' ? await installNpm(plan, opts) : await installPypi(plan, opts);
    writeFileSync(path.join(dir, MANIFEST_FILE), `${JSON.stringify(installed.manifest, null, 2)}\n`);
    return installed;
  }
}

/**
 * Keeps a service whose install failed, switched off with the reason as its health details: nothing
 * restarts it, the console shows why and offers to remove it. Its processes and files go. A reason in
 * words of ours is stored as a message (`storedText`), which the services API says in each reader's language.
 */
export async function disableService(
  { rows, dataDir, events }: { rows: ServiceRows; dataDir: string; events?: ConfigEvents },
  serviceId: number,
  stored: string,
  reason: string | MessageData,
): Promise<void> {
  if (!(await rows.byId(serviceId))) return;
  await rows.update(serviceId, {
    enabled: 0,
    health_status: INSTALL_FAILED,
    health_details: typeof reason === 'string' ? reason.slice(0, 4000) : storedText(reason),
    last_health_check: Date.now(),
    updated_at: Date.now(),
  });
  // The gateway stops whatever it started for it during the handshake.
  events?.emit({ type: 'service.changed', serviceId });
  const dir = resolveInstallDir(dataDir, stored);
  const dirs = [path.join(dataDir, 'services', String(serviceId)), ...(dir ? [dir] : [])];
  for (const d of dirs) await drainProcessesIn(d, 10_000);
  if (dir) rmSync(dir, { recursive: true, force: true });
}

/**
 * Deletes a service that never finished installing: the row (the gateway drops anything it
 * started for it), every process still running in its install directory, and its files.
 */
export async function discardService(
  { rows, dataDir }: { rows: ServiceRows; dataDir: string },
  serviceId: number,
  stored: string,
): Promise<void> {
  const dir = resolveInstallDir(dataDir, stored);
  if (await rows.byId(serviceId)) await rows.remove(serviceId);
  const dirs = [path.join(dataDir, 'services', String(serviceId)), ...(dir ? [dir] : [])];
  for (const d of dirs) await drainProcessesIn(d, 10_000);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
}
