import type { HealthCheckResult } from '@toolport/contract';
import type { ServiceCatalog } from '../../gateway/catalog.js';
import type { HealthResult } from '../../gateway/link-api.js';
import { badRequest, notFound } from '../../http/errors.js';
import type { ServiceLog } from '../../infra/service-log.js';
import type { ServicesRepo } from './repo.js';

/** The gateway's part of a health check: a real MCP round trip, whose result it stores through the catalog. */
export interface HealthProbe {
  checkHealth(serviceId: number): Promise<HealthResult>;
  /** Restarts the service's link(s), then checks (the console's Reconnect). */
  reconnect(serviceId: number): Promise<HealthResult>;
}

export interface HealthChecksDeps {
  repo: ServicesRepo;
  probe: HealthProbe;
  catalog: Pick<ServiceCatalog, 'recordHealth'>;
  serviceLog: Pick<ServiceLog, 'redact'>;
}

/**
 * On-demand health checks (the console's refresh button, the first check of a new service): a real
 * MCP round trip by the gateway, which stores the result through the catalog. Checks of one service
 * that overlap share one round trip, so a burst of clicks costs one. The periodic checks are the
 * gateway's own (they know which processes are running).
 */
export class HealthChecks {
  private readonly inflight = new Map<number, Promise<HealthCheckResult>>();

  constructor(private readonly deps: HealthChecksDeps) {}

  check(serviceId: number): Promise<HealthCheckResult> {
    const running = this.inflight.get(serviceId);
    if (running) return running;
    const next = this.run(serviceId).finally(() => this.inflight.delete(serviceId));
    this.inflight.set(serviceId, next);
    return next;
  }

  /**
   * Reconnect: restarts the service's link and checks it again. A disabled service has nothing to reconnect
   * (400, localised). Overlapping reconnects of one service share one restart, as checks do.
   */
  async reconnect(serviceId: number): Promise<HealthCheckResult> {
    const row = await this.deps.repo.byId(serviceId);
    if (!row) throw notFound('service.not_found');
    if (!row.enabled) throw badRequest('service.reconnect_disabled', { name: row.display_name || row.name });
    const key = -serviceId - 1;
    const running = this.inflight.get(key);
    if (running) return running;
    const next = this.run(serviceId, 'reconnect').finally(() => this.inflight.delete(key));
    this.inflight.set(key, next);
    return next;
  }

  private async run(serviceId: number, how: 'check' | 'reconnect' = 'check'): Promise<HealthCheckResult> {
    if (!(await this.deps.repo.byId(serviceId))) throw notFound('service.not_found');
    let result: HealthResult;
    try {
      result = how === 'reconnect' ? await this.deps.probe.reconnect(serviceId) : await this.deps.probe.checkHealth(serviceId);
    } catch (err) {
      // The gateway records its own results; a failure to even try is recorded here.
      result = {
        status: 'unhealthy',
        details: this.deps.serviceLog.redact(err instanceof Error ? err.message : String(err)),
        checkedAt: Date.now(),
      };
      await this.deps.catalog.recordHealth(serviceId, result);
    }
    const row = await this.deps.repo.byId(serviceId);
    return {
      health_status: result.status,
      health_details: result.details,
      last_checked: row?.last_health_check ?? result.checkedAt,
      tool_count: result.toolCount ?? row?.tool_count ?? 0,
    };
  }
}
