import type { HealthCheckResult } from '@toolport/contract';
import type { ServiceCatalog } from '../../gateway/catalog.js';
import type { HealthResult } from '../../gateway/link-api.js';
import { notFound } from '../../http/errors.js';
import type { ServiceLog } from '../../infra/service-log.js';
import type { ServicesRepo } from './repo.js';

/** The gateway's part of a health check: a real MCP round trip, whose result it stores through the catalog. */
export interface HealthProbe {
  checkHealth(serviceId: number): Promise<HealthResult>;
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

  private async run(serviceId: number): Promise<HealthCheckResult> {
    if (!(await this.deps.repo.byId(serviceId))) throw notFound('service.not_found');
    let result: HealthResult;
    try {
      result = await this.deps.probe.checkHealth(serviceId);
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
