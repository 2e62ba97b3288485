import { type Kysely, sql } from 'kysely';
import type { Logger } from 'pino';
import type { Db } from '../../db/db.js';
import { isPostgres } from '../../db/migrations/helpers.js';
import type { Database } from '../../db/schema.js';
import { dayIn } from '../../infra/day.js';
import type { Leadership } from '../../infra/leader.js';
import type { OptionsService } from '../options/index.js';

const DAY_MS = 86_400_000;

/**
 * PostgreSQL session advisory lock held by the replica that purges: the others skip the round.
 * Taken on a connection of its own for the whole run and released (or dropped with the connection).
 */
const PURGE_LOCK = 746_150_302;

export interface RetentionSettings {
  /** Between two runs. Default one hour. */
  intervalMs?: number;
  /** Before the first run after start. Default ten minutes, so short-lived processes (tests, CLI) never purge. */
  firstRunMs?: number;
  /** Rows per DELETE statement. Default 5,000: a short write lock each, other writers get in between. */
  batchSize?: number;
  /** Pause between two batches. Default 20 ms. */
  pauseMs?: number;
  /** The clock, for tests. */
  now?: () => number;
  /** Called after each batch with the table and rows deleted; for tests. */
  onBatch?: (table: string, deleted: number) => void | Promise<void>;
  /**
   * Several replicas: the scheduled runs happen on the leader only (and on every replica while
   * Redis is away and nobody leads: the advisory lock still lets one purge at a time). Unset: always.
   */
  leader?: Pick<Leadership, 'runs'>;
}

export interface PurgeReport {
  requestRecords: number;
  serviceLogs: number;
  installTasks: number;
  installLogLines: number;
  /** Audit entries (modules/audit), kept as long as the request records. */
  auditEntries: number;
  /** The run ended early because the job was closed. */
  stopped: boolean;
}

/**
 * The retention purge (preferences RequestRecordRetentionDays, ServiceLogRetentionDays,
 * InstallLogRetentionDays; 0 keeps everything). Runs in the background at an interval, deletes in
 * small batches, and stops between two batches when the app closes. With several replicas the
 * scheduled runs happen on the leader (infra/leader.ts), and on PostgreSQL only the one holding the
 * advisory lock works, a second guard for a change of leader mid-run; SQLite has a single instance.
 *
 * - Request records go a whole day (server time zone) at a time, once every record of the day is
 *   older than the retention: the daily rollups stay (they are small), so analytics of any range
 *   still work, and every day that still has records has all of them (the logs screen counts
 *   records from the rollups).
 * - Audit entries older than the request records' retention (RequestRecordRetentionDays).
 * - Service log lines older than the retention.
 * - Install tasks finished before the retention, with their log lines; unfinished tasks stay.
 */
export class HistoryRetention {
  private timer: NodeJS.Timeout | undefined;
  private current: Promise<PurgeReport | 'busy'> | undefined;
  private closed = false;
  private readonly s: Required<Omit<RetentionSettings, 'onBatch' | 'leader'>> & Pick<RetentionSettings, 'onBatch' | 'leader'>;

  constructor(
    private readonly db: Db,
    private readonly options: Pick<OptionsService, 'get'>,
    private readonly logger: Logger,
    settings: RetentionSettings = {},
  ) {
    this.s = {
      intervalMs: settings.intervalMs ?? 3_600_000,
      firstRunMs: settings.firstRunMs ?? 600_000,
      batchSize: settings.batchSize ?? 5000,
      pauseMs: settings.pauseMs ?? 20,
      now: settings.now ?? Date.now,
      onBatch: settings.onBatch,
      leader: settings.leader,
    };
  }

  /** Schedules the runs; the timers never hold the process open. */
  start(): void {
    if (this.closed || this.timer) return;
    this.schedule(this.s.firstRunMs);
  }

  private schedule(ms: number): void {
    this.timer = setTimeout(() => {
      this.timer = undefined;
      const leads = this.s.leader?.runs('guarded') ?? true;
      void (leads ? this.runOnce() : Promise.resolve())
        .catch((err) => this.logger.error({ err }, 'history retention purge failed'))
        .finally(() => {
          if (!this.closed) this.schedule(this.s.intervalMs);
        });
    }, ms);
    this.timer.unref();
  }

  /** Stops the timer and waits for a run in progress to stop after its current batch. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.current?.catch(() => undefined);
  }

  /** One purge now; `busy` when another replica (or a run of this one) is purging; nothing once closed. */
  runOnce(): Promise<PurgeReport | 'busy'> {
    if (this.closed)
      return Promise.resolve({ requestRecords: 0, serviceLogs: 0, installTasks: 0, installLogLines: 0, auditEntries: 0, stopped: true });
    if (this.current) return Promise.resolve('busy');
    const run = this.exclusively((db) => this.purge(db)).finally(() => {
      this.current = undefined;
    });
    this.current = run;
    return run;
  }

  private async exclusively(work: (db: Kysely<Database>) => Promise<PurgeReport>): Promise<PurgeReport | 'busy'> {
    if (!isPostgres(this.db)) return work(this.db);
    // A session lock needs one connection for the whole run: every batch runs on it.
    return this.db.connection().execute(async (conn) => {
      const got = await sql<{ got: boolean }>`SELECT pg_try_advisory_lock(${PURGE_LOCK}::bigint) AS got`.execute(conn);
      if (!got.rows[0]?.got) return 'busy' as const;
      try {
        return await work(conn);
      } finally {
        await sql`SELECT pg_advisory_unlock(${PURGE_LOCK}::bigint)`.execute(conn);
      }
    });
  }

  private days(key: 'RequestRecordRetentionDays' | 'ServiceLogRetentionDays' | 'InstallLogRetentionDays'): number {
    const n = Number(this.options.get(key));
    return Number.isInteger(n) && n > 0 ? n : 0;
  }

  private async purge(db: Kysely<Database>): Promise<PurgeReport> {
    const report: PurgeReport = { requestRecords: 0, serviceLogs: 0, installTasks: 0, installLogLines: 0, auditEntries: 0, stopped: false };
    const now = this.s.now();

    const recordDays = this.days('RequestRecordRetentionDays');
    if (recordDays > 0) {
      // Days before the one that contains "now - retention": each of their records is older than that.
      const keepFrom = dayIn(this.options.get('TimeZone'), now - recordDays * DAY_MS);
      report.requestRecords = await this.batches('request_records', () =>
        db
          .deleteFrom('request_records')
          .where('id', 'in', (eb) => eb.selectFrom('request_records').select('id').where('day', '<', keepFrom).limit(this.s.batchSize))
          .executeTakeFirst(),
      );
    }

    // The audit trail (decision 0049) follows the history: entries older than the request records' retention.
    if (recordDays > 0 && !this.closed) {
      const before = now - recordDays * DAY_MS;
      report.auditEntries = await this.batches('audit_entries', () =>
        db
          .deleteFrom('audit_entries')
          .where('id', 'in', (eb) => eb.selectFrom('audit_entries').select('id').where('created_at', '<', before).limit(this.s.batchSize))
          .executeTakeFirst(),
      );
    }

    const logDays = this.days('ServiceLogRetentionDays');
    if (logDays > 0 && !this.closed) {
      const before = now - logDays * DAY_MS;
      report.serviceLogs = await this.batches('service_logs', () =>
        db
          .deleteFrom('service_logs')
          .where('id', 'in', (eb) => eb.selectFrom('service_logs').select('id').where('created_at', '<', before).limit(this.s.batchSize))
          .executeTakeFirst(),
      );
    }

    const installDays = this.days('InstallLogRetentionDays');
    if (installDays > 0 && !this.closed) {
      const before = now - installDays * DAY_MS;
      while (!this.closed) {
        const tasks = await db
          .selectFrom('install_tasks')
          .select('id')
          .where('finished_at', 'is not', null)
          .where('finished_at', '<', before)
          .orderBy('finished_at')
          .limit(100)
          .execute();
        if (tasks.length === 0) break;
        const ids = tasks.map((t) => t.id);
        // The lines first, in batches (a task may have thousands), then the tasks themselves.
        report.installLogLines += await this.batches('install_task_logs', () =>
          db
            .deleteFrom('install_task_logs')
            .where('id', 'in', (eb) => eb.selectFrom('install_task_logs').select('id').where('task_id', 'in', ids).limit(this.s.batchSize))
            .executeTakeFirst(),
        );
        if (this.closed) break;
        const done = await db.deleteFrom('install_tasks').where('id', 'in', ids).executeTakeFirst();
        report.installTasks += Number(done.numDeletedRows);
        await this.s.onBatch?.('install_tasks', Number(done.numDeletedRows));
      }
    }

    report.stopped = this.closed;
    const total = report.requestRecords + report.serviceLogs + report.installTasks + report.installLogLines + report.auditEntries;
    if (total > 0) this.logger.info({ ...report }, 'history retention purge');
    return report;
  }

  /** Runs `step` until it deletes less than a batch or the job is closed; the rows deleted. */
  private async batches(table: string, step: () => Promise<{ numDeletedRows: bigint }>): Promise<number> {
    let deleted = 0;
    while (!this.closed) {
      const n = Number((await step()).numDeletedRows);
      deleted += n;
      await this.s.onBatch?.(table, n);
      if (n < this.s.batchSize) break;
      await new Promise((resolve) => setTimeout(resolve, this.s.pauseMs));
    }
    return deleted;
  }
}
