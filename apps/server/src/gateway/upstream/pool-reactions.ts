import type { ConfigEvent } from '../../infra/events.js';
import type { ServiceSpec } from '../catalog.js';
import type { Acquisition } from './acquisition.js';
import { adoptToken, type LinkAnswer } from './credentials.js';
import type { PoolDeps } from './pool-deps.js';
import type { Entry, LinkRegistry } from './registry.js';

export interface ReactionsHost {
  deps: PoolDeps;
  registry: LinkRegistry;
  acquisition: Acquisition;
  closed(): boolean;
  /** `StdioServiceStartupStrategy` changed (boot-and-idle.ts). */
  strategyChanged(): void;
  /** `HealthCheckIntervalSeconds` changed. */
  healthIntervalChanged(): void;
  /** The service may be one the `boot` strategy keeps running (boot-and-idle.ts). */
  keepIfBootable(spec: ServiceSpec): void;
}

/**
 * What the pool does when the configuration changes (infra/events.ts): a service edited, disabled or removed, a
 * Reconnect asked on another replica, a user's personal values, the startup strategy and the check interval. Events
 * of one service apply in order.
 */
export class PoolReactions {
  private readonly serial = new Map<number, Promise<void>>();

  constructor(private readonly host: ReactionsHost) {}

  on(event: ConfigEvent): void {
    if (this.host.closed()) return;
    if (event.type === 'service.changed') this.serially(event.serviceId, () => this.serviceChanged(event.serviceId));
    if (event.type === 'service.removed') this.serially(event.serviceId, () => this.dropService(event.serviceId, 'service removed'));
    if (event.type === 'service.reconnect') {
      this.serially(event.serviceId, () => this.restartLinks(event.serviceId, 'reconnect asked by an administrator on another replica'));
    }
    if (event.type === 'user.changed') void this.userChanged(event.userId);
    if (event.type === 'option.changed' && event.key === 'StdioServiceStartupStrategy') this.host.strategyChanged();
    if (event.type === 'option.changed' && event.key === 'HealthCheckIntervalSeconds') this.host.healthIntervalChanged();
  }

  /** Settles once the changes of the service still being applied are (a check waits for them). */
  settled(serviceId: number): Promise<void> | undefined {
    return this.serial.get(serviceId);
  }

  /** Every link of the service on this replica starts afresh (processes, connections; backoff forgotten). */
  async restartLinks(serviceId: number, reason: string): Promise<void> {
    this.host.acquisition.forgetEra(serviceId);
    await Promise.all(this.host.registry.all(serviceId).map((e) => e.link.restart(reason)));
  }

  /** Events of one service apply in order: a quick disable then enable must end enabled. */
  private serially(serviceId: number, work: () => Promise<void>): void {
    const next = (this.serial.get(serviceId) ?? Promise.resolve())
      .then(work)
      .catch((err) => this.host.deps.logger.error({ err, serviceId }, 'applying a service change failed'));
    this.serial.set(serviceId, next);
    void next.then(() => {
      if (this.serial.get(serviceId) === next) this.serial.delete(serviceId);
    });
  }

  private async serviceChanged(serviceId: number): Promise<void> {
    const { deps, registry, acquisition } = this.host;
    const spec = await deps.catalog.byId(serviceId);
    if (!spec?.enabled) {
      await this.dropService(serviceId, spec ? 'service disabled' : 'service removed');
      return;
    }
    registry.forgetPlacements(serviceId);
    // A link of 2026-07-28 is cheap to open again: any change closes it, and the next request of that era reconnects.
    acquisition.forgetEra(serviceId);
    await this.closeAll(registry.statelessEra(serviceId), 'service configuration changed');
    const work: Promise<void>[] = [];
    // Each link is asked for again, one question per link: a new OAuth mode (or none), a connection gone or
    // personal values removed change what it sends, and such links are replaced.
    for (const entry of registry.sessionEra(serviceId)) {
      const { scope, userId, owner } = entry.place;
      const answer: LinkAnswer | Error = await acquisition.credentials
        .forLink(spec, scope === 'shared' ? undefined : userId)
        .catch((err: Error) => err);
      if (answer instanceof Error) {
        // The provider could not be asked (a refresh that failed for now): the link stays as it is.
        deps.logger.warn({ err: answer, serviceId }, 'asking what a link needs failed');
        work.push(acquisition.refresh(entry, spec, entry.userEnv));
        continue;
      }
      const needs = 'refused' in answer ? undefined : answer;
      const userEnv = scope === 'user' && owner === undefined ? needs?.variables : undefined;
      const fits =
        needs !== undefined &&
        (spec.isolation === 'session') === (scope === 'session') &&
        (scope !== 'user' || userEnv !== undefined || owner !== undefined) &&
        needs.owner === owner;
      if (fits) adoptToken(entry.auth, needs.auth);
      work.push(fits ? acquisition.refresh(entry, spec, userEnv) : acquisition.remove(entry, 'service configuration changed'));
    }
    await Promise.all(work);
    this.host.keepIfBootable(spec);
  }

  /** Personal variable values may have changed: every session finds its link again, the user's links follow. */
  private async userChanged(userId: number): Promise<void> {
    const { deps, registry, acquisition } = this.host;
    registry.forgetPlacements();
    await this.closeAll(
      registry.statelessEra().filter((e) => e.place.userId === userId),
      'personal values changed',
    );
    for (const entry of registry.sessionEra()) {
      // A per-user OAuth link is not made of personal values: a user change leaves it alone.
      if (entry.place.scope !== 'user' || entry.place.userId !== userId || entry.place.owner !== undefined) continue;
      try {
        const userEnv = await deps.catalog.userEnv(entry.place.serviceId, userId);
        if (userEnv) await acquisition.refresh(entry, entry.link.spec, userEnv);
        else await acquisition.remove(entry, 'personal values removed');
      } catch (err) {
        deps.logger.error({ err, userId }, 'applying a user change failed');
      }
    }
  }

  private async dropService(serviceId: number, reason: string): Promise<void> {
    const { deps, registry, acquisition } = this.host;
    registry.forgetPlacements(serviceId);
    acquisition.forgetEra(serviceId);
    await this.closeAll(registry.statelessEra(serviceId), reason);
    const doomed = registry.sessionEra(serviceId);
    if (doomed.length === 0) return;
    await this.closeAll(doomed, reason);
    // Awaited inside the service's queue, and only while still disabled: a quick re-enable has already
    // set the status to unknown, and a late "stopped" would stick until the next call.
    if (reason === 'service disabled')
      await deps.catalog
        .recordHealth(serviceId, { status: 'stopped', details: reason }, false)
        .catch((err) => deps.logger.error({ err, serviceId }, 'recording health failed'));
  }

  private async closeAll(entries: Entry[], reason: string): Promise<void> {
    await Promise.all(entries.map((e) => this.host.acquisition.remove(e, reason)));
  }
}
