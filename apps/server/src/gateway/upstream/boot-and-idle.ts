import type { ServiceSpec } from '../catalog.js';
import type { Acquisition } from './acquisition.js';
import type { LinkHealth } from './link.js';
import type { PoolDeps } from './pool-deps.js';
import type { LinkRegistry } from './registry.js';
import type { UpstreamTuning } from './types.js';

export interface BootAndIdleHost {
  deps: PoolDeps;
  tuning: UpstreamTuning;
  registry: LinkRegistry;
  acquisition: Acquisition;
  closed(): boolean;
  record(serviceId: number, health: LinkHealth): void;
}

/**
 * The startup strategy and the idle stop: under `boot` every enabled shared stdio service runs from the start and
 * stays up; under `demand` a link starts with its first request, and any link without calls for
 * StdioIdleTimeoutMinutes is stopped (an isolated or a user's link; a link of 2026-07-28 is closed).
 */
export class BootAndIdle {
  private readonly idleTimer: NodeJS.Timeout;

  constructor(private readonly host: BootAndIdleHost) {
    this.idleTimer = setInterval(() => this.reapIdle(), host.tuning.idleScanMs);
    this.idleTimer.unref();
  }

  stop(): void {
    clearInterval(this.idleTimer);
  }

  /** `boot`: every enabled shared stdio service runs; `demand`: they may stop when idle. */
  async applyStrategy(): Promise<void> {
    const { deps, registry } = this.host;
    const boot = deps.options.get('StdioServiceStartupStrategy') === 'boot';
    for (const entry of registry.sessionEra()) {
      if (entry.place.scope === 'shared') entry.link.keepAlive = boot && entry.link.spec.type === 'stdio';
    }
    if (!boot) return;
    try {
      for (const spec of await deps.catalog.enabledServices()) this.keepIfBootable(spec);
    } catch (err) {
      deps.logger.error({ err }, 'starting services at boot failed');
    }
  }

  /** Starts the service's shared link and keeps it running, when the `boot` strategy applies to it. */
  keepIfBootable(spec: ServiceSpec): void {
    // A configuration change still being applied when the gateway shuts down starts nothing.
    if (this.host.closed() || !this.bootable(spec)) return;
    const link = this.host.acquisition.sharedLink(spec);
    link.keepAlive = true;
    link.wake();
  }

  private bootable(spec: ServiceSpec): boolean {
    return (
      spec.enabled &&
      spec.type === 'stdio' &&
      spec.isolation === 'shared' &&
      this.host.deps.options.get('StdioServiceStartupStrategy') === 'boot'
    );
  }

  private reapIdle(): void {
    const { deps, tuning, registry, acquisition } = this.host;
    const timeoutMs = tuning.idleTimeoutMs ?? deps.options.int('StdioIdleTimeoutMinutes') * 60_000;
    const now = Date.now();
    for (const entry of registry.statelessEra()) {
      if (entry.link.inFlight > 0 || now - entry.link.lastActivity < timeoutMs) continue;
      void acquisition.remove(entry, 'idle');
    }
    for (const entry of registry.sessionEra()) {
      const { link } = entry;
      if (link.state === 'stopped' || link.state === 'closed' || link.inFlight > 0 || now - link.lastActivity < timeoutMs) continue;
      if (entry.place.scope === 'session') {
        // The session is still there: its next request starts a fresh process.
        void link.stop('idle');
      } else if (!link.keepAlive) {
        // Idle means no calls: a session a client never deletes does not keep the process (its next call starts one).
        if (entry.place.scope === 'user' && link.attachedCount === 0) void acquisition.remove(entry, 'idle');
        else if (entry.place.scope === 'user') void link.stop('idle');
        else {
          void link.stop('idle');
          this.host.record(entry.place.serviceId, {
            status: 'stopped',
            details: `stopped after ${Math.round(timeoutMs / 1000)} s without requests`,
          });
        }
      }
    }
  }
}
