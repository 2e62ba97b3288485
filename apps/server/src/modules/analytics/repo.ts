import { sql } from 'kysely';
import type { Db } from '../../db/db.js';

/** Summed rollup figures of some days (see RollupFigures in db/schema.ts). */
export interface Totals {
  requests: number;
  errors: number;
  limited: number;
  latencyMs: number;
  maxLatencyMs: number;
  bytesIn: number;
  bytesOut: number;
}

export const noTotals = (): Totals => ({ requests: 0, errors: 0, limited: 0, latencyMs: 0, maxLatencyMs: 0, bytesIn: 0, bytesOut: 0 });

export interface HistoryFilter {
  from: string;
  to: string;
  serviceId?: number | undefined;
  userId?: number | undefined;
  /** Services whose figures are left out: those the caller may not use (issue 17). */
  hidden?: number[] | undefined;
}

const SUMMED = sql<number>`SUM(request_count)`.as('requests');

/** Reads of the daily rollups (migration 0003) and of service state; no rules here. Never scans request_records. */
export class AnalyticsRepo {
  constructor(private readonly db: Db) {}

  services(): Promise<{ id: number; name: string; display_name: string; enabled: number; health_status: string }[]> {
    return this.db.selectFrom('services').select(['id', 'name', 'display_name', 'enabled', 'health_status']).orderBy('id', 'asc').execute();
  }

  /**
   * The rollup rows of a filter: per (day, service) when no user is named (a few rows a day), else
   * the per-user rollup through its (user_id, day) index.
   */
  private rollups(f: HistoryFilter) {
    // Both tables have the columns read here; user_id only the per-user one, which is chosen when it is filtered on.
    const table = f.userId !== undefined ? 'request_rollups' : 'service_day_rollups';
    let q = this.db
      .selectFrom(table as 'service_day_rollups')
      .where('day', '>=', f.from)
      .where('day', '<=', f.to);
    if (f.userId !== undefined) q = q.where(sql.ref('user_id'), '=', f.userId);
    if (f.serviceId !== undefined) q = q.where('service_id', '=', f.serviceId);
    if (f.hidden && f.hidden.length > 0) q = q.where('service_id', 'not in', f.hidden);
    return q;
  }

  private static readonly figures = [
    SUMMED,
    sql<number>`SUM(error_count)`.as('errors'),
    sql<number>`SUM(limited_count)`.as('limited'),
    sql<number>`SUM(latency_sum_ms)`.as('latency'),
    sql<number>`MAX(latency_max_ms)`.as('max_latency'),
    sql<number>`SUM(bytes_in)`.as('bytes_in'),
    sql<number>`SUM(bytes_out)`.as('bytes_out'),
  ];

  private static totals(r: {
    requests: number | null;
    errors: number | null;
    limited: number | null;
    latency: number | null;
    max_latency: number | null;
    bytes_in: number | null;
    bytes_out: number | null;
  }): Totals {
    return {
      requests: Number(r.requests ?? 0),
      errors: Number(r.errors ?? 0),
      limited: Number(r.limited ?? 0),
      latencyMs: Number(r.latency ?? 0),
      maxLatencyMs: Number(r.max_latency ?? 0),
      bytesIn: Number(r.bytes_in ?? 0),
      bytesOut: Number(r.bytes_out ?? 0),
    };
  }

  /** Figures per day of the range (days without requests are absent). */
  async perDay(f: HistoryFilter): Promise<Map<string, Totals>> {
    const rows = await this.rollups(f)
      .select(['day', ...AnalyticsRepo.figures])
      .groupBy('day')
      .execute();
    return new Map(rows.map((r) => [r.day, AnalyticsRepo.totals(r)]));
  }

  /** Figures per service over the range (services without requests are absent). */
  async perService(f: HistoryFilter): Promise<Map<number, Totals>> {
    const rows = await this.rollups(f)
      .select(['service_id', ...AnalyticsRepo.figures])
      .groupBy('service_id')
      .execute();
    return new Map(rows.map((r) => [r.service_id, AnalyticsRepo.totals(r)]));
  }

  /**
   * Today's counted requests and their latency per service from daily_counters, which the meter
   * writes before each admitted call goes on (decision 0021): the figures the limits are enforced on,
   * current to the call, where the rollups follow a second behind.
   */
  async countersOf(day: string, hidden: number[] = []): Promise<Map<number, { requests: number; latencyMs: number }>> {
    let q = this.db
      .selectFrom('daily_counters')
      .select(['service_id', sql<number>`SUM(request_count)`.as('requests'), sql<number>`SUM(total_latency_ms)`.as('latency')])
      .where('day', '=', day);
    if (hidden.length > 0) q = q.where('service_id', 'not in', hidden);
    const rows = await q.groupBy('service_id').execute();
    return new Map(rows.map((r) => [r.service_id, { requests: Number(r.requests ?? 0), latencyMs: Number(r.latency ?? 0) }]));
  }

  /** Figures per method and target of one service over the range, busiest first. */
  async perTarget(f: HistoryFilter & { serviceId: number }, limit: number): Promise<({ method: string; target: string } & Totals)[]> {
    let q = this.db.selectFrom('request_rollups').where('service_id', '=', f.serviceId).where('day', '>=', f.from).where('day', '<=', f.to);
    if (f.userId !== undefined) q = q.where('user_id', '=', f.userId);
    const rows = await q
      .select(['method', 'target', ...AnalyticsRepo.figures])
      .groupBy(['method', 'target'])
      .orderBy(sql`SUM(request_count) + SUM(limited_count)`, 'desc')
      .orderBy('method')
      .orderBy('target')
      .limit(limit)
      .execute();
    return rows.map((r) => ({ method: r.method, target: r.target, ...AnalyticsRepo.totals(r) }));
  }
}
