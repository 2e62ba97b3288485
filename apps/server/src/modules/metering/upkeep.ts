import type { Logger } from 'pino';
import type { DatabaseGate } from '../../db/availability.js';
import { type Folder, type KeyParts, keyParts } from './fold.js';
import type { Journal } from './journal.js';
import type { Segment } from './segment.js';
import type { SharedCounts } from './shared-count.js';

const FLUSH_MS = 1000;
/** Redis housekeeping (heartbeat, dead runs) and the owner file's heartbeat: this often, traffic or not. */
const HOUSEKEEPING_MS = 3000;
const PURGE_MS = 10 * 60_000;
const WARN_MS = 60_000;

export interface UpkeepOptions {
  journal: Journal;
  folder: Folder;
  logger: Logger;
  redis?: SharedCounts;
  gate?: DatabaseGate;
  flushMs?: number;
  maxPendingRecords: number;
  onRecordsDropped?: (n: number) => void;
  /** This run's own count of every key it admitted today (for reconciling Redis). */
  ownCounts: () => Map<string, { parts: KeyParts; own: number }>;
}

/**
 * The meter's background work (decision 0043), once a second while there is any: closes the journal's
 * current segment and folds the waiting ones into the database in order (stopping at the first that
 * fails: the database is away, they wait on disk), drops the oldest request records beyond the cap,
 * flushes the journal to disk, and with Redis raises the shared counts this run made while Redis was
 * away, and writes the counts of dead runs (their heartbeat stopped) to the database.
 */
export class MeterUpkeep {
  readonly pending: Segment[] = [];
  private readonly adopted = new Set<string>();
  private readonly toReconcile = new Set<string>();
  /** Keys seeded while the database was away (from this run's count alone): seeded again once it answers. */
  private readonly toSeed = new Map<string, KeyParts>();
  private reconcileEverything = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly housekeeping: NodeJS.Timeout;
  private chain: Promise<void> = Promise.resolve();
  private lastHousekeeping = 0;
  private lastPurge = 0;
  private lastFoldWarning = 0;
  private lastRedisWarning = 0;
  private closed = false;

  constructor(private readonly opts: UpkeepOptions) {
    // A quiet replica still tells that it lives, and still writes the counts of the replicas that died.
    this.housekeeping = setInterval(() => this.schedule(), HOUSEKEEPING_MS);
    this.housekeeping.unref();
  }

  /** Runs left by killed processes on this DATA_DIR: folded now, before the first call (their admissions count toward today's limits). */
  async adoptOrphans(): Promise<void> {
    for (const segments of this.opts.journal.adoptOrphans()) {
      const run = segments[0]?.run;
      if (run) this.adopted.add(run);
      this.pending.push(...segments);
      this.opts.logger.info({ run, segments: segments.length }, 'folding the meter journal of a previous run');
    }
    if (this.pending.length > 0) await this.tick(false);
  }

  schedule(): void {
    if (this.timer || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.tick(false);
    }, this.opts.flushMs ?? FLUSH_MS);
    this.timer.unref();
  }

  /** One round of upkeep, chained after the previous one; `all`: Redis housekeeping too, whatever its age. */
  tick(all: boolean): Promise<void> {
    const run = this.chain.then(() => this.round(all));
    this.chain = run.catch(() => undefined);
    return run;
  }

  private async round(all: boolean): Promise<void> {
    const closed = this.opts.journal.rotate();
    if (closed) this.pending.push(closed);
    await this.foldPending();
    this.capRecords();
    void this.opts.journal.sync();
    const now = Date.now();
    if (all || now - this.lastHousekeeping >= HOUSEKEEPING_MS / 2) {
      this.lastHousekeeping = now;
      this.opts.journal.heartbeat();
      await this.housekeepRedis();
    }
    if (this.toReconcile.size > 0 || this.toSeed.size > 0 || this.reconcileEverything) await this.reconcileRedis();
    if (now - this.lastPurge >= PURGE_MS && this.pending.length === 0) {
      this.lastPurge = now;
      await this.opts.folder.purge().catch(() => undefined);
    }
    // Something left (the database or Redis away, or more written meanwhile): look again shortly.
    const redisLeft = this.toReconcile.size > 0 || this.toSeed.size > 0 || this.reconcileEverything;
    if (this.pending.length > 0 || this.opts.journal.current.lines > 0 || redisLeft) {
      this.schedule();
    }
  }

  private async foldPending(): Promise<void> {
    while (this.pending.length > 0) {
      const segment = this.pending[0] as Segment;
      try {
        await this.foldOne(segment);
      } catch (err) {
        this.opts.gate?.failed(err);
        if (Date.now() - this.lastFoldWarning > WARN_MS) {
          this.lastFoldWarning = Date.now();
          this.opts.logger.error({ err, waiting: this.pending.length }, 'meter journal not folded into the database; will retry');
        }
        return;
      }
      this.pending.shift();
      this.opts.journal.remove(segment);
      if (this.adopted.has(segment.run) && !this.pending.some((s) => s.run === segment.run)) {
        this.adopted.delete(segment.run);
        this.opts.journal.release(segment.run);
        await this.settleInRedis(segment.run);
      }
    }
  }

  /**
   * One segment. A failure while the database answers is tried again at once (two replicas inserting the same
   * run's first row: the loser finds it the second time); failing again, the segment's request records are what
   * the database refuses, and they are dropped so that its counts — and every later segment — get through.
   */
  private async foldOne(segment: Segment): Promise<void> {
    try {
      await this.opts.folder.fold(segment);
      return;
    } catch (err) {
      if (!(await this.opts.folder.answers())) throw err;
    }
    try {
      await this.opts.folder.fold(segment);
      return;
    } catch (err) {
      if (segment.records.length === 0 || !(await this.opts.folder.answers())) throw err;
      const dropped = this.opts.journal.compact(segment);
      this.opts.onRecordsDropped?.(dropped);
      this.opts.logger.error({ err, dropped }, 'request records refused by the database, dropped');
    }
    await this.opts.folder.fold(segment);
  }

  /** Beyond the cap, the oldest waiting segments lose their request records (their counts and statistics stay). */
  private capRecords(): void {
    const max = this.opts.maxPendingRecords;
    let waiting = this.opts.journal.current.records.length + this.pending.reduce((n, s) => n + s.records.length, 0);
    let dropped = 0;
    for (const segment of this.pending) {
      if (waiting <= max) break;
      if (segment.records.length === 0) continue;
      const n = this.opts.journal.compact(segment);
      dropped += n;
      waiting -= n;
    }
    if (dropped > 0) {
      this.opts.onRecordsDropped?.(dropped);
      this.opts.logger.warn({ dropped, max }, 'request records dropped: too many waited for the database (the oldest first)');
    }
  }

  /** Redis saw admissions of this key that it missed: raised at the next round. */
  reconcile(key: string): void {
    this.toReconcile.add(key);
  }

  /** After a reconnection Redis may have restarted, lost keys or failed over: every own count is raised again. */
  reconcileAll(): void {
    this.reconcileEverything = true;
    this.schedule();
  }

  redisFailed(err: unknown): void {
    const now = Date.now();
    if (now - this.lastRedisWarning > WARN_MS) {
      this.lastRedisWarning = now;
      this.opts.logger.warn({ err }, 'Redis unavailable: daily limits are counted per replica until it is back');
    }
  }

  /**
   * A key Redis does not have: created from the database's per-run counts and this run's own (each field
   * raised, never added, so seeding twice or beside another replica's seed changes nothing). With the
   * database away, from this run's own count alone (the other live runs raise theirs when they next
   * count); the key is then seeded again once the database answers, for the runs that will not count
   * again today (earlier starts, replicas gone) and the part counted before migration 0010.
   */
  async seed(key: string, parts: KeyParts, own: number): Promise<void> {
    const read = () => this.opts.folder.contributions(parts);
    let runs: Map<string, number>;
    try {
      runs = await (this.opts.gate ? this.opts.gate.read(read) : read());
      this.toSeed.delete(key);
    } catch {
      runs = new Map();
      this.toSeed.set(key, parts);
      this.schedule();
    }
    runs.set(this.opts.journal.run, Math.max(runs.get(this.opts.journal.run) ?? 0, own));
    await this.opts.redis?.raise(key, runs, true);
  }

  private async reconcileRedis(): Promise<void> {
    const redis = this.opts.redis;
    if (!redis?.open) return;
    const own = this.opts.ownCounts();
    // After a reconnection Redis may hold old data (a snapshot, a failed-over replica): every key is seeded again
    // from the database, which raises stale fields of other runs too. Otherwise this run's own field is enough,
    // but for keys seeded while the database was away.
    const everything = this.reconcileEverything;
    const seeding = new Map(this.toSeed);
    if (everything) for (const [key, mine] of own) seeding.set(key, mine.parts);
    const keys = [...new Set([...seeding.keys(), ...this.toReconcile])];
    this.reconcileEverything = false;
    this.toReconcile.clear();
    for (const [i, key] of keys.entries()) {
      const mine = own.get(key);
      const parts = seeding.get(key);
      try {
        if (parts) {
          // With the database still away this raises this run's own field, and the key stays in toSeed.
          await this.seed(key, parts, mine?.own ?? 0);
        } else if (mine && !(await redis.raise(key, new Map([[this.opts.journal.run, mine.own]]), false))) {
          await this.seed(key, mine.parts, mine.own);
        }
      } catch (err) {
        // Redis still away: the rest wait for the next round, a seed still a seed.
        for (const rest of keys.slice(i)) {
          const restParts = seeding.get(rest);
          if (restParts) this.toSeed.set(rest, restParts);
          else this.toReconcile.add(rest);
        }
        this.redisFailed(err);
        return;
      }
    }
  }

  /** A killed run's journal is all in the database: its Redis fields follow the database (SharedCounts.settle). */
  private async settleInRedis(run: string): Promise<void> {
    const redis = this.opts.redis;
    if (!redis?.open) return;
    const exact = async (key: string) => {
      const parts = keyParts(key);
      if (!parts) throw new Error(`not a counter key: ${key}`);
      return (await this.opts.folder.contributions(parts)).get(run) ?? 0;
    };
    try {
      if (await redis.settle(this.opts.journal.run, run, exact))
        this.opts.logger.info({ run }, 'the shared counts of a killed run follow its journal');
    } catch (err) {
      // Redis or the database away: the run stays registered, and a survivor writes its Redis counts later.
      this.redisFailed(err);
    }
  }

  /** This run's heartbeat, and the counts of dead runs written to the database from Redis. */
  private async housekeepRedis(): Promise<void> {
    const redis = this.opts.redis;
    if (!redis?.open) return;
    const me = this.opts.journal.run;
    try {
      await redis.heartbeat(me);
      for (const run of await redis.claimDeadRuns(me)) {
        const counts = await redis.countsOf(run);
        await this.opts.folder.raiseRun(run, counts);
        await redis.forget(run);
        this.opts.logger.info({ run, keys: counts.size }, 'counts of a replica that stopped without writing them are in the database');
      }
    } catch (err) {
      this.redisFailed(err);
    }
  }

  /** Folds what it can; what the database did not take stays in the journal for the next start. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.housekeeping);
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.tick(false);
    const redis = this.opts.redis;
    // All folded: no survivor needs to write this run's counts from Redis.
    if (redis?.open && this.pending.length === 0) await redis.forget(this.opts.journal.run).catch(() => undefined);
    this.opts.journal.close();
  }
}
