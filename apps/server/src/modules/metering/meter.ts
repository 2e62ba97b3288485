import path from 'node:path';
import type { Logger } from 'pino';
import { type DatabaseGate, DatabaseUnavailableError } from '../../db/availability.js';
import type { Db } from '../../db/db.js';
import type { ServiceSpec } from '../../gateway/catalog.js';
import type { Admission, Meter, RequestOutcome } from '../../gateway/meter.js';
import { dayIn } from '../../infra/day.js';
import type { NewRequestRecord } from '../history/index.js';
import { Folder, type KeyParts } from './fold.js';
import { Journal } from './journal.js';
import { counterKey, type Segment } from './segment.js';
import type { SharedCounts } from './shared-count.js';
import { MeterUpkeep } from './upkeep.js';

/** Request records waiting in the journal at most; beyond it the oldest are dropped (counted in a metric). */
export const MAX_PENDING_RECORDS = 50_000;

export interface MeterOptions {
  db: Db;
  logger: Logger;
  /** Where the journal lives: DATA_DIR/journal. */
  dataDir: string;
  /** The TimeZone preference, read on every call so a change applies at once. */
  timeZone: () => string;
  redis?: SharedCounts;
  /** Reads on the call path are bounded by it; without one they are not. */
  gate?: DatabaseGate;
  flushMs?: number;
  maxPendingRecords?: number;
  /**
   * Benchmarks only (METER_COUNT_WRITES=deferred): an admission's journal line is written with the next
   * record or at the end of the turn instead of before the call goes on. Never set in production.
   */
  deferCountWrites?: boolean;
  /** Request records dropped because too many waited for the database (toolport_request_records_dropped_total). */
  onRecordsDropped?: (n: number) => void;
}

/** What this run knows of one (day, service, user). */
interface KeyState {
  parts: KeyParts;
  /** This run's own admissions of the key today (its contribution; decision 0043). */
  own: number;
  /** The last total known: a Redis answer, or the stored count. Undefined until one is known. */
  shared: number | undefined;
  /** `own` when `shared` was learnt: the admissions since then are this run's alone. */
  ownAtShared: number;
  loading?: Promise<void>;
}

/**
 * Metering (docs/architecture.md §6, decision 0043). Admission is exact: checked and incremented
 * synchronously in memory, or atomically in Redis when replicas share the limit. Each admission is then
 * appended to the local journal (a `write(2)`, no database round trip) before the call goes on, and the
 * journal is folded into the database once a second, in the background: counts as per-run
 * contributions that are raised (never added twice), statistics and request records under the
 * segment's batch id. While the database is away the journal keeps everything (records up to a cap,
 * the oldest dropped first); a killed process's journal is folded by the next start.
 */
export class DbMeter implements Meter {
  readonly journal: Journal;
  private readonly folder: Folder;
  private readonly upkeep: MeterUpkeep;
  private readonly keys = new Map<string, KeyState>();
  private keysDay = '';
  private writeScheduled = false;

  constructor(private readonly opts: MeterOptions) {
    this.journal = new Journal(path.join(opts.dataDir, 'journal'));
    this.folder = new Folder(opts.db);
    this.upkeep = new MeterUpkeep({
      journal: this.journal,
      folder: this.folder,
      logger: opts.logger,
      redis: opts.redis,
      gate: opts.gate,
      flushMs: opts.flushMs,
      maxPendingRecords: opts.maxPendingRecords ?? MAX_PENDING_RECORDS,
      onRecordsDropped: opts.onRecordsDropped,
      ownCounts: () => this.ownCounts(),
    });
    opts.redis?.onReconnect(() => this.upkeep.reconcileAll());
  }

  /** Folds the journals of runs that were killed on this DATA_DIR: their admissions count before the first call. */
  async start(): Promise<void> {
    await this.upkeep.adoptOrphans();
  }

  async admit(service: ServiceSpec, userId: number): Promise<Admission> {
    const day = dayIn(this.opts.timeZone());
    if (day !== this.keysDay) {
      // A new day starts every count at zero; yesterday's states are of no further use.
      this.keys.clear();
      this.keysDay = day;
    }
    const key = counterKey(day, service.id, userId);
    const st = this.state(key, day, service.id, userId);
    const limit = service.rpdLimit;
    const redis = this.opts.redis;
    if (redis?.open) {
      const shared = await this.sharedAdmit(redis, key, st, limit);
      if (shared) return shared;
    }
    // Without Redis, or while it is away: this replica's own reckoning, from the last total it knew.
    if (st.shared === undefined) await this.load(st);
    if (st.shared === undefined) {
      // Never counted here and the database away: a limited service cannot be admitted blind.
      if (limit > 0) throw new DatabaseUnavailableError('the daily count is not known while the database is away');
      st.shared = 0;
      st.ownAtShared = st.own;
    }
    // Synchronous from here on: no other admit can interleave between the check and the increment.
    const count = st.shared + (st.own - st.ownAtShared);
    if (limit > 0 && count >= limit) return { allowed: false, count, limit };
    st.own += 1;
    // Redis missed this one: it gets it with the next reconciliation.
    if (redis) this.upkeep.reconcile(key);
    this.counted(key, st);
    return { allowed: true };
  }

  /** Admission by the shared count; undefined when Redis cannot be asked (the caller counts locally). */
  private async sharedAdmit(redis: SharedCounts, key: string, st: KeyState, limit: number): Promise<Admission | undefined> {
    const ask = () => redis.admit(key, this.journal.run, st.own, limit);
    try {
      let reply = await ask();
      if (reply.status === 'missing') {
        // Redis lost the key (restarted empty, expired): seeded from the database's per-run counts and ours.
        await this.upkeep.seed(key, st.parts, st.own);
        reply = await ask();
      }
      if (reply.status === 'missing') return undefined;
      if (reply.status === 'refused') {
        st.shared = reply.total;
        st.ownAtShared = st.own;
        return { allowed: false, count: reply.total, limit };
      }
      st.own += 1;
      st.shared = reply.total;
      st.ownAtShared = st.own;
      this.counted(key, st);
      return { allowed: true };
    } catch (err) {
      this.upkeep.redisFailed(err);
      return undefined;
    }
  }

  /** The admission goes to the journal before the call goes on (decision 0043), then to the database in the background. */
  private counted(key: string, st: KeyState): void {
    this.journal.admit(key, st.own, !this.opts.deferCountWrites);
    if (this.opts.deferCountWrites) this.writeSoon();
    this.upkeep.schedule();
  }

  private state(key: string, day: string, serviceId: number, userId: number): KeyState {
    let st = this.keys.get(key);
    if (!st) {
      st = { parts: { day, serviceId, userId }, own: 0, shared: undefined, ownAtShared: 0 };
      this.keys.set(key, st);
    }
    return st;
  }

  /** The stored count, once per key (shared by concurrent first callers); left unknown while the database is away. */
  private load(st: KeyState): Promise<void> {
    if (!st.loading) {
      const ownAtStart = st.own;
      const read = () => this.folder.count(st.parts);
      st.loading = (this.opts.gate ? this.opts.gate.read(read) : read())
        .then((stored) => {
          if (st.shared !== undefined) return;
          st.shared = stored;
          st.ownAtShared = ownAtStart;
        })
        .catch((err) => {
          this.opts.gate?.failed(err);
          this.opts.logger.debug({ err }, 'daily count not loaded');
        })
        .finally(() => {
          st.loading = undefined;
        });
    }
    return st.loading;
  }

  /** This run's own count of every key it admitted today. */
  private ownCounts(): Map<string, { parts: KeyParts; own: number }> {
    return new Map([...this.keys].filter(([, st]) => st.own > 0).map(([key, st]) => [key, { parts: st.parts, own: st.own }]));
  }

  record(outcome: RequestOutcome): void {
    const now = Date.now();
    const day = dayIn(this.opts.timeZone(), now);
    const record: NewRequestRecord = {
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
    };
    this.journal.record(counterKey(day, outcome.serviceId, outcome.userId), record);
    // Written at the end of this event-loop turn (or with the next admission): one write for the turn's records.
    this.writeSoon();
    this.upkeep.schedule();
  }

  private writeSoon(): void {
    if (this.writeScheduled) return;
    this.writeScheduled = true;
    setImmediate(() => {
      this.writeScheduled = false;
      this.journal.write();
    });
  }

  /** Folds what this run has written so far, without the Redis housekeeping (before the console reads today's counts). */
  settle(): Promise<void> {
    return this.upkeep.tick(false);
  }

  /** Folds everything pending into the database now (tests, shutdown). */
  flush(): Promise<void> {
    return this.upkeep.tick(true);
  }

  /** Segments not yet in the database (tests and the fault suites). */
  get pending(): readonly Segment[] {
    return this.upkeep.pending;
  }

  /** Folds what it can and lets the journal go; what the database did not take stays on disk for the next start. */
  async close(): Promise<void> {
    await this.upkeep.close();
  }
}
