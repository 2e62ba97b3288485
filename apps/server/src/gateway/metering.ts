import type { Insertable } from 'kysely';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import { createClient } from 'redis';
import type { Db } from '../db/db.js';
import type { RequestRecordsTable } from '../db/schema.js';
import { dayIn } from '../infra/day.js';
import { storeRecords } from '../modules/history/rollups.js';
import type { ServiceSpec } from './catalog.js';
import type { Admission, Meter, RequestOutcome } from './meter.js';

const FLUSH_MS = 1000;
/** Records kept in memory at most while the database is unreachable; beyond it they are dropped and logged. */
const MAX_PENDING_RECORDS = 50_000;

type NewRequestRecord = Insertable<RequestRecordsTable>;

interface CounterDelta {
  day: string;
  serviceId: number;
  userId: number;
  requests: number;
  errors: number;
  latencyMs: number;
}

/**
 * Shared admission counters for several replicas: one Redis key per (day, service, user), checked
 * and incremented by one Lua script so the limit is exact across replicas. The key is seeded from
 * the database the first time (Redis may have been emptied; the table is the durable truth).
 */
export class RedisAdmission {
  private static readonly SCRIPT = `
    if redis.call('EXISTS', KEYS[1]) == 0 then redis.call('SET', KEYS[1], ARGV[1], 'EX', 172800) end
    local v = redis.call('INCR', KEYS[1])
    local limit = tonumber(ARGV[2])
    if limit > 0 and v > limit then
      redis.call('DECR', KEYS[1])
      return -(v - 1)
    end
    return v`;

  private readonly client;
  private everConnected = false;

  private constructor(
    url: string,
    private readonly prefix: string,
  ) {
    this.client = createClient({
      url,
      // While Redis is away a command fails at once (the meter then counts locally) instead of queueing.
      disableOfflineQueue: true,
      socket: {
        connectTimeout: 5000,
        // A Redis that cannot be reached at start stops the start with its error; later losses are retried.
        reconnectStrategy: (retries: number, cause: Error) => (this.everConnected ? Math.min(100 * 2 ** retries, 5000) : cause),
      },
    });
    // Errors surface on the commands themselves; an unhandled 'error' event would crash the process.
    this.client.on('error', () => undefined);
    this.client.on('ready', () => {
      this.everConnected = true;
    });
  }

  static async connect(url: string, prefix = 'toolport:rpd:'): Promise<RedisAdmission> {
    const admission = new RedisAdmission(url, prefix);
    await admission.client.connect();
    return admission;
  }

  /** Positive: admitted, the new count. Negative: refused, minus the current count. */
  async incrementWithin(key: string, seed: number, limit: number): Promise<number> {
    const reply = await this.client.eval(RedisAdmission.SCRIPT, { keys: [this.prefix + key], arguments: [String(seed), String(limit)] });
    return Number(reply);
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}

export interface MeterOptions {
  db: Db;
  logger: Logger;
  /** The TimeZone preference, read on every call so a change applies at once. */
  timeZone: () => string;
  redis?: RedisAdmission;
  flushMs?: number;
}

/**
 * Metering (architecture §6). Admission is exact: each (day, service, user) count is loaded from
 * daily_counters once, then checked and incremented synchronously in memory (or atomically in Redis
 * when replicas share the limit). The database receives increments (`count = count + delta`) in
 * batches, so replicas add to the same rows and a restart loses nothing that was flushed on close.
 */
export class DbMeter implements Meter {
  private readonly counts = new Map<string, number>();
  private readonly loads = new Map<string, Promise<number>>();
  private countsDay = '';
  private deltas = new Map<string, CounterDelta>();
  private records: NewRequestRecord[] = [];
  private droppedRecords = 0;
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  private lastRedisWarning = 0;

  constructor(private readonly opts: MeterOptions) {}

  async admit(service: ServiceSpec, userId: number): Promise<Admission> {
    const day = dayIn(this.opts.timeZone());
    if (day !== this.countsDay) {
      // A new day starts every count at zero; yesterday's cache is of no further use.
      this.counts.clear();
      this.loads.clear();
      this.countsDay = day;
    }
    const key = `${day}|${service.id}|${userId}`;
    const stored = await this.loadCount(key, day, service.id, userId);
    const limit = service.rpdLimit;
    const reply = this.opts.redis
      ? await this.opts.redis.incrementWithin(key, stored, limit).catch((err) => this.redisFailed(err))
      : undefined;
    if (reply === undefined) {
      // Synchronous from here on: no other admit can interleave between the check and the increment.
      const count = this.counts.get(key) ?? stored;
      if (limit > 0 && count >= limit) return { allowed: false, count, limit };
      this.counts.set(key, count + 1);
    } else {
      // Remembered so that, should Redis go away, this replica carries on from the shared count.
      this.counts.set(key, Math.max(this.counts.get(key) ?? 0, Math.abs(reply)));
      if (reply < 0) return { allowed: false, count: -reply, limit };
    }
    this.delta(day, service.id, userId).requests += 1;
    this.schedule();
    return { allowed: true };
  }

  /** Without Redis the limit is kept per replica from the stored counts: calls go on rather than fail. */
  private redisFailed(err: unknown): undefined {
    const now = Date.now();
    if (now - this.lastRedisWarning > 60_000) {
      this.lastRedisWarning = now;
      this.opts.logger.warn({ err }, 'Redis unavailable: daily limits are counted per replica until it is back');
    }
    return undefined;
  }

  record(outcome: RequestOutcome): void {
    const now = Date.now();
    const day = dayIn(this.opts.timeZone(), now);
    if (outcome.outcome !== 'limited') {
      const d = this.delta(day, outcome.serviceId, outcome.userId);
      d.latencyMs += Math.max(0, Math.round(outcome.latencyMs));
      if (outcome.outcome === 'error') d.errors += 1;
    }
    if (this.records.length >= MAX_PENDING_RECORDS) {
      this.droppedRecords += 1;
    } else {
      this.records.push({
        created_at: now,
        day,
        service_id: outcome.serviceId,
        user_id: outcome.userId,
        method: outcome.method.slice(0, 64),
        target: outcome.target.slice(0, 255),
        latency_ms: Math.max(0, Math.round(outcome.latencyMs)),
        outcome: outcome.outcome,
        bytes_in: outcome.bytesIn,
        bytes_out: outcome.bytesOut,
        error_message: (outcome.errorMessage ?? '').slice(0, 2000),
      });
    }
    this.schedule();
  }

  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const deltas = [...this.deltas.values()];
    const records = this.records;
    this.deltas = new Map();
    this.records = [];
    if (this.droppedRecords > 0) {
      this.opts.logger.warn({ dropped: this.droppedRecords }, 'request records dropped: the database did not keep up');
      this.droppedRecords = 0;
    }
    // Writes are chained so two flushes never add the same delta twice or reorder.
    this.writing = this.writing.then(() => this.write(deltas, records));
    return this.writing;
  }

  private async write(deltas: CounterDelta[], records: NewRequestRecord[]): Promise<void> {
    try {
      for (const d of deltas) await this.upsert(d);
    } catch (err) {
      this.opts.logger.error({ err }, 'daily counters write failed; will retry');
      for (const d of deltas) this.merge(d);
      this.schedule();
    }
    try {
      // With their daily rollups, in one transaction per batch (modules/history/rollups.ts).
      await storeRecords(this.opts.db, records);
    } catch (err) {
      this.opts.logger.error({ err, records: records.length }, 'request records write failed');
    }
  }

  private async upsert(d: CounterDelta): Promise<void> {
    await this.opts.db
      .insertInto('daily_counters')
      .values({
        day: d.day,
        service_id: d.serviceId,
        user_id: d.userId,
        request_count: d.requests,
        error_count: d.errors,
        total_latency_ms: d.latencyMs,
      })
      .onConflict((oc) =>
        oc.columns(['day', 'service_id', 'user_id']).doUpdateSet({
          request_count: sql`daily_counters.request_count + ${d.requests}`,
          error_count: sql`daily_counters.error_count + ${d.errors}`,
          total_latency_ms: sql`daily_counters.total_latency_ms + ${d.latencyMs}`,
        }),
      )
      .execute();
  }

  /** The stored count plus nothing pending: loaded once per key, shared by concurrent first callers. */
  private loadCount(key: string, day: string, serviceId: number, userId: number): Promise<number> {
    let load = this.loads.get(key);
    if (!load) {
      load = this.opts.db
        .selectFrom('daily_counters')
        .select('request_count')
        .where('day', '=', day)
        .where('service_id', '=', serviceId)
        .where('user_id', '=', userId)
        .executeTakeFirst()
        .then((row) => Number(row?.request_count ?? 0));
      // A failed load is retried by the next caller rather than cached.
      load.catch(() => this.loads.delete(key));
      this.loads.set(key, load);
    }
    return load;
  }

  private delta(day: string, serviceId: number, userId: number): CounterDelta {
    const key = `${day}|${serviceId}|${userId}`;
    let d = this.deltas.get(key);
    if (!d) {
      d = { day, serviceId, userId, requests: 0, errors: 0, latencyMs: 0 };
      this.deltas.set(key, d);
    }
    return d;
  }

  private merge(from: CounterDelta): void {
    const d = this.delta(from.day, from.serviceId, from.userId);
    d.requests += from.requests;
    d.errors += from.errors;
    d.latencyMs += from.latencyMs;
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => void this.flush(), this.opts.flushMs ?? FLUSH_MS);
    // Pending counters must not hold the process open; close() flushes them.
    this.timer.unref();
  }
}
