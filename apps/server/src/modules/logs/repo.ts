import type { LogEntry } from '@toolport/contract';
import { type RawBuilder, sql } from 'kysely';
import type { Db } from '../../db/db.js';
import { isPostgres } from '../../db/migrations/helpers.js';
import { dayEnd } from '../history/index.js';

export interface LogFilter {
  serviceId?: number | undefined;
  /** Part of the service name, case-insensitive. */
  serviceName?: string | undefined;
  phase?: string | undefined;
  level?: string | undefined;
}

/** A counted request's outcome as a log level, and back. */
const LEVEL_OF: Record<string, string> = { ok: 'info', limited: 'warn', error: 'error' };
const OUTCOME_OF: Record<string, string> = { info: 'ok', warn: 'limited', error: 'error' };

/** The rollup figure that counts the records of a level (see RollupFigures). */
const COUNT_OF: Record<string, string> = {
  all: 'request_count + limited_count',
  ok: 'request_count - error_count',
  error: 'error_count',
  limited: 'limited_count',
};

/** On PostgreSQL, up to this many services matched by a name filter are read as one ordered arm each. */
const MAX_MERGED_SERVICES = 32;

/** Which request records a filter lets through; `null` when none can match. */
interface RecordScope {
  /** Undefined: every service. */
  serviceIds: number[] | undefined;
  outcome: string | undefined;
}

/** The last index in [lo, hi] where `ok` holds, given that it holds at lo and is monotone (true, then false). */
async function searchLast(lo: number, hi: number, ok: (i: number) => Promise<boolean>): Promise<number> {
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (await ok(mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** The first index in [lo, hi] where `ok` holds, given that it holds at hi and is monotone (false, then true). */
async function searchFirst(lo: number, hi: number, ok: (i: number) => Promise<boolean>): Promise<number> {
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (await ok(mid)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

const literalLike = (part: string) => `%${part.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
const and = (parts: RawBuilder<unknown>[]) => (parts.length > 0 ? sql.join(parts, sql` AND `) : sql`1 = 1`);

/**
 * The Logs screen: service log lines (installs, process stderr, upstream failures) and counted
 * requests (request_records, shown as `run` lines with the outcome as level and a negative id),
 * newest first, under the console's filters.
 *
 * Fast at millions of records, whatever the page: no query counts or skips through the records.
 * The total and the day a page falls in come from the per-service daily rollups (a few rows a
 * day) and index range counts of the service log (a small table next to the records); the page is
 * then read from that day's window only, through the index of the filter (created_at; service,
 * level, or both, then created_at), from whichever end of the window is nearer. Days are those of
 * the TimeZone preference, as in the records; after a change of it, pages around the days written
 * under the old zone may repeat or skip a few lines.
 */
export class LogsRepo {
  private readonly postgres: boolean;

  constructor(
    private readonly db: Db,
    private readonly redact: (message: string) => string = (m) => m,
  ) {
    this.postgres = isPostgres(db);
  }

  async page(f: LogFilter, page: number, pageSize: number, timeZone: string): Promise<{ logs: LogEntry[]; total: number }> {
    let scope = await this.recordScope(f);
    const recordDays = scope ? await this.recordDays(scope) : [];
    // Records are read only where the rollups count them: the same rows for the total and the pages.
    if (recordDays.length === 0) scope = null;

    // Boundaries, newest first: above everything, at the end of each day that has records, below
    // everything, with the number of records newer than each (from the rollups).
    const bounds: { at: number; records: number }[] = [{ at: Number.POSITIVE_INFINITY, records: 0 }];
    let recordsTotal = 0;
    for (const d of recordDays) {
      bounds.push({ at: dayEnd(timeZone, d.day), records: recordsTotal });
      recordsTotal += d.count;
    }
    bounds.push({ at: Number.NEGATIVE_INFINITY, records: recordsTotal });
    const last = bounds.length - 1;
    const skip = (page - 1) * pageSize;

    // The window [lower.at, upper.at) holds the page: `upper` is the last boundary with at most `skip`
    // rows (records and log lines) newer than it, `lower` the first with at least skip + take. The
    // records alone bound both searches: `upper` is at most the last boundary with at most `skip`
    // records above it, `lower` at most the first with skip + pageSize. The service log is scanned
    // once, for its total and its lines above those two boundaries; any other boundary the searches
    // visit is counted from the nearest known one over the few days in between.
    const upperMax = bounds.findLastIndex((b) => b.records <= skip);
    const lowerMax = bounds.findIndex((b, i) => i === last || b.records >= skip + pageSize);
    const scan = await this.countLogsAbove(f, [(bounds[upperMax] as { at: number }).at, (bounds[lowerMax] as { at: number }).at]);
    const logsTotal = scan.total;
    const total = recordsTotal + logsTotal;
    const take = Math.min(pageSize, total - skip);
    if (take <= 0) return { logs: [], total };

    const known = new Map<number, number>([
      [0, 0],
      [last, logsTotal],
      [upperMax, scan.above[0] as number],
      [lowerMax, scan.above[1] as number],
    ]);
    /** Rows (records and log lines) newer than boundary i. */
    const newer = async (i: number): Promise<number> => {
      const b = bounds[i] as { at: number; records: number };
      let logs = known.get(i);
      if (logs === undefined) {
        const near = [...known.keys()].reduce((a, k) => (Math.abs(k - i) < Math.abs(a - i) ? k : a));
        const at = (bounds[near] as { at: number }).at;
        const between = near < i ? await this.countLogs(f, b.at, at) : await this.countLogs(f, at, b.at);
        logs = (known.get(near) as number) + (near < i ? between : -between);
        known.set(i, logs);
      }
      return i === last ? total : b.records + logs;
    };
    const upperIndex = await searchLast(
      Math.max(
        0,
        bounds.findLastIndex((b) => b.records + logsTotal <= skip),
      ),
      upperMax,
      async (i) => (await newer(i)) <= skip,
    );
    const lowerIndex = await searchFirst(
      bounds.findIndex((b, i) => i === last || b.records + logsTotal >= skip + take),
      bounds.findIndex((b, i) => i === last || b.records >= skip + take),
      async (i) => (await newer(i)) >= skip + take,
    );
    const upper = await newer(upperIndex);
    const inWindow = (await newer(lowerIndex)) - upper;
    const fromTop = skip - upper;
    const fromBottom = inWindow - fromTop - take;
    const lowerAt = (bounds[lowerIndex] as { at: number }).at;
    const upperAt = (bounds[upperIndex] as { at: number }).at;
    const from = Number.isFinite(lowerAt) ? lowerAt : undefined;
    const to = Number.isFinite(upperAt) ? upperAt : undefined;
    const arms = [sql`SELECT id, created_at, 0 AS src FROM service_logs WHERE ${this.logConditions(f, from, to)}`];
    if (scope) arms.unshift(...this.recordArms(scope, from, to));
    const keys =
      fromTop <= fromBottom ? await this.merged(arms, 'DESC', take, fromTop) : (await this.merged(arms, 'ASC', take, fromBottom)).reverse();
    return { logs: await this.lines(keys), total };
  }

  /**
   * Rows `skip`..`skip + take` of the arms merged in (created_at, id) order. SQLite merges a compound
   * SELECT's ordered arms itself (MERGE (UNION ALL)); PostgreSQL does so (Merge Append) only for
   * arms that are ordered and limited subqueries, otherwise it sorts the whole window.
   */
  private async merged(arms: RawBuilder<unknown>[], direction: 'ASC' | 'DESC', take: number, skip: number): Promise<PageKey[]> {
    const order = sql.raw(`ORDER BY created_at ${direction}, id ${direction}`);
    const union = this.postgres
      ? sql`SELECT * FROM (${sql.join(
          arms.map((arm) => sql`(${arm} ${order} LIMIT ${skip + take})`),
          sql` UNION ALL `,
        )}) merged`
      : sql.join(arms, sql` UNION ALL `);
    return (await sql<PageKey>`${union} ${order} LIMIT ${take} OFFSET ${skip}`.execute(this.db)).rows;
  }

  /** Service log lines under the filter: all of them, and those at or after each of some instants, in one scan. */
  private async countLogsAbove(f: LogFilter, instants: number[]): Promise<{ total: number; above: number[] }> {
    const columns = instants.map((at, i) =>
      Number.isFinite(at)
        ? sql`SUM(CASE WHEN created_at >= ${at} THEN 1 ELSE 0 END) AS ${sql.ref(`above${i}`)}`
        : sql`${at > 0 ? sql.lit(0) : sql`COUNT(*)`} AS ${sql.ref(`above${i}`)}`,
    );
    const { rows } = await sql<Record<string, number | null>>`
      SELECT COUNT(*) AS total, ${sql.join(columns)} FROM service_logs WHERE ${this.logConditions(f)}`.execute(this.db);
    const row = rows[0] ?? {};
    return { total: Number(row.total ?? 0), above: instants.map((_, i) => Number(row[`above${i}`] ?? 0)) };
  }

  /** Service log lines under the filter, optionally only those in [from, to): an index range count. */
  private async countLogs(f: LogFilter, from?: number, to?: number): Promise<number> {
    const { rows } = await sql<{ n: number }>`SELECT COUNT(*) AS n FROM service_logs WHERE ${this.logConditions(f, from, to)}`.execute(
      this.db,
    );
    return Number(rows[0]?.n ?? 0);
  }

  /** The request records a filter can match: none for the install phase or a service name no service has. */
  private async recordScope(f: LogFilter): Promise<RecordScope | null> {
    if (f.phase && f.phase !== 'run') return null;
    let serviceIds: number[] | undefined;
    if (f.serviceName) {
      const rows = await this.db
        .selectFrom('services')
        .select('id')
        .where(sql<boolean>`lower(name) like ${literalLike(f.serviceName)} escape '\\'`)
        .execute();
      serviceIds = rows.map((r) => r.id).filter((id) => f.serviceId === undefined || id === f.serviceId);
      if (serviceIds.length === 0) return null;
    } else if (f.serviceId !== undefined) {
      serviceIds = [f.serviceId];
    }
    return { serviceIds, outcome: f.level ? OUTCOME_OF[f.level] : undefined };
  }

  /**
   * Records per day under the scope, newest first, from the per-service daily rollups. Days before
   * the oldest stored record were purged (whole days at a time, so every later day is complete).
   */
  private async recordDays(scope: RecordScope): Promise<{ day: string; count: number }[]> {
    const oldest = await this.db
      .selectFrom('request_records')
      .select((eb) => eb.fn.min('day').as('day'))
      .executeTakeFirst();
    if (!oldest?.day) return [];
    let q = this.db
      .selectFrom('service_day_rollups')
      .select(['day', sql<number>`SUM(${sql.raw(COUNT_OF[scope.outcome ?? 'all'] as string)})`.as('n')])
      .where('day', '>=', oldest.day);
    if (scope.serviceIds) q = q.where('service_id', 'in', scope.serviceIds);
    const rows = await q.groupBy('day').orderBy('day', 'desc').execute();
    return rows.map((r) => ({ day: r.day, count: Number(r.n ?? 0) })).filter((r) => r.count > 0);
  }

  /** Bounds that are not finite (above or below everything) are left out. */
  private logConditions(f: LogFilter, from?: number, to?: number): RawBuilder<unknown> {
    const parts: RawBuilder<unknown>[] = [];
    if (from !== undefined && Number.isFinite(from)) parts.push(sql`created_at >= ${from}`);
    if (to !== undefined && Number.isFinite(to)) parts.push(sql`created_at < ${to}`);
    if (f.serviceId !== undefined) parts.push(sql`service_id = ${f.serviceId}`);
    // LIKE wildcards typed by the admin are taken literally.
    if (f.serviceName) parts.push(sql`lower(service_name) like ${literalLike(f.serviceName)} escape '\\'`);
    if (f.phase) parts.push(sql`phase = ${f.phase}`);
    if (f.level) parts.push(sql`level = ${f.level}`);
    return and(parts);
  }

  /**
   * The records of the window as ordered SELECTs. Several services (a name filter): on SQLite one
   * scan of the (created_at, id, service_id, outcome) index, filtered from the index alone (`+`
   * keeps the planner on it); on PostgreSQL one arm per service from its (service_id[, outcome],
   * created_at) index, which the planner merges (Merge Append).
   */
  private recordArms(scope: RecordScope, from?: number, to?: number): RawBuilder<unknown>[] {
    const range: RawBuilder<unknown>[] = [];
    if (from !== undefined) range.push(sql`created_at >= ${from}`);
    if (to !== undefined) range.push(sql`created_at < ${to}`);
    const arm = (parts: RawBuilder<unknown>[]) =>
      sql`SELECT id, created_at, 1 AS src FROM request_records WHERE ${and([...range, ...parts])}`;
    const outcome = scope.outcome;
    const ids = scope.serviceIds;
    if (!ids || ids.length === 1) {
      const parts: RawBuilder<unknown>[] = [];
      if (ids) parts.push(sql`service_id = ${ids[0]}`);
      if (outcome) parts.push(sql`outcome = ${outcome}`);
      return [arm(parts)];
    }
    const byOutcome = outcome ? [sql`outcome = ${outcome}`] : [];
    if (this.postgres && ids.length <= MAX_MERGED_SERVICES) return ids.map((id) => arm([sql`service_id = ${id}`, ...byOutcome]));
    const list = sql.join(ids);
    if (this.postgres) return [arm([sql`service_id IN (${list})`, ...byOutcome])];
    return [arm([sql`+service_id IN (${list})`, ...(outcome ? [sql`+outcome = ${outcome}`] : [])])];
  }

  /** The rows of a page, in its order. */
  private async lines(keys: PageKey[]): Promise<LogEntry[]> {
    const logIds = keys.filter((k) => Number(k.src) === 0).map((k) => Number(k.id));
    const recordIds = keys.filter((k) => Number(k.src) === 1).map((k) => Number(k.id));
    const [logRows, recordRows] = await Promise.all([
      logIds.length > 0 ? this.db.selectFrom('service_logs').selectAll().where('id', 'in', logIds).execute() : [],
      recordIds.length > 0 ? this.db.selectFrom('request_records').selectAll().where('id', 'in', recordIds).execute() : [],
    ]);
    const serviceIds = [...new Set(recordRows.map((r) => r.service_id))];
    const names = new Map(
      serviceIds.length > 0
        ? (await this.db.selectFrom('services').select(['id', 'name']).where('id', 'in', serviceIds).execute()).map((s) => [s.id, s.name])
        : [],
    );
    const byKey = new Map<string, LogEntry>();
    for (const r of logRows) byKey.set(`0:${r.id}`, r);
    for (const r of recordRows) {
      byKey.set(`1:${r.id}`, {
        id: -r.id,
        created_at: r.created_at,
        service_id: r.service_id,
        service_name: names.get(r.service_id) ?? '',
        phase: 'run',
        level: LEVEL_OF[r.outcome] ?? 'info',
        message: this.redact(requestMessage(r)),
      });
    }
    return keys.flatMap((k) => byKey.get(`${Number(k.src)}:${Number(k.id)}`) ?? []);
  }
}

interface PageKey {
  id: number;
  created_at: number;
  src: number;
}

/** One line per counted request: what was called, by whom, how it went. */
export function requestMessage(r: {
  method: string;
  target: string;
  user_id: number;
  outcome: string;
  latency_ms: number;
  bytes_in: number;
  bytes_out: number;
  error_message: string;
}): string {
  const call = r.target ? `${r.method} ${r.target}` : r.method;
  if (r.outcome === 'limited') return `${call}: refused for user ${r.user_id}: ${r.error_message || 'daily request limit exceeded'}`;
  if (r.outcome === 'error') return `${call}: failed after ${r.latency_ms} ms for user ${r.user_id}: ${r.error_message || 'error'}`;
  return `${call}: ok in ${r.latency_ms} ms for user ${r.user_id} (${r.bytes_in} B in, ${r.bytes_out} B out)`;
}
