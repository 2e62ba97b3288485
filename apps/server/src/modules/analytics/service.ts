import {
  HISTORY_DEFAULT_DAYS,
  HISTORY_MAX_DAYS,
  HISTORY_MAX_TARGETS,
  type ServiceUtilization,
  type SystemOverview,
  type UsageHistory,
} from '@toolport/contract';
import { badRequest, forbidden } from '../../http/errors.js';
import { dayIn } from '../../infra/day.js';
import { addDays, daysBetween, isDay } from '../history/index.js';
import type { OptionsService } from '../options/index.js';
import { type AnalyticsRepo, noTotals, type Totals } from './repo.js';

/** The caller of an analytics route, as far as access goes. */
export interface Caller {
  id: number;
  role: number;
}

/** Which services a caller may not see (the exposure module's access lists). */
export interface AnalyticsAccess {
  hiddenFrom(user: Caller, subject: 'service'): Promise<number[]>;
}

/** Average latency in ms with two decimals; 0 when nothing was counted. */
const average = (t: Pick<Totals, 'requests' | 'latencyMs'> | undefined): number =>
  t && t.requests > 0 ? Math.round((t.latencyMs / t.requests) * 100) / 100 : 0;

const figures = (t: Totals) => ({
  requests: t.requests,
  errors: t.errors,
  limited: t.limited,
  avg_latency_ms: average(t),
  max_latency_ms: t.maxLatencyMs,
  bytes_in: t.bytesIn,
  bytes_out: t.bytesOut,
});

const busiestFirst = (a: Totals, b: Totals) => b.requests + b.limited - (a.requests + a.limited);

/**
 * The dashboard's and analytics screen's figures, from the daily rollups (fast at any history
 * size, and still there after the raw records' retention). "Today" is the day in the TimeZone
 * preference, as for daily limits.
 */
export class AnalyticsService {
  constructor(
    private readonly repo: AnalyticsRepo,
    private readonly options: Pick<OptionsService, 'get'>,
    /** Who may see which service (issue 17): without it every caller sees every service. */
    private readonly access?: AnalyticsAccess,
    /** Folds this replica's metering journal first, so today's counts read are those enforced (decision 0043). */
    private readonly settleCounts?: () => Promise<void>,
  ) {}

  /** The services the caller may not use: left out of every figure they are shown. */
  private hiddenFrom(caller: Caller | undefined): Promise<number[]> {
    return caller && this.access ? this.access.hiddenFrom(caller, 'service') : Promise.resolve([]);
  }

  /** The service rows the caller may see. */
  private async visibleServices(hidden: number[]) {
    const services = await this.repo.services();
    return hidden.length === 0 ? services : services.filter((s) => !hidden.includes(s.id));
  }

  private today(): string {
    return dayIn(this.options.get('TimeZone'));
  }

  /** Today's counts as the meter enforces them (daily_counters), not the rollups a second behind. */
  private async todayPerService(hidden: number[]): Promise<Map<number, Pick<Totals, 'requests' | 'latencyMs'>>> {
    await this.settleCounts?.();
    return this.repo.countersOf(this.today(), hidden);
  }

  async overview(caller?: Caller): Promise<SystemOverview> {
    const hidden = await this.hiddenFrom(caller);
    const [services, perService] = await Promise.all([this.visibleServices(hidden), this.todayPerService(hidden)]);
    const enabled = services.filter((s) => s.enabled === 1);
    const status = (s: { health_status: string }) => s.health_status.toLowerCase();
    // Every counted request of today, including those of services uninstalled since (not those hidden from the caller).
    const total = [...perService.values()].reduce((a, t) => ({ requests: a.requests + t.requests, latencyMs: a.latencyMs + t.latencyMs }), {
      requests: 0,
      latencyMs: 0,
    });
    return {
      enabled_services: enabled.length,
      healthy_services: enabled.filter((s) => status(s) === 'healthy').length,
      unhealthy_services: enabled.filter((s) => status(s) === 'unhealthy').length,
      today_total_requests: total.requests,
      today_avg_response_time_ms: average(total),
    };
  }

  async utilization(caller?: Caller): Promise<ServiceUtilization[]> {
    const hidden = await this.hiddenFrom(caller);
    const [services, perService] = await Promise.all([this.visibleServices(hidden), this.todayPerService(hidden)]);
    return services.map((s) => {
      const t = perService.get(s.id);
      return {
        service_id: s.id,
        service_name: s.name,
        display_name: s.display_name || s.name,
        enabled: s.enabled === 1,
        today_request_count: t?.requests ?? 0,
        today_avg_latency_ms: average(t),
      };
    });
  }

  /**
   * Figures of a range of days (default: the last 30 days up to today): a series per day, per
   * service and, for one service, per method and target. Bad dates are refused with a message
   * naming the field.
   */
  async history(
    q: { from?: string | undefined; to?: string | undefined; serviceId?: number | undefined; userId?: number | undefined },
    caller?: Caller,
  ) {
    for (const [field, value] of [
      ['from', q.from],
      ['to', q.to],
    ] as const) {
      if (value && !isDay(value)) throw badRequest('analytics.invalid_day', { field, value }, 'invalid_day');
    }
    const to = q.to || (q.from ? addDays(q.from, HISTORY_DEFAULT_DAYS - 1) : this.today());
    const from = q.from || addDays(to, -(HISTORY_DEFAULT_DAYS - 1));
    const span = daysBetween(from, to) + 1;
    if (span < 1) throw badRequest('analytics.invalid_range', { from, to }, 'invalid_range');
    if (span > HISTORY_MAX_DAYS) throw badRequest('analytics.range_too_long', { max: HISTORY_MAX_DAYS }, 'range_too_long');

    const hidden = await this.hiddenFrom(caller);
    // Refused by id alone: the name of a service the caller may not use is not theirs to learn.
    if (q.serviceId !== undefined && hidden.includes(q.serviceId)) throw forbidden('access.no_access_service_id', { id: q.serviceId });
    const filter = { from, to, serviceId: q.serviceId, userId: q.userId, hidden };
    const [services, perDay, perService, perTarget] = await Promise.all([
      this.visibleServices(hidden),
      this.repo.perDay(filter),
      this.repo.perService(filter),
      q.serviceId !== undefined ? this.repo.perTarget({ ...filter, serviceId: q.serviceId }, HISTORY_MAX_TARGETS) : Promise.resolve([]),
    ]);
    const names = new Map(services.map((s) => [s.id, s.name]));
    const result: UsageHistory = {
      from,
      to,
      days: Array.from({ length: span }, (_, i) => {
        const day = addDays(from, i);
        return { day, ...figures(perDay.get(day) ?? noTotals()) };
      }),
      services: [...perService.entries()]
        .sort(([ia, a], [ib, b]) => busiestFirst(a, b) || ia - ib)
        .map(([id, t]) => ({ service_id: id, service_name: names.get(id) ?? '', ...figures(t) })),
      targets: perTarget.map((t) => ({ method: t.method, target: t.target, ...figures(t) })),
    };
    return result;
  }
}
