import { storedText } from '../../i18n/localised-error.js';
import type { ServiceSpec } from '../catalog.js';
import type { SessionPeer } from '../link-api.js';
import type { Channel } from './channel.js';
import { errorText } from './channel.js';
import { adoptToken, LinkCredentials, type LinkNeeds } from './credentials.js';
import { NeedsAuthorization } from './health.js';
import { Link, type LinkHealth } from './link.js';
import { ModernLink } from './modern-link.js';
import { openUpstream } from './open-upstream.js';
import { type Era, type Placement, place, runtimeKey } from './placement.js';
import type { PoolDeps } from './pool-deps.js';
import type { Entry, LinkRegistry, SessionEraEntry, StatelessEraEntry } from './registry.js';
import type { RemoteAuth } from './remote-channel.js';
import type { LinkDeps, UpstreamTuning } from './types.js';

/** How long an upstream that did not speak the 2026-07-28 revision is taken at its word before it is asked again. */
const SESSION_ERA_ONLY_RECHECK_MS = 10 * 60_000;

export interface AcquisitionHost {
  deps: PoolDeps;
  tuning: UpstreamTuning;
  linkDeps: LinkDeps;
  registry: LinkRegistry;
  closed(): boolean;
  /** A shared link's start, crash or recovery (pool.ts records it, or checks a 2026-07-28-only server in its era). */
  sharedHealth(serviceId: number, health: LinkHealth): void;
}

/**
 * Acquire and release (docs/architecture.md §3, docs/decisions/0044): which link serves a session's requests to a
 * service, found with one lookup in the common case, else placed (placement.ts) and created in the one registry. A
 * 2026-07-28 request goes to a link of that era when the upstream speaks it (learnt by the first `server/discover`,
 * remembered per runtime), else to the 2025-11-25 link its placement names.
 */
export class Acquisition {
  /**
   * Services whose upstream did not answer `server/discover` as a server of the revision, with the runtime it was
   * learnt of and until when it holds: such a server stays one, but a refusal may have been a passing fault, so it
   * is asked again later (the 2025-11-25 link serves its 2026-07-28 clients meanwhile).
   */
  private readonly sessionEraOnly = new Map<number, { runtime: string; updatedAt: number; until: number }>();

  /** What a link needs, asked once per acquisition (credentials.ts, docs/decisions/0050-credentials-in-one-step.md). */
  readonly credentials: Pick<LinkCredentials, 'forLink'>;

  constructor(private readonly host: AcquisitionHost) {
    this.credentials = host.deps.credentials ?? new LinkCredentials(host.deps.catalog, host.deps.authorization);
  }

  async acquire(service: ServiceSpec, session: SessionPeer): Promise<Link | ModernLink> {
    this.open();
    // Asked at most once per acquisition, and only when no cached placement answers (credentials.ts).
    let asked: Promise<LinkNeeds> | undefined;
    const needs = () => {
      asked ??= this.needsOf(service, session.userId);
      return asked;
    };
    if (session.era === 'modern') {
      const stateless = await this.statelessLink(service, session, needs);
      if (stateless) return stateless;
    }
    // The common case: a map lookup, no database.
    const cached = this.host.registry.placedFor('2025-11-25', service.id, session.id, service.updatedAt);
    if (cached?.link.isOpen && cached.link instanceof Link && cached.link.spec.updatedAt === service.updatedAt) return cached.link;
    if (!service.enabled) throw new Error(`service ${service.name} is disabled`);
    // Installed through another replica and not here yet: the request waits for the local install a while.
    if (service.type === 'stdio') await this.host.deps.packages?.ensure(service, true);
    this.open();
    const known = await needs();
    this.open();
    const entry = this.sessionEraEntry(place('2025-11-25', service, session, known), service, known);
    for (const other of this.host.registry.sessionEra(service.id)) {
      if (other !== entry && other.link.has(session.id)) other.link.detach(session);
    }
    entry.link.attach(session);
    this.host.registry.remember('2025-11-25', service.id, session.id, entry, service.updatedAt);
    return entry.link;
  }

  release(serviceId: number, session: SessionPeer): void {
    this.host.registry.forget('2025-11-25', serviceId, session.id);
    for (const entry of this.host.registry.all(serviceId)) {
      if (!entry.link.has(session.id)) continue;
      entry.link.detach(session);
      if (entry.place.scope === 'session' && !entry.place.outlivesSessions) void this.remove(entry, 'client session ended');
    }
  }

  /** The service changed: whether it speaks the 2026-07-28 revision is asked again. */
  forgetEra(serviceId: number): void {
    this.sessionEraOnly.delete(serviceId);
  }

  async remove(entry: Entry, reason: string): Promise<void> {
    this.host.registry.delete(entry);
    await entry.link.close(reason);
  }

  /** Restarts the link when something that decides how it runs changed (not for a new limit or name). */
  refresh(entry: SessionEraEntry, service: ServiceSpec, userEnv?: Record<string, string>): Promise<void> {
    const runtime = runtimeKey(service, userEnv);
    entry.link.spec = service;
    if (runtime === entry.runtime) return Promise.resolve();
    entry.runtime = runtime;
    entry.userEnv = userEnv;
    return entry.link.reconfigure(service);
  }

  /** The service's shared stdio link of the 2025-11-25 era, created when missing (the boot strategy keeps it running). */
  sharedLink(service: ServiceSpec): Link {
    const none: LinkNeeds = { mode: undefined, owner: undefined, variables: undefined, auth: {} };
    return this.sessionEraEntry(place('2025-11-25', service, { id: '', userId: 0 }, none), service).link;
  }

  /** What a link of this service needs for this user, in one step; a user who cannot have it is told here. */
  async needsOf(service: ServiceSpec, userId: number | undefined): Promise<LinkNeeds> {
    const answer = await this.credentials.forLink(service, userId);
    // A connection that is missing (or ended and cannot be refreshed) names the console page to visit.
    if ('refused' in answer) throw answer.refused;
    return answer;
  }

  channel(spec: ServiceSpec, userEnv: Record<string, string> | undefined, auth: RemoteAuth, era: Era): Promise<Channel> {
    return openUpstream(this.host.deps, this.host.tuning, spec, userEnv, auth, era === '2026-07-28' ? 'modern' : undefined);
  }

  // ---- placing ----

  private open(): void {
    if (this.host.closed()) throw new Error('the gateway is shutting down');
  }

  /** The entry of the placement, created when missing; a live one takes the newer token of this acquisition. */
  private sessionEraEntry(placement: Placement, service: ServiceSpec, needs?: LinkNeeds): SessionEraEntry {
    const existing = this.host.registry.get(placement.key) as SessionEraEntry | undefined;
    if (existing) {
      adoptToken(existing.auth, needs?.auth);
      // A newer spec (or new personal values) reached acquire before its event: applied now.
      if (existing.link.spec.updatedAt !== service.updatedAt || placement.scope === 'user') {
        void this.refresh(existing, service, placement.userEnv);
      }
      return existing;
    }
    if (placement.scope === 'session') this.makeRoom(placement, service);
    // The shared link of a service without a connection whose start met a 401: it needs authorization (decision
    // 0054), and its health says so rather than the transport's text with the upstream's 401 body.
    let refused = false;
    const flagged = (auth: RemoteAuth): RemoteAuth => {
      const report = auth.unauthorized;
      return report && placement.scope === 'shared'
        ? {
            ...auth,
            unauthorized: (www) => {
              refused = true;
              report(www);
            },
          }
        : auth;
    };
    const shared = (health: LinkHealth): LinkHealth =>
      refused && health.status === 'unhealthy'
        ? { status: 'needs_authorization', details: storedText(new NeedsAuthorization().data()) }
        : health;
    const entry: SessionEraEntry = this.host.registry.add({
      place: placement,
      runtime: runtimeKey(service, placement.userEnv),
      userEnv: placement.userEnv,
      auth: needs?.auth ?? {},
      link: new Link({
        spec: service,
        mode: placement.scope === 'session' ? 'session' : 'shared',
        oneUser: placement.scope === 'user',
        deps: this.host.linkDeps,
        // Read at each start: personal values may change while the link lives.
        open: (current) => {
          refused = false;
          return this.channel(current, entry.userEnv, flagged(entry.auth), '2025-11-25');
        },
        ...(placement.scope === 'shared' ? { onHealth: (health: LinkHealth) => this.host.sharedHealth(service.id, shared(health)) } : {}),
      }),
    });
    return entry;
  }

  /**
   * Clients that end without DELETE (the SDK's close() does not send one) leave their session until the downstream
   * idle timeout; refusing a new isolated session then would lock the user out for that long. The link idle longest
   * with nothing in flight makes room instead: its session, if it comes back, gets a fresh process, as after an idle
   * stop. Only when every one is busy is the new session refused.
   */
  private makeRoom(placement: Placement, service: ServiceSpec): void {
    const limit = this.host.tuning.perUserSessionLinks;
    const mine = this.host.registry
      .sessionEra(service.id)
      .filter((e) => e.place.scope === 'session' && e.place.userId === placement.userId);
    if (mine.length < limit) return;
    const idle = mine.filter((e) => e.link.inFlight === 0).sort((a, b) => a.link.lastActivity - b.link.lastActivity)[0];
    if (!idle) throw new Error(`too many isolated sessions on ${service.name} for this user (limit ${limit})`);
    void this.remove(idle, `isolated session limit (${limit}) reached: replaced by a newer session`);
  }

  /**
   * The 2026-07-28 link for one request of that era, when the upstream speaks the revision itself
   * (docs/decisions/0039), placed like the 2025-11-25 links; undefined when the upstream speaks only 2025-11-25.
   */
  private async statelessLink(
    service: ServiceSpec,
    session: SessionPeer,
    needs: () => Promise<LinkNeeds>,
  ): Promise<ModernLink | undefined> {
    // A process or streamable HTTP server can speak the revision; an HTTP+SSE endpoint of the legacy transport cannot.
    if (!(service.type === 'stdio' || service.type === 'streamableHttp') || !service.enabled) return undefined;
    const who = `u${session.userId}`;
    // The common case: this user's requests to this service found their link before, and it is up.
    const placed = this.host.registry.placedFor('2026-07-28', service.id, who, service.updatedAt);
    if (placed?.link instanceof ModernLink && placed.link.state === 'ready') {
      placed.link.attach(session);
      return placed.link;
    }
    // The common case once learnt, on every such request to a service of the 2025-11-25 era only: no hashing, no database.
    const known = this.sessionEraOnly.get(service.id);
    if (known && known.updatedAt === service.updatedAt && Date.now() < known.until) return undefined;
    const base = runtimeKey(service);
    if (known && known.runtime === base && Date.now() < known.until) {
      known.updatedAt = service.updatedAt;
      return undefined;
    }
    const given = await needs();
    if (service.type === 'stdio') await this.host.deps.packages?.ensure(service, true);
    this.open();
    const placement = place('2026-07-28', service, session, given);
    const runtime = runtimeKey(service, placement.userEnv);
    let entry = this.host.registry.get(placement.key) as StatelessEraEntry | undefined;
    if (entry && entry.runtime !== runtime) {
      void this.remove(entry, 'service configuration changed');
      entry = undefined;
    }
    if (!entry) {
      const auth = given.auth;
      const link = new ModernLink({
        spec: service,
        deps: this.host.linkDeps,
        open: (current) => this.channel(current, placement.userEnv, auth, '2026-07-28'),
      });
      entry = this.host.registry.add({ place: placement, link, runtime, userEnv: placement.userEnv, auth });
    } else adoptToken(entry.auth, given.auth);
    entry.link.spec = service;
    try {
      await entry.link.ensureReady();
    } catch (err) {
      if (!entry.link.refusedEra) throw err;
      this.sessionEraOnly.set(service.id, { runtime: base, updatedAt: service.updatedAt, until: Date.now() + SESSION_ERA_ONLY_RECHECK_MS });
      void this.remove(entry, 'the tool server speaks protocol revision 2025-11-25 only');
      this.host.deps.logger.debug(
        { service: service.name, reason: errorText(err) },
        'requests of 2026-07-28 go through the 2025-11-25 link',
      );
      return undefined;
    }
    entry.link.attach(session);
    this.host.registry.remember('2026-07-28', service.id, who, entry, service.updatedAt);
    return entry.link;
  }
}
