import type { HealthResult } from '../link-api.js';
import { checkServiceHealth, type HealthHost } from './health.js';
import { Link } from './link.js';
import { openUpstream } from './open-upstream.js';
import type { PoolDeps } from './pool-deps.js';
import { defaultTuning, type UpstreamTuning } from './types.js';

export type OneOffHealthDeps = Pick<
  PoolDeps,
  'catalog' | 'serviceLog' | 'options' | 'logger' | 'config' | 'metrics' | 'remoteFetch' | 'memory'
>;

/**
 * Health checks without a pool: every check is a short-lived connection of its own (initialize +
 * tools/list), closed at once, recorded through the catalog like the pool's. For commands that install
 * services without serving them (`toolport import`): no `boot` service starts, no periodic check runs,
 * nothing reacts to configuration events.
 */
export class OneOffHealth {
  private readonly probes = new Set<Link>();
  private readonly host: HealthHost;
  private closed = false;

  constructor(deps: OneOffHealthDeps, tuning: Partial<UpstreamTuning> = {}) {
    const full = { ...defaultTuning, ...tuning };
    const linkDeps = { serviceLog: deps.serviceLog, options: deps.options, logger: deps.logger, tuning: full, metrics: deps.metrics };
    this.host = {
      catalog: deps.catalog,
      serviceLog: deps.serviceLog,
      options: deps.options,
      logger: deps.logger,
      readyLink: () => undefined,
      probe: async (spec) => {
        if (this.closed) throw new Error('the health probe is closed');
        const link = new Link({ spec, mode: 'shared', deps: linkDeps, open: (current) => openUpstream(deps, full, current, undefined) });
        this.probes.add(link);
        try {
          await link.ensureReady();
          return { toolCount: link.toolCount, about: link.about };
        } finally {
          this.probes.delete(link);
          await link.close('health check finished');
        }
      },
    };
  }

  checkHealth(serviceId: number): Promise<HealthResult> {
    return checkServiceHealth(this.host, serviceId);
  }

  /** Nothing runs here to restart: a reconnect is a fresh check. */
  reconnect(serviceId: number): Promise<HealthResult> {
    return this.checkHealth(serviceId);
  }

  /** Stops the checks still under way (their processes included). */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.probes].map((link) => link.close('the health probe is closing')));
  }
}
