import type { InstallStatus } from '@toolport/contract';
import type { Db } from '../../../db/db.js';
import { translate } from '../../../i18n/index.js';
import { type MessageData, messageDataFrom, readStoredText, sayMessage, type Translator } from '../../../i18n/localised-error.js';
import { randomToken } from '../../../infra/secrets.js';

export type InstallTaskStatus = InstallStatus['status'];

/** How often a running task proves it is alive, and after how long without proof it counts as interrupted. */
export const TASK_HEARTBEAT_MS = 10_000;
export const TASK_STALE_MS = 45_000;

export interface TaskRow {
  id: string;
  kind: string;
  serviceId: number | null;
  status: InstallTaskStatus;
  errorMessage: string;
  resultJson: string;
}

/**
 * Install tasks and their log lines, stored so a late poller or a restart loses nothing (docs/api.md,
 * install_status). Lines of one task are written in order: each task has its own write chain and sequence.
 */
export class InstallTasks {
  private readonly chains = new Map<string, { seq: number; tail: Promise<void> }>();
  /** Tasks this process is running: their `updated_at` is refreshed so other processes see them alive. */
  private readonly running = new Set<string>();
  private heartbeat: NodeJS.Timeout | undefined;

  constructor(private readonly db: Db) {}

  private track(taskId: string): void {
    this.running.add(taskId);
    if (this.heartbeat) return;
    this.heartbeat = setInterval(() => void this.beat(), TASK_HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  private untrack(taskId: string): void {
    this.running.delete(taskId);
    if (this.running.size > 0 || !this.heartbeat) return;
    clearInterval(this.heartbeat);
    this.heartbeat = undefined;
  }

  private async beat(): Promise<void> {
    if (this.running.size === 0) return;
    await this.db
      .updateTable('install_tasks')
      .set({ updated_at: Date.now() })
      .where('id', 'in', [...this.running])
      .where('finished_at', 'is', null)
      .execute()
      .catch(() => undefined);
  }

  async create(opts: {
    kind: string;
    serviceId: number | null;
    createdBy: number | null;
    payload?: unknown;
    status?: InstallTaskStatus;
  }): Promise<string> {
    const id = randomToken(16);
    const now = Date.now();
    await this.db
      .insertInto('install_tasks')
      .values({
        id,
        kind: opts.kind,
        service_id: opts.serviceId,
        status: opts.status ?? 'pending',
        error_message: '',
        payload_json: JSON.stringify(opts.payload ?? {}),
        result_json: '{}',
        created_by: opts.createdBy,
        created_at: now,
        updated_at: now,
      })
      .execute();
    this.chains.set(id, { seq: 0, tail: Promise.resolve() });
    this.track(id);
    return id;
  }

  /** Appends one line; resolves once it is stored. */
  log(taskId: string, line: string): Promise<void> {
    let chain = this.chains.get(taskId);
    if (!chain) {
      // A task created by another process (or before a restart): continue after its last line.
      const start = this.db
        .selectFrom('install_task_logs')
        .select((eb) => eb.fn.max('seq').as('seq'))
        .where('task_id', '=', taskId)
        .executeTakeFirst()
        .then((row) => {
          if (chain) chain.seq = Number(row?.seq ?? 0);
        });
      chain = { seq: 0, tail: start };
      this.chains.set(taskId, chain);
    }
    const c = chain;
    // One failed insert must not stop the lines after it.
    c.tail = c.tail
      .catch(() => undefined)
      .then(async () => {
        c.seq += 1;
        await this.db
          .insertInto('install_task_logs')
          .values({ task_id: taskId, seq: c.seq, line: line.slice(0, 8000), created_at: Date.now() })
          .execute();
      });
    return c.tail;
  }

  async finish(taskId: string, status: 'completed' | 'failed', error = '', result: unknown = {}): Promise<void> {
    await this.chains.get(taskId)?.tail.catch(() => undefined);
    const now = Date.now();
    await this.db
      .updateTable('install_tasks')
      .set({ status, error_message: error.slice(0, 4000), result_json: JSON.stringify(result), updated_at: now, finished_at: now })
      .where('id', '=', taskId)
      .execute();
    this.chains.delete(taskId);
    this.untrack(taskId);
  }

  async setStatus(taskId: string, status: InstallTaskStatus): Promise<void> {
    await this.db.updateTable('install_tasks').set({ status, updated_at: Date.now() }).where('id', '=', taskId).execute();
  }

  /** The task keeps its logs when the service it made is deleted (a failed install). */
  async detachService(taskId: string): Promise<void> {
    await this.db.updateTable('install_tasks').set({ service_id: null }).where('id', '=', taskId).execute();
  }

  /** The newest unfinished task of a service, if any. */
  async activeFor(serviceId: number): Promise<TaskRow | undefined> {
    const row = await this.db
      .selectFrom('install_tasks')
      .selectAll()
      .where('service_id', '=', serviceId)
      .where('status', 'in', ['pending', 'installing'])
      .orderBy('created_at', 'desc')
      .executeTakeFirst();
    return row && toTaskRow(row);
  }

  async get(taskId: string): Promise<TaskRow | undefined> {
    const row = await this.db.selectFrom('install_tasks').selectAll().where('id', '=', taskId).executeTakeFirst();
    return row && toTaskRow(row);
  }

  /** Unfinished tasks nobody has touched since `before`: their process is gone. */
  async stale(before: number): Promise<TaskRow[]> {
    const rows = await this.db
      .selectFrom('install_tasks')
      .selectAll()
      .where('status', 'in', ['pending', 'installing'])
      .where('updated_at', '<', before)
      .execute();
    return rows.filter((r) => !this.running.has(r.id)).map(toTaskRow);
  }

  /**
   * Takes an interrupted task over, once: a compare-and-set on its heartbeat column, so that of two
   * processes sweeping at once (during a change of leader) only one recovers it.
   */
  async claim(taskId: string, staleBefore: number, now: number): Promise<boolean> {
    const claimed = await this.db
      .updateTable('install_tasks')
      .set({ updated_at: now })
      .where('id', '=', taskId)
      .where('finished_at', 'is', null)
      .where('updated_at', '<', staleBefore)
      .executeTakeFirst();
    return Number(claimed.numUpdatedRows) === 1;
  }

  /** Log lines after `seq`, in order (event streams follow a task with this). */
  linesAfter(taskId: string, seq: number): Promise<{ seq: number; line: string }[]> {
    return this.db
      .selectFrom('install_task_logs')
      .select(['seq', 'line'])
      .where('task_id', '=', taskId)
      .where('seq', '>', seq)
      .orderBy('seq', 'asc')
      .execute();
  }

  /** Stops refreshing tasks (the app is closing). */
  close(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = undefined;
    this.running.clear();
  }

  /**
   * `translate`: a failure whose cause is in words of ours (the registry does not know the package, npm
   * exited with a code) is said in the caller's language; the install tool's own output in it stays as it is.
   */
  async status(taskId: string, translate?: Translator): Promise<InstallStatus | undefined> {
    const task = await this.db.selectFrom('install_tasks').selectAll().where('id', '=', taskId).executeTakeFirst();
    if (!task) return undefined;
    const lines = await this.db
      .selectFrom('install_task_logs')
      .select('line')
      .where('task_id', '=', taskId)
      .orderBy('seq', 'asc')
      .execute();
    const result = parseResult(task.result_json);
    const error = !translate
      ? task.error_message
      : result.reason
        ? sayMessage(result.reason, translate)
        : readStoredText(task.error_message, translate);
    return {
      task_id: task.id,
      kind: task.kind,
      service_id: task.service_id,
      status: task.status as InstallTaskStatus,
      logs: lines.map((l) => l.line),
      error_message: error,
      error,
      created_at: task.created_at,
      finished_at: task.finished_at,
      ...(task.status === 'completed' && typeof result.version === 'string' && result.version ? { version: result.version } : {}),
      // An Update that found the newest release already running changed nothing (decision 0054).
      ...(task.status === 'completed' && result.alreadyLatest && typeof result.version === 'string'
        ? {
            already_latest: true,
            message: (translate ?? inEnglish)('service.already_latest', { name: result.name ?? '', version: result.version }),
          }
        : {}),
    };
  }
}

/** What a finished task recorded: the version installed, or the cause of its failure. */
const inEnglish: Translator = (key, params) => translate('en', key, params);

function parseResult(json: string): { version?: unknown; reason?: MessageData; alreadyLatest?: boolean; name?: string } {
  try {
    const parsed = JSON.parse(json || '{}') as { version?: unknown; reason?: unknown; already_latest?: unknown; name?: unknown };
    const reason = messageDataFrom(parsed.reason);
    return {
      version: parsed.version,
      ...(reason ? { reason } : {}),
      ...(parsed.already_latest === true ? { alreadyLatest: true, name: typeof parsed.name === 'string' ? parsed.name : '' } : {}),
    };
  } catch {
    return {};
  }
}

const toTaskRow = (r: {
  id: string;
  kind: string;
  service_id: number | null;
  status: string;
  error_message: string;
  result_json: string;
}): TaskRow => ({
  id: r.id,
  kind: r.kind,
  serviceId: r.service_id,
  status: r.status as InstallTaskStatus,
  errorMessage: r.error_message,
  resultJson: r.result_json,
});
