import { randomUUID } from 'node:crypto';
import type { Insertable, Kysely } from 'kysely';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import { createClient } from 'redis';
import type { Db } from '../../db/db.js';
import type { Database, RequestRecordsTable } from '../../db/schema.js';
import type { ServiceSpec } from '../../gateway/catalog.js';
import type { Admission, Meter, RequestOutcome } from '../../gateway/meter.js';
import { dayIn } from '../../infra/day.js';
import { storeRecords } from '../history/index.js';

const FLUSH_MS = 1000;
/** How often written batch ids are purged, and how long they are kept (settleDoubtful). */
const BATCH_PURGE_MS = 10 * 60_000;
const BATCH_KEEP_MS = 24 * 60 * 60_000;
/** Records kept in memory at most while the database is unreachable; beyond it they are dropped and logged. */
const MAX_PENDING_RECORDS = 50_000;

type NewRequestRecord = Insertable<RequestRecordsTable>;

interface CounterDelta {
  day: string;
  serviceId: number;
  userId: number;
  /** Admissions to add: counted here alone (no Redis, or Redis away). */
  requests: number;
  /** The highest count known for the key (a Redis count, or this replica's own): the row holds at least this. */
  known: number;
  errors: number;
  latencyMs: number;
}

/** How long a replica that took dirty counters to write may hold them before another one takes them over. */
const CLAIM_MS = 5000;
/** Dirty counters written per sweep at most; the rest wait for the next flush. */
const SWEEP_MAX = 1000;

/**
 * Shared admission counters for several replicas: one Redis key per (day, service, user), checked
 * and incremented by one Lua script so the limit is exact across replicas. The key is seeded from
 * the database the first time (Redis may have been emptied; the table is the durable truth).
 *
 * The Redis count is also what reaches the database (decision 0018): every admission marks its key
 * in the sorted set `dirty` (score: when it may be taken), and every replica's flush *sweeps* it —
 * takes the due keys for a few seconds, writes their counts with GREATEST, then releases them — so
 * calls admitted by a replica that died before its own flush are still written by the others.
 */
export class RedisAdmission {
  private static readonly ADMIT = `
    if redis.call('EXISTS', KEYS[1]) == 0 then redis.call('SET', KEYS[1], ARGV[1], 'EX', 172800) end
    local v = redis.call('INCR', KEYS[1])
    local limit = tonumber(ARGV[2])
    if limit > 0 and v > limit then
      redis.call('DECR', KEYS[1])
      return -(v - 1)
    end
    redis.call('ZADD', KEYS[2], 'NX', ARGV[3], ARGV[4])
    redis.call('EXPIRE', KEYS[2], 172800)
    return v`;

  /** Adds admissions counted while Redis was away (or seeds the key with them when it is gone). */
  private static readonly ADD = `
    local v
    if redis.call('EXISTS', KEYS[1]) == 0 then
      redis.call('SET', KEYS[1], ARGV[1], 'EX', 172800)
      v = tonumber(ARGV[1])
    else
      v = redis.call('INCRBY', KEYS[1], ARGV[2])
    end
    redis.call('ZADD', KEYS[2], ARGV[3], ARGV[4])
    redis.call('EXPIRE', KEYS[2], 172800)
    return v`;

  /** Takes up to ARGV[3] due dirty keys until ARGV[2]; returns the number left and key, count pairs. */
  private static readonly SWEEP = `
    local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
    local out = {0}
    for _, m in ipairs(due) do
      local v = redis.call('GET', ARGV[4] .. m)
      if v then
        redis.call('ZADD', KEYS[1], ARGV[2], m)
        out[#out + 1] = m
        out[#out + 1] = v
      else
        redis.call('ZREM', KEYS[1], m)
      end
    end
    out[1] = redis.call('ZCARD', KEYS[1])
    return out`;

  /** After the write: a key whose count has not moved is clean; one that moved is due again at once. */
  private static readonly RELEASE = `
    for i = 3, #ARGV, 2 do
      local v = redis.call('GET', ARGV[1] .. ARGV[i])
      if (not v) or v == ARGV[i + 1] then
        redis.call('ZREM', KEYS[1], ARGV[i])
      else
        redis.call('ZADD', KEYS[1], ARGV[2], ARGV[i])
      end
    end
    return 0`;

  private readonly client;
  private everConnected = false;
  private closed = false;

  private constructor(
    url: string,
    private readonly prefix: string,
    private readonly claimMs: number,
  ) {
    this.client = createClient({
      url,
      // While Redis is away a command fails at once (the meter then counts locally) instead of queueing.
      disableOfflineQueue: true,
      socket: {
        connectTimeout: 5000,
        // A Redis that cannot be reached at start stops the start with its error; later losses are retried.
        reconnectStrategy: (retries: number, cause: Error) =>
          this.closed ? false : this.everConnected ? Math.min(100 * 2 ** retries, 5000) : cause,
      },
    });
    // Errors surface on the commands themselves; an unhandled 'error' event would crash the process.
    this.client.on('error', () => undefined);
    this.client.on('ready', () => {
      this.everConnected = true;
    });
  }

  static async connect(url: string, prefix = 'toolport:rpd:', claimMs = CLAIM_MS): Promise<RedisAdmission> {
    const admission = new RedisAdmission(url, prefix, claimMs);
    await admission.client.connect();
    return admission;
  }

  private get dirtyKey(): string {
    return `${this.prefix}dirty`;
  }

  /** False once closed: nothing more is to be swept by this replica. */
  get open(): boolean {
    return !this.closed;
  }

  /** Positive: admitted, the new count. Negative: refused, minus the current count. */
  async incrementWithin(key: string, seed: number, limit: number): Promise<number> {
    const reply = await this.client.eval(RedisAdmission.ADMIT, {
      keys: [this.prefix + key, this.dirtyKey],
      arguments: [String(seed), String(limit), String(Date.now()), key],
    });
    return Number(reply);
  }

  /** Adds `n` admissions counted without Redis; a key Redis no longer has starts at `seed` (which includes them). */
  async add(key: string, n: number, seed: number): Promise<number> {
    const reply = await this.client.eval(RedisAdmission.ADD, {
      keys: [this.prefix + key, this.dirtyKey],
      arguments: [String(seed), String(n), String(Date.now()), key],
    });
    return Number(reply);
  }

  /** Takes the due dirty counters for a few seconds (claimMs): their current counts, and how many dirty keys remain in all. */
  async sweep(): Promise<{ taken: Map<string, number>; remaining: number }> {
    const now = Date.now();
    const reply = (await this.client.eval(RedisAdmission.SWEEP, {
      keys: [this.dirtyKey],
      arguments: [String(now), String(now + this.claimMs), String(SWEEP_MAX), this.prefix],
    })) as (string | number)[];
    const taken = new Map<string, number>();
    for (let i = 1; i + 1 < reply.length; i += 2) taken.set(String(reply[i]), Number(reply[i + 1]));
    return { taken, remaining: Number(reply[0]) };
  }

  /** Releases swept keys once their counts are in the database. */
  async release(written: Map<string, number>): Promise<void> {
    if (written.size === 0) return;
    const pairs = [...written].flatMap(([key, count]) => [key, String(count)]);
    await this.client.eval(RedisAdmission.RELEASE, { keys: [this.dirtyKey], arguments: [this.prefix, String(Date.now()), ...pairs] });
  }

  async close(): Promise<void> {
    this.closed = true;
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
  /**
   * Benchmarks only (METER_COUNT_WRITES=deferred): counts wait for the once-a-second flush as before decision
   * 0021, so a killed process loses up to a second of them. Never set in production.
   */
  deferCountWrites?: boolean;
}

/**
 * Metering (docs/architecture.md §6). Admission is exact: each (day, service, user) count is loaded from
 * daily_counters once, then checked and incremented synchronously in memory (or atomically in Redis
 * when replicas share the limit). The database receives the counts in batches, with
 * `count = GREATEST(count + added, known)`: without Redis each replica adds its own admissions, so
 * replicas share a row and a restart loses nothing flushed on close; with Redis the shared count is
 * the truth and any replica writes it, also for a replica killed before its flush (decision 0018).
 */
export class DbMeter implements Meter {
  private readonly counts = new Map<string, number>();
  private readonly loads = new Map<string, Promise<number>>();
  private countsDay = '';
  private deltas = new Map<string, CounterDelta>();
  private records: NewRequestRecord[] = [];
  private droppedRecords = 0;
  /** Admissions counted here while Redis was away, added to Redis once it is back. */
  private backlog = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  /** The write of this event-loop turn's counts and records, once scheduled. */
  private soon: Promise<void> | undefined;
  /** Resolves the admissions of the batch being written once their counts are in the database. */
  private countWaiters: (() => void)[] = [];
  private writing: Promise<void> = Promise.resolve();
  /** False after a write failed: admissions stop waiting for the database until a write succeeds again. */
  private databaseWriting = true;
  private lastSweep = 0;
  private lastRedisWarning = 0;
  /**
   * Batches whose write failed while committing: the database may have kept them or not. Each is
   * looked up by id (meter_batches) before its counts are added again, so none is counted twice.
   */
  private doubtful: { id: string; deltas: CounterDelta[] }[] = [];
  private lastBatchPurge = 0;

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
    const redis = this.opts.redis;
    // A key Redis lost starts from the highest count this replica knows, not just the one it loaded.
    const seed = Math.max(stored, this.counts.get(key) ?? 0);
    const reply = redis ? await redis.incrementWithin(key, seed, limit).catch((err) => this.redisFailed(err)) : undefined;
    const d = this.delta(day, service.id, userId);
    if (reply === undefined) {
      // Synchronous from here on: no other admit can interleave between the check and the increment.
      const count = this.counts.get(key) ?? stored;
      if (limit > 0 && count >= limit) return { allowed: false, count, limit };
      this.counts.set(key, count + 1);
      d.requests += 1;
      if (redis) {
        d.known = Math.max(d.known, count + 1);
        this.backlog.set(key, (this.backlog.get(key) ?? 0) + 1);
      }
    } else {
      // Remembered so that, should Redis go away, this replica carries on from the shared count.
      const count = Math.max(this.counts.get(key) ?? 0, Math.abs(reply));
      this.counts.set(key, count);
      if (reply < 0) return { allowed: false, count: -reply, limit };
      // Counted in Redis: written as the shared count, never added (another replica may write it first).
      d.known = Math.max(d.known, count);
    }
    // Durable before the call goes upstream (decision 0021): the admissions of one event-loop turn
    // are written together, and each waits for that write, so an answered call is never lost to a
    // killed process. While the database fails, calls go on counted in memory (as before).
    if (this.opts.deferCountWrites) {
      this.schedule();
      return { allowed: true };
    }
    const written = this.writeSoon();
    if (this.databaseWriting) await written;
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
        // PostgreSQL text cannot hold NUL, and a client chooses both.
        method: outcome.method.replaceAll('\u0000', '').slice(0, 64),
        target: outcome.target.replaceAll('\u0000', '').slice(0, 255),
        latency_ms: Math.max(0, Math.round(outcome.latencyMs)),
        outcome: outcome.outcome,
        bytes_in: outcome.bytesIn,
        bytes_out: outcome.bytesOut,
        error_message: (outcome.errorMessage ?? '').replaceAll('\u0000', '').slice(0, 2000),
      });
    }
    // The history (request records and their rollups) is written once a second: per call it would cost
    // a transaction of four tables on the call path (decision 0021). Latency and errors ride along with
    // the next admission's count write.
    this.schedule();
  }

  /** Writes everything pending now (counts and records), and sweeps Redis's dirty counters; called on close and every second. */
  async flush(): Promise<void> {
    return this.take(true);
  }

  /**
   * The write of everything pending at the end of the current event-loop turn (setImmediate), shared
   * by every admission and record of the turn: one batch, whatever the concurrency. Under load the
   * batches grow while the previous write is in flight, since writes are chained.
   */
  private writeSoon(): Promise<void> {
    if (!this.soon) {
      this.soon = new Promise<void>((resolve) => {
        // Resolved once the counts are in (before the records): an admission waits for its count only.
        this.countWaiters.push(resolve);
        setImmediate(() => {
          this.soon = undefined;
          void this.take(false);
        });
      });
    }
    return this.soon;
  }

  /** `all`: the records too, and Redis's dirty counters whatever their age; otherwise the counters alone. */
  private take(all: boolean): Promise<void> {
    const deltas = [...this.deltas.values()];
    const records = all ? this.records : [];
    const waiters = this.countWaiters;
    this.deltas = new Map();
    this.countWaiters = [];
    if (all) {
      if (this.timer) clearTimeout(this.timer);
      this.timer = undefined;
      this.records = [];
    }
    if (this.droppedRecords > 0) {
      this.opts.logger.warn({ dropped: this.droppedRecords }, 'request records dropped: the database did not keep up');
      this.droppedRecords = 0;
    }
    // Redis's dirty counters are swept once a second (each sweep is two round trips), not every turn.
    const sweep = all || Date.now() - this.lastSweep >= (this.opts.flushMs ?? FLUSH_MS);
    // Writes are chained so two flushes never add the same delta twice or reorder.
    const written = this.writing.then(() => this.write(deltas, records, sweep, waiters));
    this.writing = written.catch(() => undefined);
    // Whatever happens to the write, no admission is left waiting on it.
    void written
      .finally(() => {
        for (const resolve of waiters) resolve();
      })
      .catch(() => undefined);
    return written;
  }

  private async write(own: CounterDelta[], records: NewRequestRecord[], sweepNow: boolean, waiters: (() => void)[]): Promise<void> {
    let swept: { taken: Map<string, number>; remaining: number } = { taken: new Map(), remaining: 0 };
    if (sweepNow) {
      this.lastSweep = Date.now();
      swept = await this.sweep();
    } else if (this.opts.redis?.open) {
      // The sweep that was not due: a timer does it, so the dirty counters of other replicas still get written.
      this.schedule();
    }
    const deltas = new Map(own.map((d) => [`${d.day}|${d.serviceId}|${d.userId}`, d]));
    for (const [key, count] of swept.taken) {
      const [day = '', serviceId, userId] = key.split('|');
      const d = deltas.get(key) ?? {
        day,
        serviceId: Number(serviceId),
        userId: Number(userId),
        requests: 0,
        known: 0,
        errors: 0,
        latencyMs: 0,
      };
      if (!Number.isInteger(d.serviceId) || !Number.isInteger(d.userId) || !/^\d{4}-\d{2}-\d{2}$/.test(d.day)) continue;
      d.known = Math.max(d.known, count);
      deltas.set(key, d);
    }
    const batchId = randomUUID();
    let committed = false;
    try {
      // Batches in doubt first: those the database kept are done, the others are added to this one.
      for (const d of await this.settleDoubtful()) {
        const key = `${d.day}|${d.serviceId}|${d.userId}`;
        const mine = deltas.get(key);
        if (mine) {
          // A swept key's delta is not this replica's own until it carries own admissions.
          if (!own.includes(mine)) own.push(mine);
          mine.requests += d.requests;
          mine.known = Math.max(mine.known, d.known);
          mine.errors += d.errors;
          mine.latencyMs += d.latencyMs;
        } else {
          deltas.set(key, d);
          own.push(d);
        }
      }
      const rows = [...deltas.values()];
      // Sorted, so that replicas writing the same rows on PostgreSQL lock them in one order.
      rows.sort((a, b) => a.day.localeCompare(b.day) || a.serviceId - b.serviceId || a.userId - b.userId);
      if (rows.length > 0) {
        // One transaction, with the batch's id: on SQLite one WAL append for the whole turn, and a commit
        // whose answer was lost can be told apart from one that never happened.
        await this.opts.db.transaction().execute(async (trx) => {
          for (const d of rows) await this.upsert(d, trx);
          await trx.insertInto('meter_batches').values({ id: batchId, written_at: Date.now() }).execute();
        });
      }
      committed = true;
      this.databaseWriting = true;
      // Written: the swept keys are clean unless they moved meanwhile. Unreleased ones are taken again later.
      await this.opts.redis?.release(swept.taken).catch(() => undefined);
      await this.purgeBatches();
    } catch (err) {
      if (this.databaseWriting) this.opts.logger.error({ err }, 'daily counters write failed; will retry');
      this.databaseWriting = false;
      // In doubt until the database answers again: its id tells whether it was kept (settleDoubtful).
      if (!committed && own.length > 0) this.doubtful.push({ id: batchId, deltas: own });
      this.schedule();
    }
    // The admissions of this batch go on: their counts are durable (or, the database failing, kept for the retry).
    for (const resolve of waiters) resolve();
    // Dirty counters are left (another replica holds them, or there were more): look again shortly.
    if (swept.remaining > 0 && this.opts.redis?.open) this.schedule();
    let stored = 0;
    try {
      // With their daily rollups, in one transaction per batch (modules/history/rollups.ts).
      await storeRecords(this.opts.db, records, (count) => {
        stored = count;
      });
    } catch (err) {
      const unstored = records.slice(stored);
      if (await this.databaseAnswers()) {
        // The database is there and refused these rows: keeping them would block every later record.
        this.opts.logger.error({ err, records: unstored.length }, 'request records refused by the database, dropped');
        return;
      }
      // The database is away (an outage): kept, oldest first, for the next flush, within the cap.
      this.opts.logger.error({ err, records: unstored.length }, 'request records write failed; will retry');
      const room = Math.max(0, MAX_PENDING_RECORDS - this.records.length);
      this.droppedRecords += Math.max(0, unstored.length - room);
      this.records = [...unstored.slice(0, room), ...this.records];
      this.schedule();
    }
  }

  /**
   * The counts of the batches in doubt that the database did not keep (looked up by id), to be written
   * again; the kept ones are forgotten. Throws when the database cannot be asked: they stay in doubt.
   */
  private async settleDoubtful(): Promise<CounterDelta[]> {
    if (this.doubtful.length === 0) return [];
    const batches = this.doubtful;
    this.doubtful = [];
    try {
      const kept = new Set(
        (
          await this.opts.db
            .selectFrom('meter_batches')
            .select('id')
            .where(
              'id',
              'in',
              batches.map((b) => b.id),
            )
            .execute()
        ).map((r) => r.id),
      );
      return batches.filter((b) => !kept.has(b.id)).flatMap((b) => b.deltas);
    } catch (err) {
      this.doubtful = [...batches, ...this.doubtful];
      throw err;
    }
  }

  /** Batch ids are needed only while a batch can be in doubt: a day is plenty. */
  private async purgeBatches(): Promise<void> {
    const now = Date.now();
    if (now - this.lastBatchPurge < BATCH_PURGE_MS) return;
    this.lastBatchPurge = now;
    await this.opts.db
      .deleteFrom('meter_batches')
      .where('written_at', '<', now - BATCH_KEEP_MS)
      .execute()
      .catch(() => undefined);
  }

  private async databaseAnswers(): Promise<boolean> {
    try {
      await sql`select 1`.execute(this.opts.db);
      return true;
    } catch {
      return false;
    }
  }

  private async upsert(d: CounterDelta, db: Kysely<Database>): Promise<void> {
    await db
      .insertInto('daily_counters')
      .values({
        day: d.day,
        service_id: d.serviceId,
        user_id: d.userId,
        request_count: Math.max(d.requests, d.known),
        error_count: d.errors,
        total_latency_ms: d.latencyMs,
      })
      .onConflict((oc) =>
        oc.columns(['day', 'service_id', 'user_id']).doUpdateSet({
          // GREATEST(count + added, known), spelled so that SQLite runs it too.
          request_count: sql`case when excluded.request_count > daily_counters.request_count + ${d.requests} then excluded.request_count else daily_counters.request_count + ${d.requests} end`,
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
      d = { day, serviceId, userId, requests: 0, known: 0, errors: 0, latencyMs: 0 };
      this.deltas.set(key, d);
    }
    return d;
  }

  /**
   * With Redis: first adds the admissions counted while it was away, then takes the dirty shared
   * counters due for writing (any replica's). Without Redis, or while it is away: nothing.
   */
  private async sweep(): Promise<{ taken: Map<string, number>; remaining: number }> {
    const redis = this.opts.redis;
    if (!redis?.open) return { taken: new Map(), remaining: 0 };
    const backlog = this.backlog;
    this.backlog = new Map();
    try {
      for (const [key, n] of backlog) {
        await redis.add(key, n, this.counts.get(key) ?? n);
        backlog.delete(key);
      }
      return await redis.sweep();
    } catch {
      // Still away: what was not added waits for the next flush; the database has it meanwhile.
      for (const [key, n] of backlog) this.backlog.set(key, (this.backlog.get(key) ?? 0) + n);
      return { taken: new Map(), remaining: 0 };
    }
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => void this.flush(), this.opts.flushMs ?? FLUSH_MS);
    // Pending counters must not hold the process open; close() flushes them.
    this.timer.unref();
  }
}
