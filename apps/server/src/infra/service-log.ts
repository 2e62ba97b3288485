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

/**
 * The service log (console Logs screen): installs, process stderr, upstream failures. Writes are
 * batched so a chatty process costs one insert per half second, capped so a flood cannot exhaust
 * memory (dropped lines are counted and reported), and redacted: `key=` query values, bearer tokens
 * and any value registered as secret never reach the table.
 */
export class ServiceLog {
  private pending: ServiceLogEntry[] = [];
  private dropped = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly secrets = new Set<string>();
  private flushing: Promise<void> = Promise.resolve();

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
    return out.length > MAX_MESSAGE ? `${out.slice(0, MAX_MESSAGE)}…` : out;
  }

  write(entry: ServiceLogEntry): void {
    if (this.pending.length >= MAX_PENDING) {
      this.dropped += 1;
      return;
    }
    this.pending.push({ ...entry, message: this.redact(entry.message) });
    this.timer ??= setTimeout(() => void this.flush(), FLUSH_MS);
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
      });
      this.dropped = 0;
    }
    if (batch.length === 0) return this.flushing;
    const now = Date.now();
    const rows = batch.map((e) => ({
      created_at: now,
      service_id: e.serviceId,
      service_name: e.serviceName,
      phase: e.phase,
      level: e.level,
      message: e.message,
    }));
    this.flushing = this.flushing
      .then(async () => {
        for (let i = 0; i < rows.length; i += 200)
          await this.db
            .insertInto('service_logs')
            .values(rows.slice(i, i + 200))
            .execute();
      })
      .catch((err) => this.logger.error({ err }, 'service log write failed'));
    return this.flushing;
  }
}
