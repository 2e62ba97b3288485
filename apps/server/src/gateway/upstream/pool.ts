import type { ServiceSpec } from '../catalog.js';
import type { HealthResult, SessionPeer, UpstreamLink, UpstreamPool } from '../link-api.js';
import { Acquisition } from './acquisition.js';
import { BootAndIdle } from './boot-and-idle.js';
import { AuthorizedPerUser, checkServiceHealth, type HealthHost, NeedsAuthorization, PeriodicHealth, type ProbeResult } from './health.js';
import { Link, type LinkHealth } from './link.js';
import { MODERN_REVISION, ModernLink } from './modern-link.js';
import type { PoolDeps } from './pool-deps.js';
import { PoolReactions } from './pool-reactions.js';
import { LinkRegistry } from './registry.js';
import type { RemoteAuth } from './remote-channel.js';
import type { LinkDeps, UpstreamTuning } from './types.js';

export { openUpstream } from './open-upstream.js';
export type { LocalPackages, PoolDeps } from './pool-deps.js';

/**
 * The links of this replica (docs/architecture.md §3, docs/decisions/0044), in one registry keyed by placement
 * (registry.ts, placement.ts): one shared link per service, one per user who has personal variable values or a
 * per-user OAuth connection, one per session for isolated services; for each, a link of the 2026-07-28 era when the
 * upstream speaks it. The jobs are apart: acquisition.ts places and releases, pool-reactions.ts follows the
 * configuration, boot-and-idle.ts starts `boot` services and stops idle links, health.ts checks.
 */
export class LinkPool implements UpstreamPool {
  private readonly registry = new LinkRegistry();
  private readonly probes = new Set<Link>();
  private readonly linkDeps: LinkDeps;
  private readonly acquisition: Acquisition;
  private readonly reactions: PoolReactions;
  private readonly bootAndIdle: BootAndIdle;
  private readonly health: PeriodicHealth;
  private readonly healthHost: HealthHost;
  private readonly stopListening: () => void;
  private closed = false;
  /** Settles once the `boot` services have been started (or failed to). */
  readonly ready: Promise<void>;

  constructor(
    private readonly deps: PoolDeps,
    tuning: UpstreamTuning,
  ) {
    this.linkDeps = { serviceLog: deps.serviceLog, options: deps.options, logger: deps.logger, tuning, metrics: deps.metrics };
    const parts = { deps, tuning, registry: this.registry, closed: () => this.closed };
    this.acquisition = new Acquisition({
      ...parts,
      linkDeps: this.linkDeps,
      // A server that speaks only the 2026-07-28 era is up for the clients of that era: checked in it instead.
      sharedHealth: (serviceId, health) =>
        health.onlyModern ? void this.checkHealth(serviceId).catch(() => undefined) : this.record(serviceId, health),
    });
    this.bootAndIdle = new BootAndIdle({ ...parts, acquisition: this.acquisition, record: (id, health) => this.record(id, health) });
    this.reactions = new PoolReactions({
      ...parts,
      acquisition: this.acquisition,
      strategyChanged: () => void this.bootAndIdle.applyStrategy(),
      healthIntervalChanged: () => this.health.schedule(),
      keepIfBootable: (spec) => this.bootAndIdle.keepIfBootable(spec),
    });
    this.healthHost = {
      ...deps,
      readyLink: (serviceId) => {
        const link = this.sharedLink(serviceId);
        return link?.state === 'ready' ? link : undefined;
      },
      probe: (spec) => this.probe(spec),
    };
    this.health = new PeriodicHealth(this.healthHost);
    this.health.schedule();
    this.stopListening = deps.events.on((event) => this.reactions.on(event));
    this.ready = this.bootAndIdle.applyStrategy();
  }

  acquire(service: ServiceSpec, session: SessionPeer): Promise<UpstreamLink> {
    return this.acquisition.acquire(service, session);
  }

  release(serviceId: number, session: SessionPeer): void {
    this.acquisition.release(serviceId, session);
  }

  async checkHealth(serviceId: number): Promise<HealthResult> {
    // A change of the service still being applied (an Update's new files, an edit) is applied first: the check
    // is of what the service is now, never of the link the change is stopping.
    await this.reactions.settled(serviceId);
    return checkServiceHealth(this.healthHost, serviceId);
  }

  async reconnect(serviceId: number): Promise<HealthResult> {
    // The other replicas restart theirs when they hear of it (pool-reactions.ts); this one reports the result.
    this.deps.events.announce({ type: 'service.reconnect', serviceId });
    await this.reactions.restartLinks(serviceId, 'reconnect asked by an administrator');
    const shared = this.sharedLink(serviceId);
    // A link that starts again (kept alive, or sessions attached) is checked once it is up; a failed start is
    // what the check then reports, through a connection of its own.
    if (shared?.state === 'starting') await shared.ensureReady().catch(() => undefined);
    return checkServiceHealth(this.healthHost, serviceId);
  }

  async shutdown(): Promise<void> {
    this.closed = true;
    this.stopListening();
    this.bootAndIdle.stop();
    this.health.stop();
    const links = [...this.registry.clear().map((e) => e.link), ...this.probes];
    await Promise.all(links.map((link) => link.close('the gateway is shutting down')));
  }

  /** Live links of the 2025-11-25 era, for tests and metrics. */
  links(serviceId?: number): Link[] {
    return this.registry.sessionEra(serviceId).map((e) => e.link);
  }

  /** Live links of the 2026-07-28 era, for tests and metrics. */
  modernLinks(serviceId?: number): ModernLink[] {
    return this.registry.statelessEra(serviceId).map((e) => e.link);
  }

  /** The service's shared link of the 2025-11-25 era, if it has one. */
  private sharedLink(serviceId: number): Link | undefined {
    return this.registry.sessionEra(serviceId).find((e) => e.place.scope === 'shared')?.link;
  }

  private async probe(spec: ServiceSpec): Promise<ProbeResult> {
    // A shared connection is checked with its token; a service without one reports a 401 as needing authorization.
    const { mode, auth: base } = await this.acquisition.needsOf(spec, undefined);
    // A per-user service has no connection of the checker's: it is checked without a token, and a 401
    // then means "up, asks each user" (docs/decisions/0030-upstream-oauth.md), not a fault.
    let refused = false;
    const report = base.unauthorized;
    const auth: RemoteAuth = report
      ? {
          unauthorized: (www) => {
            refused = true;
            report(www);
          },
        }
      : base;
    const link = new Link({
      spec,
      mode: 'shared',
      deps: this.linkDeps,
      open: (current) => this.acquisition.channel(current, undefined, auth, '2025-11-25'),
    });
    this.probes.add(link);
    try {
      await link.ensureReady();
      return { toolCount: link.toolCount, about: link.about };
    } catch (err) {
      // No connection and a 401: a per-user service is up and asks each user; any other needs an administrator's Connect.
      if (refused) throw mode === 'per_user' ? new AuthorizedPerUser() : new NeedsAuthorization();
      if (!link.onlyModern) throw err;
    } finally {
      this.probes.delete(link);
      await link.close('health check finished');
    }
    // It refused the 2025 handshake as a server of the 2026-07-28 era only: checked in that era.
    const modern = new ModernLink({
      spec,
      deps: this.linkDeps,
      open: (current) => this.acquisition.channel(current, undefined, auth, '2026-07-28'),
    });
    try {
      await modern.ensureReady();
      return { toolCount: await modern.countTools(), about: modern.about, revision: MODERN_REVISION };
    } finally {
      await modern.close('health check finished');
    }
  }

  private record(serviceId: number, health: LinkHealth): void {
    this.deps.catalog.recordHealth(serviceId, health).catch((err) => this.deps.logger.error({ err, serviceId }, 'recording health failed'));
  }
}
