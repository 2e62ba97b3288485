import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { Db } from '../db/db.js';
import { redactUrl } from './logger.js';

export interface ServiceLogEntry {
  serviceId: number | null;
  serviceName: string;
  phase: 'install' | 'run';
  level: 'info' | 'warn' | 'error';
  message: string;
}

const MAX_MESSAGE = 4000;
const FLUSH_MS = 500;
const MAX_PENDING = 5000;
/** After a failed write (the database away a while), the next attempt waits this long at most. */
const MAX_RETRY_MS = 10_000;

/**
 * The service log (console Logs screen): installs, process stderr, upstream failures. Writes are
 * batched so a chatty process costs one insert per half second, capped so a flood cannot exhaust
 * memory (dropped lines are counted and reported), and redacted: `key=` query values, bearer tokens
 * and any value registered as secret never reach the table. A batch the database refused (an outage)
 * is kept and written again later, with the lines that came meanwhile, within the same cap.
 */
export class ServiceLog {
  /** Lines not yet written, each with the time it was written here. */
  private pending: (ServiceLogEntry & { at: number })[] = [];
  private dropped = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly secrets = new Set<string>();
  private flushing: Promise<void> = Promise.resolve();
  /** Consecutive failed writes, for the retry delay; 0 when the last write went through. */
  private failures = 0;

  constructor(
    private readonly db: Db,
    private readonly logger: Logger,
  ) {}

  /** Values that must never appear in a log line (secret variable values, header values). */
  registerSecrets(values: Iterable<string>): void {
    for (const v of values) if (v && v.length >= 4) this.secrets.add(v);
  }

  redact(message: string): string {
    let out = redactUrl(message).replace(/(bearer\s+)[A-Za-z0-9._~+/=-]+/gi, '$1[REDACTED]');
    for (const s of this.secrets) if (out.includes(s)) out = out.split(s).join('[REDACTED]');
    // PostgreSQL text cannot hold NUL.
    out = out.replaceAll('\u0000', '');
    return out.length > MAX_MESSAGE ? `${out.slice(0, MAX_MESSAGE)}…` : out;
  }

  write(entry: ServiceLogEntry): void {
    if (this.pending.length >= MAX_PENDING) {
      this.dropped += 1;
      return;
    }
    this.pending.push({ ...entry, message: this.redact(entry.message), at: Date.now() });
    this.schedule();
  }

  private schedule(): void {
    const delay = this.failures === 0 ? FLUSH_MS : Math.min(FLUSH_MS * 2 ** this.failures, MAX_RETRY_MS);
    this.timer ??= setTimeout(() => void this.flush(), delay);
  }

  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.pending;
    this.pending = [];
    if (this.dropped > 0) {
      batch.push({
        serviceId: null,
        serviceName: '',
        phase: 'run',
        level: 'warn',
        message: `${this.dropped} log lines dropped (too many at once)`,
        at: Date.now(),
      });
      this.dropped = 0;
    }
    if (batch.length === 0) return this.flushing;
    const rows = batch.map((e) => ({
      created_at: e.at,
      service_id: e.serviceId,
      service_name: e.serviceName,
      phase: e.phase,
      level: e.level,
      message: e.message,
    }));
    this.flushing = this.flushing.then(async () => {
      let written = 0;
      try {
        for (; written < rows.length; written += 200)
          await this.db
            .insertInto('service_logs')
            .values(rows.slice(written, written + 200))
            .execute();
        this.failures = 0;
      } catch (err) {
        // The database answers, so these lines themselves are refused: keeping them would block the log.
        if (await this.reachable()) {
          this.logger.error({ err, lines: rows.length - written }, 'service log lines refused by the database, dropped');
          return;
        }
        // The database is away: kept for the next attempt, oldest first, within the cap.
        this.failures += 1;
        if (this.failures === 1) this.logger.error({ err }, 'service log write failed; the lines are kept and written again later');
        const unwritten = batch.slice(written);
        const room = Math.max(0, MAX_PENDING - this.pending.length);
        this.dropped += Math.max(0, unwritten.length - room);
        this.pending = [...unwritten.slice(0, room), ...this.pending];
        this.schedule();
      }
    });
    return this.flushing;
  }

  private async reachable(): Promise<boolean> {
    try {
      await sql`select 1`.execute(this.db);
      return true;
    } catch {
      return false;
    }
  }
}
