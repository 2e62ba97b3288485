import path from 'node:path';
import type {
  BatchProgressEvent,
  CustomServiceRequest,
  CustomServiceResult,
  PortableGroup,
  PortableServiceSettings,
  ToolportSettings,
} from '@toolport/contract';
import type { Logger } from 'pino';
import { AppError } from '../../../http/errors.js';
import type { Principal } from '../../../http/principals.js';
import { type Locale, type MessageKey, type MessageParams, translate } from '../../../i18n/index.js';
import { sayMessage } from '../../../i18n/localised-error.js';
import type { ServiceRows } from '../../services/index.js';
import type { InstallTarget } from '../install/installer.js';
import type { InstallLifecycle } from '../install/lifecycle.js';
import { findExecutable, isExecutableFile } from '../installers/path-lookup.js';
import { planFromNpx, planFromUvx } from '../installers/runner-args.js';
import { InstallError, type PackagePlan } from '../installers/types.js';
import type { BatchEntry } from './config.js';

export type BatchItem = Extract<BatchProgressEvent, { name: string }>;
export type BatchSummary = { success: number; skipped: number; failed: number };
type Translate = (key: MessageKey, params?: MessageParams) => string;

/**
 * Where a document's `toolport` block goes (the exposure module's ExposureTransfer): a new service's tool
 * overrides and access, and the groups. Each answer says what could not be matched on this instance.
 */
export interface SettingsTransfer {
  applyService(service: { id: number; name: string }, settings: PortableServiceSettings, t: Translate): Promise<string[]>;
  importGroup(
    group: PortableGroup,
    serviceIds: Map<string, number>,
    caller: Principal,
    t: Translate,
  ): Promise<{ status: 'success' | 'skipped' | 'failed'; message: string; warnings: string[] }>;
}

/** Quotes a word for the custom-service command line (single quotes, taken literally). */
const quote = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`;

const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** `npx` or `uvx`, also when written as a path (`/usr/local/bin/npx`). */
function runnerOf(command: string): 'npx' | 'uvx' | '' {
  const base = path.basename(command).replace(/\.(cmd|exe)$/i, '');
  return base === 'npx' || base === 'uvx' ? base : '';
}

/**
 * Imports the entries of an `mcpServers` document one after the other, reporting each as
 * success, skipped (a service of that name exists) or failed, then `done` with the counts.
 * `npx …` and `uvx …` entries are installed like marketplace installs (pinned into
 * DATA_DIR/packages, handshake included); other commands and URLs become custom services.
 */
export class BatchImporter {
  constructor(
    private readonly deps: {
      installs: Pick<InstallLifecycle, 'tasks' | 'installer' | 'custom'>;
      rows: Pick<ServiceRows, 'byName' | 'update'>;
      logger: Logger;
      /** Without it a document's groups are reported skipped (the `toolport import` command). */
      transfer?: SettingsTransfer;
    },
  ) {}

  /** Creates the batch task and runs it in the background; progress goes to the task's log, one JSON event per line. */
  async start(caller: Principal, entries: BatchEntry[], locale: Locale, settings?: ToolportSettings): Promise<string> {
    const groups = settings?.groups ?? [];
    const taskId = await this.deps.installs.tasks.create({
      kind: 'batch',
      serviceId: null,
      createdBy: caller.id,
      status: 'installing',
      payload: { total: entries.length + groups.length, names: [...entries.map((e) => e.name), ...groups.map((g) => g.name)] },
    });
    void this.run(taskId, caller, entries, locale, undefined, settings).catch(async (err) => {
      this.deps.logger.error({ err, taskId }, 'batch import failed');
      await this.deps.installs.tasks.finish(taskId, 'failed', errorText(err)).catch(() => undefined);
    });
    return taskId;
  }

  /** Creates the batch task and runs it to the end (the `toolport import` command). */
  async importAll(
    caller: Principal,
    entries: BatchEntry[],
    locale: Locale,
    onEvent?: (e: BatchProgressEvent) => void,
    settings?: ToolportSettings,
  ): Promise<BatchSummary> {
    const taskId = await this.deps.installs.tasks.create({ kind: 'batch', serviceId: null, createdBy: caller.id, status: 'installing' });
    return this.run(taskId, caller, entries, locale, onEvent, settings);
  }

  /** Runs every entry; `onEvent` sees each event as it is stored. */
  private async run(
    taskId: string,
    caller: Principal,
    entries: BatchEntry[],
    locale: Locale,
    onEvent?: (e: BatchProgressEvent) => void,
    settings?: ToolportSettings,
  ): Promise<BatchSummary> {
    const t = (key: MessageKey, params?: MessageParams) => translate(locale, key, params);
    const summary: BatchSummary = { success: 0, skipped: 0, failed: 0 };
    const seen = new Set<string>();
    const emit = async (event: BatchProgressEvent) => {
      await this.deps.installs.tasks.log(taskId, JSON.stringify(event));
      onEvent?.(event);
    };
    for (const entry of entries) {
      let item: BatchItem;
      try {
        item = await this.importOne(entry, seen, caller, t);
      } catch (err) {
        const message = err instanceof AppError ? t(err.key, err.params) : errorText(err);
        item = { name: entry.name, status: 'failed', message: t('market.batch_item_failed', { reason: message }) };
      }
      seen.add(entry.name);
      const own = settings?.services?.[entry.name];
      if (own) item = await this.withSettings(item, own, t);
      summary[item.status] += 1;
      await emit(item);
    }
    for (const group of settings?.groups ?? []) {
      const item = await this.importGroup(group, caller, t);
      summary[item.status] += 1;
      await emit(item);
    }
    await emit({ status: 'done', summary });
    await this.deps.installs.tasks.finish(taskId, 'completed', '', summary);
    return summary;
  }

  /**
   * A service this import created gets the document's overrides and access; an existing one keeps
   * its own, and the item says so.
   */
  private async withSettings(item: BatchItem, settings: PortableServiceSettings, t: Translate): Promise<BatchItem> {
    if (item.status === 'failed') return item;
    const row = item.status === 'success' ? await this.deps.rows.byName(item.name) : undefined;
    if (!row || !this.deps.transfer) {
      return { ...item, warnings: [...(item.warnings ?? []), t('market.batch_settings_not_applied', { name: item.name })] };
    }
    try {
      const [summary, ...warnings] = await this.deps.transfer.applyService({ id: row.id, name: row.name }, settings, t);
      return {
        ...item,
        message: `${item.message}. ${summary}`,
        ...(warnings.length > 0 ? { warnings: [...(item.warnings ?? []), ...warnings] } : {}),
      };
    } catch (err) {
      const reason = err instanceof AppError ? t(err.key, err.params) : errorText(err);
      return { ...item, warnings: [...(item.warnings ?? []), t('market.batch_item_failed', { reason })] };
    }
  }

  /** A group of the document, its members looked up by service name on this instance. */
  private async importGroup(group: PortableGroup, caller: Principal, t: Translate): Promise<BatchItem> {
    const base = { name: group.name, kind: 'group' as const };
    if (!this.deps.transfer) return { ...base, status: 'skipped', message: t('market.batch_group_not_here') };
    const ids = new Map<string, number>();
    for (const m of group.members) {
      const row = await this.deps.rows.byName(m.service);
      if (row) ids.set(m.service, row.id);
    }
    try {
      const outcome = await this.deps.transfer.importGroup(group, ids, caller, t);
      return {
        ...base,
        status: outcome.status,
        message: outcome.message,
        ...(outcome.warnings.length > 0 ? { warnings: outcome.warnings } : {}),
      };
    } catch (err) {
      return { ...base, status: 'failed', message: t('market.batch_item_failed', { reason: errorText(err) }) };
    }
  }

  private async importOne(
    entry: BatchEntry,
    seen: Set<string>,
    caller: Principal,
    t: (k: MessageKey, p?: MessageParams) => string,
  ): Promise<BatchItem> {
    const { name } = entry;
    const masked = entry.kind === 'invalid' ? [] : entry.masked;
    const keys = masked.join(', ');
    if (seen.has(name) || (await this.deps.rows.byName(name))) {
      // The existing service is left as it is: its stored values stay, the mask is never written over them.
      const message = t('market.batch_item_exists', { name });
      return { name, status: 'skipped', message: masked.length ? `${message}${t('market.batch_masked_kept', { keys })}` : message };
    }
    if (entry.kind === 'invalid') return { name, status: 'failed', message: t('market.batch_item_failed', { reason: entry.problem }) };
    const item = await this.importNew(entry, caller, t);
    if (!masked.length) return item;
    // Masked values are missing: a service that cannot run without them fails its first check (required); one
    // that runs is imported with them left empty (optional). Either way the report names them.
    if (item.status === 'failed') return { ...item, message: `${item.message}${t('market.batch_masked_required', { keys })}` };
    return { ...item, message: `${item.message}${t('market.batch_masked_empty', { keys })}` };
  }

  private async importNew(
    entry: Exclude<BatchEntry, { kind: 'invalid' }>,
    caller: Principal,
    t: (k: MessageKey, p?: MessageParams) => string,
  ): Promise<BatchItem> {
    const { name } = entry;
    if (entry.kind === 'openapi') {
      const result = await this.createCustom(caller, entry.displayName, {
        name,
        type: 'openapi',
        command: '',
        url: entry.url,
        document: entry.document,
        base_url: entry.baseUrl,
        ...(entry.filter ? { operation_filter: entry.filter } : {}),
        headers: entry.headers,
        environments: entry.env,
        description: entry.description,
        isolation: entry.isolation,
      });
      const where = entry.url || result.base_url || '';
      if (result.health_status && result.health_status !== 'healthy') {
        const reason = result.health_details || result.health_status;
        return {
          name,
          status: 'success',
          warning: true,
          message: t('market.batch_item_remote_unreachable', { name: result.name, url: where, reason }),
        };
      }
      return { name, status: 'success', message: t('market.batch_item_openapi', { name: result.name, count: result.tools?.length ?? 0 }) };
    }
    if (entry.kind === 'remote') {
      const result = await this.createCustom(caller, entry.displayName, {
        name,
        type: entry.transport,
        command: '',
        url: entry.url,
        headers: entry.headers,
        description: entry.description,
        isolation: entry.isolation,
      });
      // Created either way; one that does not answer its first check says so (issue 15).
      if (result.health_status && result.health_status !== 'healthy') {
        const reason = result.health_details || result.health_status;
        return {
          name,
          status: 'success',
          warning: true,
          message: t('market.batch_item_remote_unreachable', { name: result.name, url: entry.url, reason }),
        };
      }
      return { name, status: 'success', message: t('market.batch_item_remote', { name: result.name, url: entry.url }) };
    }
    const runner = runnerOf(entry.command);
    if (runner) return this.installPackage(entry, runner, caller.id, t);

    const executable = path.isAbsolute(entry.command) ? entry.command : findExecutable(entry.command);
    if (!executable || !isExecutableFile(executable)) {
      return { name, status: 'failed', message: t('market.batch_item_command_missing', { command: entry.command.slice(0, 200) }) };
    }
    await this.createCustom(caller, entry.displayName, {
      name,
      type: 'stdio',
      command: [executable, ...entry.args].map(quote).join(' '),
      url: '',
      environments: entry.env,
      description: entry.description,
      isolation: entry.isolation,
    });
    return { name, status: 'success', message: t('market.batch_item_custom', { command: executable }) };
  }

  private async installPackage(
    entry: Extract<BatchEntry, { kind: 'stdio' }>,
    runner: 'npx' | 'uvx',
    callerId: number,
    t: (k: MessageKey, p?: MessageParams) => string,
  ): Promise<BatchItem> {
    let plan: PackagePlan;
    try {
      plan = runner === 'npx' ? planFromNpx(entry.args) : planFromUvx(entry.args);
    } catch (err) {
      if (!(err instanceof InstallError)) throw err;
      return { name: entry.name, status: 'failed', message: t('market.batch_item_failed', { reason: sayMessage(err.data(), t) }) };
    }
    const target: InstallTarget = {
      name: entry.name,
      nameSeed: entry.name,
      displayName: entry.displayName,
      description: entry.description,
      source: plan.kind,
      packageManager: plan.kind === 'npm' ? 'npm' : 'uv',
      packageName: plan.identifier,
      marketSource: plan.kind,
      plan,
      envVars: [],
      isolation: entry.isolation,
      // Shown and exported as written; what runs is the installed executable.
      typedCommand: [runner, ...entry.args].map((w) => (/^[\w@%+=:,./-]+$/.test(w) ? w : quote(w))).join(' '),
    };
    const outcome = await this.deps.installs.installer.installAndWait(callerId, target, entry.env);
    const spec = `${plan.identifier}${plan.version ? `@${plan.version}` : ''}`;
    if (!outcome.ok) {
      const reason = outcome.reason ? sayMessage(outcome.reason, t) : outcome.error;
      return { name: entry.name, status: 'failed', message: t('market.batch_item_install_failed', { spec, reason }) };
    }
    return { name: entry.name, status: 'success', message: t('market.batch_item_installed', { spec, tools: outcome.toolCount ?? 0 }) };
  }

  /** A custom service as the custom install dialog would create it, with the entry's display name. */
  private async createCustom(caller: Principal, displayName: string, req: CustomServiceRequest): Promise<CustomServiceResult> {
    const created = await this.deps.installs.custom.create(caller, req);
    if (displayName && displayName !== created.display_name) {
      await this.deps.rows.update(created.service_id, { display_name: displayName, updated_at: Date.now() });
    }
    return created;
  }
}
