import { type Insertable, type Kysely, sql, type Transaction } from 'kysely';
import type { Db } from '../../db/db.js';
import { isPostgres } from '../../db/migrations/helpers.js';
import type { Database, RequestRecordsTable, RollupFigures } from '../../db/schema.js';

export type NewRequestRecord = Insertable<RequestRecordsTable>;

/** Records per insert and per transaction: 11 columns each stays far below either engine's parameter limit. */
const RECORD_BATCH = 500;

/**
 * PostgreSQL advisory lock between the writers of rollups: every flush of records takes it shared
 * (flushes add to the rollups side by side), a recompute takes it exclusively, so a recompute
 * never races a flush into a duplicate row or a lost delta. SQLite runs one writer at a time anyway.
 */
const ROLLUP_LOCK = 746_150_301;

const SUMS = ['request_count', 'error_count', 'limited_count', 'latency_sum_ms', 'bytes_in', 'bytes_out'] as const;
/** The rollup columns in ROLLUP_SELECT's order. */
const FIGURE_COLUMNS = sql.raw('request_count, error_count, limited_count, latency_sum_ms, latency_max_ms, bytes_in, bytes_out');

/**
 * The rollup of a set of records, as SQL; the same definitions as `addRecord` and migration 0003:
 * admitted = ok or error; refusals ('limited') are counted apart and add no latency.
 */
const ROLLUP_SELECT = sql.raw(`
  SUM(CASE WHEN outcome <> 'limited' THEN 1 ELSE 0 END) AS request_count,
  SUM(CASE WHEN outcome = 'error' THEN 1 ELSE 0 END) AS error_count,
  SUM(CASE WHEN outcome = 'limited' THEN 1 ELSE 0 END) AS limited_count,
  SUM(CASE WHEN outcome <> 'limited' THEN latency_ms ELSE 0 END) AS latency_sum_ms,
  MAX(CASE WHEN outcome <> 'limited' THEN latency_ms ELSE 0 END) AS latency_max_ms,
  SUM(bytes_in) AS bytes_in,
  SUM(bytes_out) AS bytes_out`);

const emptyFigures = (): RollupFigures => ({
  request_count: 0,
  error_count: 0,
  limited_count: 0,
  latency_sum_ms: 0,
  latency_max_ms: 0,
  bytes_in: 0,
  bytes_out: 0,
});

function addRecord(f: RollupFigures, r: NewRequestRecord): void {
  const latency = r.latency_ms ?? 0;
  if (r.outcome === 'limited') {
    f.limited_count += 1;
  } else {
    f.request_count += 1;
    f.latency_sum_ms += latency;
    f.latency_max_ms = Math.max(f.latency_max_ms, latency);
    if (r.outcome === 'error') f.error_count += 1;
  }
  f.bytes_in += r.bytes_in ?? 0;
  f.bytes_out += r.bytes_out ?? 0;
}

type RequestRollupRow = Insertable<Database['request_rollups']>;
type ServiceDayRollupRow = Insertable<Database['service_day_rollups']>;

/** The rollup rows of a batch, sorted by key so concurrent upserts lock rows in one order (no deadlock). */
export function rollupsOf(records: readonly NewRequestRecord[]): { fine: RequestRollupRow[]; perService: ServiceDayRollupRow[] } {
  const fine = new Map<string, RequestRollupRow & RollupFigures>();
  const perService = new Map<string, ServiceDayRollupRow & RollupFigures>();
  for (const r of records) {
    const target = r.target ?? '';
    const fineKey = JSON.stringify([r.day, r.service_id, r.user_id, r.method, target]);
    let f = fine.get(fineKey);
    if (!f) {
      f = { day: r.day, service_id: r.service_id, user_id: r.user_id, method: r.method, target, ...emptyFigures() };
      fine.set(fineKey, f);
    }
    addRecord(f, r);
    const serviceKey = JSON.stringify([r.day, r.service_id]);
    let s = perService.get(serviceKey);
    if (!s) {
      s = { day: r.day, service_id: r.service_id, ...emptyFigures() };
      perService.set(serviceKey, s);
    }
    addRecord(s, r);
  }
  const byKey = <T>(m: Map<string, T>) => [...m.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, v]) => v);
  return { fine: byKey(fine), perService: byKey(perService) };
}

/** `table.col + excluded.col` for the sums, the larger of both for the maximum. */
function additions(db: Kysely<Database>, table: string) {
  const max = isPostgres(db) ? 'greatest' : 'max';
  const set: Record<string, ReturnType<typeof sql.raw>> = {};
  for (const c of SUMS) set[c] = sql.raw(`${table}.${c} + excluded.${c}`);
  set.latency_max_ms = sql.raw(`${max}(${table}.latency_max_ms, excluded.latency_max_ms)`);
  return set;
}

async function addRollups(trx: Transaction<Database>, records: readonly NewRequestRecord[]): Promise<void> {
  const { fine, perService } = rollupsOf(records);
  if (fine.length > 0) {
    await trx
      .insertInto('request_rollups')
      .values(fine)
      .onConflict((oc) => oc.columns(['day', 'service_id', 'user_id', 'method', 'target']).doUpdateSet(additions(trx, 'request_rollups')))
      .execute();
  }
  if (perService.length > 0) {
    await trx
      .insertInto('service_day_rollups')
      .values(perService)
      .onConflict((oc) => oc.columns(['day', 'service_id']).doUpdateSet(additions(trx, 'service_day_rollups')))
      .execute();
  }
}

/**
 * Stores request records and adds them to the daily rollups in the same transaction, a batch at a
 * time: a batch is in both or in neither, so the rollups equal the records they summarise whatever
 * fails, and replicas (each adding its own batches) never count a record twice.
 */
export async function storeRecords(db: Db, records: readonly NewRequestRecord[], stored?: (count: number) => void): Promise<void> {
  for (let i = 0; i < records.length; i += RECORD_BATCH) {
    const batch = records.slice(i, i + RECORD_BATCH);
    await db.transaction().execute((trx) => storeRecordsIn(trx, batch));
    // Committed: a caller that keeps what failed for later must not keep these.
    stored?.(i + batch.length);
  }
}

/** The same inside the caller's transaction (the meter's batch, decision 0043): any number of records. */
export async function storeRecordsIn(trx: Transaction<Database>, records: readonly NewRequestRecord[]): Promise<void> {
  if (records.length === 0) return;
  if (isPostgres<Database>(trx)) await sql`SELECT pg_advisory_xact_lock_shared(${ROLLUP_LOCK}::bigint)`.execute(trx);
  for (let i = 0; i < records.length; i += RECORD_BATCH) {
    const batch = records.slice(i, i + RECORD_BATCH);
    await trx.insertInto('request_records').values(batch).execute();
    await addRollups(trx, batch);
  }
}

export interface RecomputeResult {
  /** Days whose rollups now equal their records. */
  rebuilt: string[];
  /** Days left alone: fewer records than their rollups count, so the retention purge removed some. */
  skipped: string[];
}

/**
 * Rebuilds the rollups of the given days from request_records: for records stored without them
 * (an older replica during an upgrade, a bulk import, the benchmark). Idempotent: each day is
 * replaced in one transaction under the exclusive rollup lock, so two concurrent runs, or a run and
 * a flush, leave the same rows. A day whose records were purged is skipped: its rollups are the only
 * history left of it.
 */
export async function recomputeRollups(db: Db, days: readonly string[]): Promise<RecomputeResult> {
  const result: RecomputeResult = { rebuilt: [], skipped: [] };
  const postgres = isPostgres(db);
  for (const day of [...new Set(days)].sort()) {
    const rebuilt = await db.transaction().execute(async (trx) => {
      if (postgres) await sql`SELECT pg_advisory_xact_lock(${ROLLUP_LOCK}::bigint)`.execute(trx);
      const raw = await trx
        .selectFrom('request_records')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('day', '=', day)
        .executeTakeFirst();
      const rolled = await trx
        .selectFrom('service_day_rollups')
        .select(sql<number>`SUM(request_count + limited_count)`.as('n'))
        .where('day', '=', day)
        .executeTakeFirst();
      if (Number(raw?.n ?? 0) < Number(rolled?.n ?? 0)) return false;
      await trx.deleteFrom('request_rollups').where('day', '=', day).execute();
      await trx.deleteFrom('service_day_rollups').where('day', '=', day).execute();
      await sql`
        INSERT INTO request_rollups (day, service_id, user_id, method, target, ${FIGURE_COLUMNS})
        SELECT day, service_id, user_id, method, target, ${ROLLUP_SELECT}
        FROM request_records WHERE day = ${day} GROUP BY day, service_id, user_id, method, target`.execute(trx);
      await sql`
        INSERT INTO service_day_rollups (day, service_id, ${FIGURE_COLUMNS})
        SELECT day, service_id, ${ROLLUP_SELECT}
        FROM request_records WHERE day = ${day} GROUP BY day, service_id`.execute(trx);
      return true;
    });
    (rebuilt ? result.rebuilt : result.skipped).push(day);
  }
  return result;
}

/** Every day that has request records, oldest first: one index lookup per day, whatever the row count. */
export async function recordedDays(db: Db): Promise<string[]> {
  const days: string[] = [];
  let after = '';
  for (;;) {
    const row = await db
      .selectFrom('request_records')
      .select((eb) => eb.fn.min('day').as('day'))
      .where('day', '>', after)
      .executeTakeFirst();
    if (!row?.day) return days;
    days.push(row.day);
    after = row.day;
  }
}
