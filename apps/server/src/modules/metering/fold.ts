import { type Kysely, sql } from 'kysely';
import { bounded, CALL_PATH_BOUND_MS } from '../../db/availability.js';
import type { Db } from '../../db/db.js';
import { isPostgres } from '../../db/migrations/helpers.js';
import type { Database } from '../../db/schema.js';
import { storeRecordsIn } from '../history/index.js';
import type { Segment } from './segment.js';

/** Batch ids and run contributions are needed while a batch or a run can still be folded: two days is plenty. */
const KEEP_MS = 2 * 24 * 60 * 60_000;
/** The field of the part of a count that predates per-run contributions (rows written before migration 0010). */
export const LEGACY_RUN = '_';

export interface KeyParts {
  day: string;
  serviceId: number;
  userId: number;
}

export function keyParts(key: string): KeyParts | undefined {
  const [day = '', serviceId, userId] = key.split('|');
  const parts = { day, serviceId: Number(serviceId), userId: Number(userId) };
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day) || !Number.isInteger(parts.serviceId) || !Number.isInteger(parts.userId)) return undefined;
  return parts;
}

/**
 * Folds the meter's journal into the database (decision 0043). Counts are *raised*: a run's
 * contribution to a (day, service, user) becomes `max(stored, v)` and daily_counters grows by the
 * increase, in one transaction, so any number of writers (the run itself, the start that adopts its
 * journal, a survivor reading Redis) write each admission once. Statistics and request records are
 * added, once: the segment's batch id goes into meter_batches in the same transaction.
 */
export class Folder {
  constructor(private readonly db: Db) {}

  /** One segment in one transaction; a segment whose batch id is already stored only raises its counts (no-op). */
  async fold(segment: Segment): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const seen = await trx.selectFrom('meter_batches').select('id').where('id', '=', segment.batchId).executeTakeFirst();
      for (const key of [...segment.counts.keys()].sort()) await this.raise(trx, key, segment.run, segment.counts.get(key) ?? 0);
      if (seen) return;
      for (const key of [...segment.stats.keys()].sort()) {
        const s = segment.stats.get(key);
        const parts = keyParts(key);
        if (s && parts && (s.errors > 0 || s.latencyMs > 0)) await this.addStats(trx, parts, s.errors, s.latencyMs);
      }
      await storeRecordsIn(trx, segment.records);
      await trx.insertInto('meter_batches').values({ id: segment.batchId, written_at: Date.now() }).execute();
    });
  }

  /** A dead run's counts as Redis holds them (a survivor's takeover). */
  async raiseRun(run: string, counts: Map<string, number>): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      for (const key of [...counts.keys()].sort()) await this.raise(trx, key, run, counts.get(key) ?? 0);
    });
  }

  private async raise(trx: Kysely<Database>, key: string, run: string, count: number): Promise<void> {
    const parts = keyParts(key);
    if (!parts || count <= 0) return;
    const where = trx
      .selectFrom('meter_contributions')
      .select('count')
      .where('day', '=', parts.day)
      .where('service_id', '=', parts.serviceId)
      .where('user_id', '=', parts.userId)
      .where('run', '=', run);
    // On PostgreSQL two writers of one run's row (the run, a survivor) must not both add the same increase.
    const row = await (isPostgres<Database>(trx) ? where.forUpdate() : where).executeTakeFirst();
    const before = row ? Number(row.count) : 0;
    if (count <= before) return;
    if (row) {
      await trx
        .updateTable('meter_contributions')
        .set({ count })
        .where('day', '=', parts.day)
        .where('service_id', '=', parts.serviceId)
        .where('user_id', '=', parts.userId)
        .where('run', '=', run)
        .execute();
    } else {
      // A concurrent first insert of the same row fails this transaction, which is retried: nothing is added twice.
      await trx
        .insertInto('meter_contributions')
        .values({ day: parts.day, service_id: parts.serviceId, user_id: parts.userId, run, count })
        .execute();
    }
    await trx
      .insertInto('daily_counters')
      .values({
        day: parts.day,
        service_id: parts.serviceId,
        user_id: parts.userId,
        request_count: count - before,
        error_count: 0,
        total_latency_ms: 0,
      })
      .onConflict((oc) =>
        oc.columns(['day', 'service_id', 'user_id']).doUpdateSet({ request_count: sql`daily_counters.request_count + ${count - before}` }),
      )
      .execute();
  }

  private async addStats(trx: Kysely<Database>, parts: KeyParts, errors: number, latencyMs: number): Promise<void> {
    await trx
      .insertInto('daily_counters')
      .values({
        day: parts.day,
        service_id: parts.serviceId,
        user_id: parts.userId,
        request_count: 0,
        error_count: errors,
        total_latency_ms: latencyMs,
      })
      .onConflict((oc) =>
        oc.columns(['day', 'service_id', 'user_id']).doUpdateSet({
          error_count: sql`daily_counters.error_count + ${errors}`,
          total_latency_ms: sql`daily_counters.total_latency_ms + ${latencyMs}`,
        }),
      )
      .execute();
  }

  /** The stored count of a key (what this replica starts from without Redis). */
  async count(parts: KeyParts): Promise<number> {
    const row = await this.db
      .selectFrom('daily_counters')
      .select('request_count')
      .where('day', '=', parts.day)
      .where('service_id', '=', parts.serviceId)
      .where('user_id', '=', parts.userId)
      .executeTakeFirst();
    return Number(row?.request_count ?? 0);
  }

  /**
   * A key's count split by run, for seeding Redis: every run's contribution, and under LEGACY_RUN what
   * daily_counters holds beyond their sum (counts written before migration 0010). One statement, so one
   * snapshot: read apart, a fold committed between the two reads made its increase look like a legacy
   * count, and Redis (whose fields are only ever raised) kept charging it.
   */
  async contributions(parts: KeyParts): Promise<Map<string, number>> {
    const rows = await this.db
      .selectFrom('meter_contributions')
      .select((eb) => [eb.ref('run').$castTo<string | null>().as('run'), 'count'])
      .where('day', '=', parts.day)
      .where('service_id', '=', parts.serviceId)
      .where('user_id', '=', parts.userId)
      // The day's total, marked by a run that no contribution has.
      .unionAll(
        this.db
          .selectFrom('daily_counters')
          .select([sql<string | null>`null`.as('run'), 'request_count as count'])
          .where('day', '=', parts.day)
          .where('service_id', '=', parts.serviceId)
          .where('user_id', '=', parts.userId),
      )
      .execute();
    const runs = new Map<string, number>();
    let total = 0;
    for (const row of rows) {
      if (row.run === null) total = Number(row.count);
      else runs.set(row.run, Number(row.count));
    }
    const legacy = total - [...runs.values()].reduce((a, b) => a + b, 0);
    if (legacy > 0) runs.set(LEGACY_RUN, legacy);
    return runs;
  }

  /** Whether the database answers at all (bounded): a failure it answered is about the data, not an outage. */
  async answers(): Promise<boolean> {
    try {
      await bounded(sql`select 1`.execute(this.db), CALL_PATH_BOUND_MS);
      return true;
    } catch {
      return false;
    }
  }

  /** Drops batch ids and contributions no longer needed. */
  async purge(now = Date.now()): Promise<void> {
    await this.db
      .deleteFrom('meter_batches')
      .where('written_at', '<', now - KEEP_MS)
      .execute();
    const oldest = new Date(now - KEEP_MS).toISOString().slice(0, 10);
    await this.db.deleteFrom('meter_contributions').where('day', '<', oldest).execute();
  }
}
