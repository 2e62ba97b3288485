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
  /** A round trip through one user's own link, recorded nowhere (absent where no gateway runs, as in `toolport import`). */
  checkHealthAs?(serviceId: number, userId: number): Promise<HealthResult>;
}

/**
 * Users' own connections to per-user OAuth services (modules/upstream-authorization): a user's check of such a
 * service goes through their connection, and its result is kept with it, not on the service's row.
 */
export interface PersonalConnections {
  /**
   * The user's own connection to the service when their check goes through it (per-user mode, connected), with the
   * tool count of its last check; undefined otherwise.
   */
  connectionOf(serviceId: number, userId: number): Promise<{ toolCount: number | null } | undefined>;
  recordCheck(serviceId: number, userId: number, result: HealthResult): Promise<void>;
}

export interface HealthChecksDeps {
  repo: ServicesRepo;
  probe: HealthProbe;
  catalog: Pick<ServiceCatalog, 'recordHealth'>;
  serviceLog: Pick<ServiceLog, 'redact'>;
  personal?: PersonalConnections;
}

/**
 * On-demand health checks (the console's refresh button, the first check of a new service): a real
 * MCP round trip by the gateway, which stores the result through the catalog. Checks of one service
 * that overlap share one round trip (one per user for users' own connections), so a burst of clicks costs one. The periodic checks are the
 * gateway's own (they know which processes are running).
 */
export class HealthChecks {
  private readonly inflight = new Map<string, Promise<HealthCheckResult>>();

  constructor(private readonly deps: HealthChecksDeps) {}

  /**
   * `caller`: who asks. A user connected to a per-user OAuth service checks their own connection (the shared check
   * has no user and cannot list its tools); everyone else, and every check without a caller, checks the service.
   */
  async check(serviceId: number, caller?: { id: number }): Promise<HealthCheckResult> {
    const own = caller && this.deps.probe.checkHealthAs ? await this.deps.personal?.connectionOf(serviceId, caller.id) : undefined;
    if (!caller || !own) return this.once(`check:${serviceId}`, () => this.run(serviceId));
    return this.once(`check:${serviceId}:${caller.id}`, () => this.runAs(serviceId, caller.id, own.toolCount));
  }

  private once(key: string, start: () => Promise<HealthCheckResult>): Promise<HealthCheckResult> {
    const running = this.inflight.get(key);
    if (running) return running;
    const next = start().finally(() => this.inflight.delete(key));
    this.inflight.set(key, next);
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
    return this.once(`reconnect:${serviceId}`, () => this.run(serviceId, 'reconnect'));
  }

  /** One user's connection checked through their own link; a disabled service is checked as any other (stopped). */
  private async runAs(serviceId: number, userId: number, lastCount: number | null): Promise<HealthCheckResult> {
    const row = await this.deps.repo.byId(serviceId);
    if (!row) throw notFound('service.not_found');
    const probe = this.deps.probe.checkHealthAs?.bind(this.deps.probe);
    if (!row.enabled || !probe || !this.deps.personal) return this.run(serviceId);
    const result = await probe(serviceId, userId).catch(
      (err): HealthResult => ({ status: 'unhealthy', details: this.deps.serviceLog.redact(text(err)), checkedAt: Date.now() }),
    );
    await this.deps.personal.recordCheck(serviceId, userId, result);
    return {
      health_status: result.status,
      health_details: result.details,
      last_checked: result.checkedAt,
      tool_count: result.toolCount ?? lastCount ?? 0,
    };
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
        details: this.deps.serviceLog.redact(text(err)),
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

const text = (err: unknown): string => (err instanceof Error ? err.message : String(err));
