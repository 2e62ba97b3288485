import { createHash } from 'node:crypto';
import path from 'node:path';
import type { Logger } from 'pino';
import type { ConfigEvent, ConfigEvents } from '../../infra/events.js';
import { resolveInstallDir } from '../../infra/install-dir.js';
import type { Leadership } from '../../infra/leader.js';
import type { UpstreamMetrics } from '../../infra/metrics.js';
import type { ServiceCatalog, ServiceSpec } from '../catalog.js';
import type { HealthResult, SessionPeer, UpstreamLink, UpstreamPool } from '../link-api.js';
import type { ConnectionOwner, UpstreamAuthorization } from '../upstream-auth.js';
import type { Channel } from './channel.js';
import { adoptToken, type LinkAnswer, LinkCredentials, type LinkNeeds } from './credentials.js';
import { AuthorizedPerUser, checkServiceHealth, type HealthHost, PeriodicHealth, type ProbeResult } from './health.js';
import { Link, type LinkHealth } from './link.js';
import { MODERN_REVISION, ModernLink, NotModernError } from './modern-link.js';
import { ModernRemoteChannel } from './modern-remote-channel.js';
import { buildProcessEnv, type RegistryMirrors } from './process-env.js';
import { type RemoteAuth, RemoteChannel } from './remote-channel.js';
import { StdioChannel } from './stdio-channel.js';
import type { LinkDeps, OptionsReader, ServiceLogWriter, UpstreamTuning } from './types.js';

export interface PoolDeps {
  catalog: ServiceCatalog;
  serviceLog: ServiceLogWriter;
  options: OptionsReader;
  events: ConfigEvents;
  logger: Logger;
  config: { dataDir: string; registries?: RegistryMirrors };
  /** Processes and restarts are counted here (infra/metrics.ts). */
  metrics?: UpstreamMetrics;
  /** Several replicas: who health-checks the remote services (infra/leader.ts). */
  leader?: Pick<Leadership, 'runs'>;
  /** Several replicas: installs a service's package into this replica's DATA_DIR before it starts here. */
  packages?: LocalPackages;
  /** OAuth connections of remote services (modules/upstream-oauth): tokens per link, never read from tables here. */
  authorization?: UpstreamAuthorization;
  /** What a link needs, asked once per acquisition (credentials.ts); built from `catalog` and `authorization` unless given. */
  credentials?: Pick<LinkCredentials, 'forLink'>;
}

/**
 * The packages of installed services on this replica (modules/market/install-replica.ts): nothing
 * to wait for when they are here, else the local install. A client's request waits a while only
 * (`forRequest`) and is then told to come back; a process start waits for the install.
 */
export interface LocalPackages {
  ensure(spec: ServiceSpec, forRequest?: boolean): Promise<void> | undefined;
}

/**
 * Opens one upstream: the process of a stdio service (its command on record) or the connection to a
 * remote one. The pool's links and the one-off health probe (probe.ts) start upstreams alike.
 */
export async function openUpstream(
  deps: Pick<PoolDeps, 'serviceLog' | 'logger' | 'config' | 'metrics' | 'packages'>,
  tuning: Pick<UpstreamTuning, 'initializeTimeoutMs' | 'stopGraceMs' | 'stderrLinesPerSecond' | 'stdinStallMs'>,
  spec: ServiceSpec,
  userEnv: Record<string, string> | undefined,
  auth: RemoteAuth = {},
  era?: 'modern',
): Promise<Channel> {
  const { serviceLog, logger, config } = deps;
  // A process never starts from an install directory this replica does not have.
  if (spec.type === 'stdio') await deps.packages?.ensure(spec);
  serviceLog.registerSecrets([
    ...spec.secretEnvNames.map((name) => spec.env[name] ?? ''),
    ...Object.values(userEnv ?? {}),
    ...Object.values(spec.headers),
  ]);
  if (spec.type !== 'stdio') {
    // A streamable HTTP server is spoken to in the 2026-07-28 binding on a modern link (modern-link.ts).
    if (era === 'modern') return ModernRemoteChannel.open(spec, logger, tuning.initializeTimeoutMs, auth);
    return RemoteChannel.open(spec, logger, tuning.initializeTimeoutMs, auth);
  }
  // Every command run is on record (docs/architecture.md §8); secret values are redacted by the writer.
  serviceLog.write({
    serviceId: spec.id,
    serviceName: spec.name,
    phase: 'run',
    level: 'info',
    message: `starting: ${[spec.command, ...spec.args].join(' ')}`,
  });
  return StdioChannel.open({
    spec,
    env: buildProcessEnv(process.env, spec.env, userEnv, config.registries),
    cwd: resolveInstallDir(config.dataDir, spec.installDir) || path.join(config.dataDir, 'services', String(spec.id)),
    serviceLog,
    logger,
    stopGraceMs: tuning.stopGraceMs,
    stderrLinesPerSecond: tuning.stderrLinesPerSecond,
    stdinStallMs: tuning.stdinStallMs,
    onSpawn: () => deps.metrics?.processStarted(spec.name),
    onExit: () => deps.metrics?.processExited(spec.name),
  });
}

type EntryKind = 'shared' | 'user' | 'session';

interface Entry {
  key: string;
  kind: EntryKind;
  serviceId: number;
  userId: number | undefined;
  link: Link;
  /** Personal variable values the process of a per-user link starts with. */
  userEnv: Record<string, string> | undefined;
  /** What the process or connection was started from; a change means a restart. */
  runtime: string;
  /** Whose OAuth connection a remote link sends (0: the shared one); undefined when it uses none. */
  owner: ConnectionOwner | undefined;
  /** What a remote link sends (credentials.ts): its held token, or the report of a 401. */
  auth: RemoteAuth;
  /** An isolated link of a user's modern requests: a request's end does not close it (idle does). */
  outlivesSessions?: boolean;
}

/** Placements remembered at most (a map cleared when full: each is one lookup away from being found again). */
const MAX_MODERN_PLACEMENTS = 10_000;

/** How long an upstream that did not speak the 2026-07-28 revision is taken at its word before it is asked again. */
const LEGACY_ONLY_RECHECK_MS = 10 * 60_000;

/** A modern link (modern-link.ts) of one service: shared, or one user's (personal values, own OAuth connection, isolation). */
interface ModernEntry {
  key: string;
  serviceId: number;
  userId: number | undefined;
  link: ModernLink;
  runtime: string;
  auth: RemoteAuth;
}

/** Everything that decides how an upstream runs; display name, limits and the like do not count. */
function runtimeKey(spec: ServiceSpec, userEnv?: Record<string, string>): string {
  const { type, command, args, env, headers, installDir, isolation, packageVersion = '' } = spec;
  return createHash('sha256')
    .update(JSON.stringify([type, command, args, env, headers, installDir, isolation, packageVersion, userEnv ?? null]))
    .digest('base64url');
}

/**
 * The links of this replica (docs/architecture.md §3): one shared link per service, one per user who has
 * personal variable values, one per session for isolated services. Reacts to configuration events,
 * starts `boot` services, stops idle ones, and answers health checks.
 */
export class LinkPool implements UpstreamPool {
  private readonly entries = new Map<string, Entry>();
  /** Which entry serves a session on a service: `${serviceId}:${sessionId}`. */
  private readonly bySession = new Map<string, Entry>();
  private readonly probes = new Set<Link>();
  /** Modern links by `modern:${serviceId}` or `modern:${serviceId}:${userId}` (docs/decisions/0039). */
  private readonly modern = new Map<string, ModernEntry>();
  /**
   * Services whose upstream did not answer `server/discover` as a server of the revision, with the runtime it was
   * learnt of and until when it holds: a legacy server stays one, but a refusal may have been a passing fault,
   * so it is asked again later (the legacy link serves its modern clients meanwhile).
   */
  private readonly legacyOnly = new Map<number, { runtime: string; updatedAt: number; until: number }>();
  /** Which modern link a user's requests to a service use, while the service is unchanged (`${serviceId}:${userId}`). */
  private readonly modernPlaced = new Map<string, { key: string; updatedAt: number }>();
  private readonly serial = new Map<number, Promise<void>>();
  private readonly linkDeps: LinkDeps;
  private readonly credentials: Pick<LinkCredentials, 'forLink'>;
  private readonly health: PeriodicHealth;
  private readonly healthHost: HealthHost;
  private readonly idleTimer: NodeJS.Timeout;
  private readonly stopListening: () => void;
  private closed = false;
  /** Settles once the `boot` services have been started (or failed to). */
  readonly ready: Promise<void>;

  constructor(
    private readonly deps: PoolDeps,
    private readonly tuning: UpstreamTuning,
  ) {
    this.credentials = deps.credentials ?? new LinkCredentials(deps.catalog, deps.authorization);
    this.linkDeps = { serviceLog: deps.serviceLog, options: deps.options, logger: deps.logger, tuning, metrics: deps.metrics };
    this.healthHost = {
      ...deps,
      readyLink: (serviceId) => {
        const link = this.entries.get(`shared:${serviceId}`)?.link;
        return link?.state === 'ready' ? link : undefined;
      },
      probe: (spec) => this.probe(spec),
    };
    this.health = new PeriodicHealth(this.healthHost);
    this.health.schedule();
    this.idleTimer = setInterval(() => this.reapIdle(), tuning.idleScanMs);
    this.idleTimer.unref();
    this.stopListening = deps.events.on((event) => this.onEvent(event));
    this.ready = this.applyStrategy();
  }

  async acquire(service: ServiceSpec, session: SessionPeer): Promise<UpstreamLink> {
    if (this.closed) throw new Error('the gateway is shutting down');
    // Asked at most once per acquisition, and only when no cached placement answers (credentials.ts).
    let asked: Promise<LinkNeeds> | undefined;
    const needs = () => {
      asked ??= this.needsOf(service, session.userId);
      return asked;
    };
    if (session.era === 'modern') {
      const modern = await this.modernLink(service, session, needs);
      if (modern) return modern;
    }
    const cacheKey = `${service.id}:${session.id}`;
    const cached = this.bySession.get(cacheKey);
    // The common case: a map lookup, no database.
    if (cached?.link.isOpen && this.entries.get(cached.key) === cached && cached.link.spec.updatedAt === service.updatedAt) {
      return cached.link;
    }
    if (!service.enabled) throw new Error(`service ${service.name} is disabled`);
    // Installed through another replica and not here yet: the request waits for the local install a while.
    if (service.type === 'stdio') await this.deps.packages?.ensure(service, true);
    if (this.closed) throw new Error('the gateway is shutting down');
    const entry = await this.entryFor(service, session, await needs());
    if (this.closed) throw new Error('the gateway is shutting down');
    for (const other of this.entries.values()) {
      if (other !== entry && other.serviceId === service.id && other.link.has(session.id)) other.link.detach(session);
    }
    entry.link.attach(session);
    this.bySession.set(cacheKey, entry);
    return entry.link;
  }

  release(serviceId: number, session: SessionPeer): void {
    const cacheKey = `${serviceId}:${session.id}`;
    this.bySession.delete(cacheKey);
    for (const entry of this.modern.values()) if (entry.serviceId === serviceId && entry.link.has(session.id)) entry.link.detach(session);
    for (const entry of [...this.entries.values()]) {
      if (entry.serviceId !== serviceId || !entry.link.has(session.id)) continue;
      entry.link.detach(session);
      if (entry.kind === 'session' && !entry.outlivesSessions) void this.remove(entry, 'client session ended');
    }
  }

  async checkHealth(serviceId: number): Promise<HealthResult> {
    // A change of the service still being applied (an Update's new files, an edit) is applied first: the check
    // is of what the service is now, never of the link the change is stopping.
    await this.serial.get(serviceId);
    return checkServiceHealth(this.healthHost, serviceId);
  }

  async reconnect(serviceId: number): Promise<HealthResult> {
    // The other replicas restart theirs when they hear of it (onEvent); this one reports the result.
    this.deps.events.announce({ type: 'service.reconnect', serviceId });
    await this.restartLinks(serviceId, 'reconnect asked by an administrator');
    const shared = this.entries.get(`shared:${serviceId}`)?.link;
    // A link that starts again (kept alive, or sessions attached) is checked once it is up; a failed start is
    // what the check then reports, through a connection of its own.
    if (shared?.state === 'starting') await shared.ensureReady().catch(() => undefined);
    return checkServiceHealth(this.healthHost, serviceId);
  }

  /** Every link of the service on this replica starts afresh (processes, connections; backoff forgotten). */
  private async restartLinks(serviceId: number, reason: string): Promise<void> {
    this.legacyOnly.delete(serviceId);
    const restarts = [...this.entries.values(), ...this.modern.values()]
      .filter((e) => e.serviceId === serviceId)
      .map((e) => e.link.restart(reason));
    await Promise.all(restarts);
  }

  async shutdown(): Promise<void> {
    this.closed = true;
    this.stopListening();
    clearInterval(this.idleTimer);
    this.health.stop();
    const links = [...[...this.entries.values(), ...this.modern.values()].map((e) => e.link), ...this.probes];
    this.entries.clear();
    this.modern.clear();
    this.bySession.clear();
    await Promise.all(links.map((link) => link.close('the gateway is shutting down')));
  }

  /** Live links, for tests and metrics. */
  links(serviceId?: number): Link[] {
    return [...this.entries.values()].filter((e) => serviceId === undefined || e.serviceId === serviceId).map((e) => e.link);
  }

  /** Live modern links, for tests and metrics. */
  modernLinks(serviceId?: number): ModernLink[] {
    return [...this.modern.values()].filter((e) => serviceId === undefined || e.serviceId === serviceId).map((e) => e.link);
  }

  // ---- which link serves a session ----

  /**
   * The modern link for one modern request, when the upstream speaks the 2026-07-28 revision itself
   * (docs/decisions/0039): learnt by its first connection's `server/discover`, remembered per runtime; a
   * legacy-only upstream is remembered too, and its modern requests go through the legacy link (undefined).
   * Placement follows the legacy links: shared, or the user's own for personal values and per-user OAuth,
   * and per user for an isolated service (a modern request belongs to no session).
   */
  private async modernLink(service: ServiceSpec, session: SessionPeer, needs: () => Promise<LinkNeeds>): Promise<ModernLink | undefined> {
    if (!this.modernCapableType(service) || !service.enabled) return undefined;
    // The common case: this user's requests to this service found their link before, and it is up.
    const placed = this.modernPlaced.get(`${service.id}:${session.userId}`);
    if (placed && placed.updatedAt === service.updatedAt) {
      const entry = this.modern.get(placed.key);
      if (entry?.link.state === 'ready') {
        entry.link.attach(session);
        return entry.link;
      }
    }
    // The common case once learnt, on every modern request to a legacy-only service: no hashing, no database.
    const known = this.legacyOnly.get(service.id);
    if (known && known.updatedAt === service.updatedAt && Date.now() < known.until) return undefined;
    const base = runtimeKey(service);
    if (known && known.runtime === base && Date.now() < known.until) {
      known.updatedAt = service.updatedAt;
      return undefined;
    }
    const { mode, variables: userEnv, auth } = await needs();
    if (service.type === 'stdio') await this.deps.packages?.ensure(service, true);
    if (this.closed) throw new Error('the gateway is shutting down');
    const perUser = mode === 'per_user' || userEnv !== undefined || service.isolation === 'session';
    const key = perUser ? `modern:${service.id}:${session.userId}` : `modern:${service.id}`;
    const runtime = runtimeKey(service, userEnv);
    let entry = this.modern.get(key);
    if (entry && entry.runtime !== runtime) {
      this.modern.delete(key);
      void entry.link.close('service configuration changed');
      entry = undefined;
    }
    if (!entry) {
      const link: ModernLink = new ModernLink({
        spec: service,
        deps: this.linkDeps,
        open: (current) => this.open(current, userEnv, created.auth, 'modern'),
      });
      const created: ModernEntry = { key, serviceId: service.id, userId: perUser ? session.userId : undefined, link, runtime, auth };
      entry = created;
      this.modern.set(key, entry);
    } else adoptToken(entry.auth, auth);
    entry.link.spec = service;
    try {
      await entry.link.ensureReady();
    } catch (err) {
      if (!(err instanceof NotModernError)) throw err;
      this.legacyOnly.set(service.id, { runtime: base, updatedAt: service.updatedAt, until: Date.now() + LEGACY_ONLY_RECHECK_MS });
      if (this.modern.get(key) === entry) this.modern.delete(key);
      void entry.link.close('the tool server speaks the legacy era only');
      this.deps.logger.debug({ service: service.name, reason: err.message }, 'modern requests go through the legacy link');
      return undefined;
    }
    entry.link.attach(session);
    if (this.modernPlaced.size >= MAX_MODERN_PLACEMENTS) this.modernPlaced.clear();
    this.modernPlaced.set(`${service.id}:${session.userId}`, { key, updatedAt: service.updatedAt });
    return entry.link;
  }

  /** A process or streamable HTTP server can speak the revision; a legacy SSE endpoint cannot. */
  private modernCapableType(service: ServiceSpec): boolean {
    return service.type === 'stdio' || service.type === 'streamableHttp';
  }

  private async closeModern(predicate: (entry: ModernEntry) => boolean, reason: string): Promise<void> {
    // Where each user's requests go is decided again (personal values or the service may have changed).
    this.modernPlaced.clear();
    const doomed = [...this.modern.values()].filter(predicate);
    for (const entry of doomed) this.modern.delete(entry.key);
    await Promise.all(doomed.map((entry) => entry.link.close(reason)));
  }

  /** What a link of this service needs for this user, in one step; a user who cannot have it is told here. */
  private async needsOf(service: ServiceSpec, userId: number | undefined): Promise<LinkNeeds> {
    const answer = await this.credentials.forLink(service, userId);
    // A connection that is missing (or ended and cannot be refreshed) names the console page to visit.
    if ('refused' in answer) throw answer.refused;
    return answer;
  }

  private entryFor(service: ServiceSpec, session: SessionPeer, needs: LinkNeeds): Entry {
    if (service.isolation === 'session') return this.sessionEntry(service, session, needs);
    if (needs.mode === 'per_user') return this.upToDate(this.userEntry(service, session.userId, needs), service);
    if (needs.mode === 'shared') return this.upToDate(this.sharedEntry(service, needs), service);
    if (needs.variables) return this.upToDate(this.userEntry(service, session.userId, needs), service, needs.variables);
    return this.upToDate(this.sharedEntry(service, needs), service);
  }

  private sharedEntry(service: ServiceSpec, needs?: LinkNeeds): Entry {
    return this.placed(`shared:${service.id}`, needs) ?? this.add(`shared:${service.id}`, 'shared', service, undefined, needs);
  }

  private userEntry(service: ServiceSpec, userId: number, needs: LinkNeeds): Entry {
    const key = `user:${service.id}:${userId}`;
    return this.placed(key, needs) ?? this.add(key, 'user', service, userId, needs);
  }

  /** A live entry takes the newer token of this acquisition. */
  private placed(key: string, needs: LinkNeeds | undefined): Entry | undefined {
    const entry = this.entries.get(key);
    if (entry) adoptToken(entry.auth, needs?.auth);
    return entry;
  }

  private sessionEntry(service: ServiceSpec, session: SessionPeer, needs: LinkNeeds): Entry {
    // A modern request belongs to no session: a user's modern requests share one isolated link, kept between
    // them like a session's (stopped when idle), instead of a process per request.
    const perUserModern = session.era === 'modern';
    const key = perUserModern ? `session:${service.id}:modern:${session.userId}` : `session:${service.id}:${session.id}`;
    const existing = this.placed(key, needs);
    if (existing) return this.upToDate(existing, service);
    const mine: Entry[] = [];
    for (const e of this.entries.values())
      if (e.kind === 'session' && e.serviceId === service.id && e.userId === session.userId) mine.push(e);
    if (mine.length >= this.tuning.perUserSessionLinks) {
      // Clients that end without DELETE (the SDK's close() does not send one) leave their session until the
      // downstream idle timeout; refusing here would lock the user out for that long. The link idle longest with
      // nothing in flight makes room instead: its session, if it comes back, gets a fresh process, as after an
      // idle stop (reapIdle). Only when every one is busy is the new session refused.
      const idle = mine.filter((e) => e.link.inFlight === 0).sort((a, b) => a.link.lastActivity - b.link.lastActivity)[0];
      if (!idle) {
        throw new Error(`too many isolated sessions on ${service.name} for this user (limit ${this.tuning.perUserSessionLinks})`);
      }
      void this.remove(idle, `isolated session limit (${this.tuning.perUserSessionLinks}) reached: replaced by a newer session`);
    }
    const entry = this.add(key, 'session', service, session.userId, needs);
    if (perUserModern) entry.outlivesSessions = true;
    return entry;
  }

  /** A newer spec (or new personal values) reached acquire before its event: apply it now. */
  private upToDate(entry: Entry, service: ServiceSpec, userEnv?: Record<string, string>): Entry {
    if (entry.link.spec.updatedAt !== service.updatedAt || entry.kind === 'user') void this.refresh(entry, service, userEnv);
    return entry;
  }

  /** Restarts the link when something that decides how it runs changed (not for a new limit or name). */
  private refresh(entry: Entry, service: ServiceSpec, userEnv?: Record<string, string>): Promise<void> {
    const runtime = runtimeKey(service, userEnv);
    entry.link.spec = service;
    if (runtime === entry.runtime) return Promise.resolve();
    entry.runtime = runtime;
    entry.userEnv = userEnv;
    return entry.link.reconfigure(service);
  }

  private add(key: string, kind: EntryKind, spec: ServiceSpec, userId: number | undefined, needs?: LinkNeeds): Entry {
    // A session's process starts with the service's own values only (isolation is not per user).
    const userEnv = kind === 'user' ? needs?.variables : undefined;
    const link = new Link({
      spec,
      mode: kind === 'session' ? 'session' : 'shared',
      oneUser: kind === 'user',
      deps: this.linkDeps,
      // Read at each start: personal values may change while the link lives.
      open: (current) => this.open(current, entry.userEnv, entry.auth),
      ...(kind === 'shared'
        ? {
            // A server that speaks only the 2026-07-28 era is up for the clients of that era: checked in it instead.
            onHealth: (health: LinkHealth) =>
              health.onlyModern ? void this.checkHealth(spec.id).catch(() => undefined) : this.record(spec.id, health),
          }
        : {}),
    });
    const entry: Entry = {
      key,
      kind,
      serviceId: spec.id,
      userId,
      link,
      userEnv,
      runtime: runtimeKey(spec, userEnv),
      owner: needs?.owner,
      auth: needs?.auth ?? {},
    };
    this.entries.set(key, entry);
    return entry;
  }

  private async remove(entry: Entry, reason: string): Promise<void> {
    if (this.entries.get(entry.key) === entry) this.entries.delete(entry.key);
    await entry.link.close(reason);
  }

  private open(spec: ServiceSpec, userEnv: Record<string, string> | undefined, auth: RemoteAuth = {}, era?: 'modern'): Promise<Channel> {
    return openUpstream(this.deps, this.tuning, spec, userEnv, auth, era);
  }

  private async probe(spec: ServiceSpec): Promise<ProbeResult> {
    // A shared connection is checked with its token; a service without one reports a 401 as needing authorization.
    const { mode, auth: base } = await this.needsOf(spec, undefined);
    // A per-user service has no connection of the checker's: it is checked without a token, and a 401
    // then means "up, asks each user" (docs/decisions/0030-upstream-oauth.md), not a fault.
    let refused = false;
    const report = base.unauthorized;
    const auth: RemoteAuth =
      mode === 'per_user' && report
        ? {
            unauthorized: (www) => {
              refused = true;
              report(www);
            },
          }
        : base;
    const link = new Link({ spec, mode: 'shared', deps: this.linkDeps, open: (current) => this.open(current, undefined, auth) });
    this.probes.add(link);
    try {
      await link.ensureReady();
      return { toolCount: link.toolCount, about: link.about };
    } catch (err) {
      if (refused) throw new AuthorizedPerUser();
      if (!link.onlyModern) throw err;
    } finally {
      this.probes.delete(link);
      await link.close('health check finished');
    }
    // It refused the 2025 handshake as a server of the 2026-07-28 era only: checked in that era.
    const modern = new ModernLink({ spec, deps: this.linkDeps, open: (current) => this.open(current, undefined, auth, 'modern') });
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

  // ---- configuration events, startup strategy, idle stop ----

  private onEvent(event: ConfigEvent): void {
    if (this.closed) return;
    if (event.type === 'service.changed') this.serially(event.serviceId, () => this.serviceChanged(event.serviceId));
    if (event.type === 'service.removed') this.serially(event.serviceId, () => this.dropService(event.serviceId, 'service removed'));
    if (event.type === 'service.reconnect') {
      this.serially(event.serviceId, () => this.restartLinks(event.serviceId, 'reconnect asked by an administrator on another replica'));
    }
    if (event.type === 'user.changed') void this.userChanged(event.userId);
    if (event.type === 'option.changed' && event.key === 'StdioServiceStartupStrategy') void this.applyStrategy();
    if (event.type === 'option.changed' && event.key === 'HealthCheckIntervalSeconds') this.health.schedule();
  }

  /** Events of one service apply in order: a quick disable then enable must end enabled. */
  private serially(serviceId: number, work: () => Promise<void>): void {
    const next = (this.serial.get(serviceId) ?? Promise.resolve())
      .then(work)
      .catch((err) => this.deps.logger.error({ err, serviceId }, 'applying a service change failed'));
    this.serial.set(serviceId, next);
    void next.then(() => {
      if (this.serial.get(serviceId) === next) this.serial.delete(serviceId);
    });
  }

  private async serviceChanged(serviceId: number): Promise<void> {
    const spec = await this.deps.catalog.byId(serviceId);
    if (!spec?.enabled) {
      await this.dropService(serviceId, spec ? 'service disabled' : 'service removed');
      return;
    }
    for (const [key, entry] of this.bySession) if (entry.serviceId === serviceId) this.bySession.delete(key);
    // A modern link is cheap to open again: any change closes it, and the next modern request reconnects.
    this.legacyOnly.delete(serviceId);
    await this.closeModern((e) => e.serviceId === serviceId, 'service configuration changed');
    const work: Promise<void>[] = [];
    // Each link is asked for again, one question per link: a new OAuth mode (or none), a connection gone or
    // personal values removed change what it sends, and such links are replaced.
    for (const entry of [...this.entries.values()]) {
      if (entry.serviceId !== serviceId) continue;
      const answer: LinkAnswer | Error = await this.credentials
        .forLink(spec, entry.kind === 'shared' ? undefined : entry.userId)
        .catch((err: Error) => err);
      if (answer instanceof Error) {
        // The provider could not be asked (a refresh that failed for now): the link stays as it is.
        this.deps.logger.warn({ err: answer, serviceId }, 'asking what a link needs failed');
        work.push(this.refresh(entry, spec, entry.userEnv));
        continue;
      }
      const needs = 'refused' in answer ? undefined : answer;
      const userEnv = entry.kind === 'user' && entry.owner === undefined ? needs?.variables : undefined;
      const kindFits =
        needs !== undefined &&
        (spec.isolation === 'session') === (entry.kind === 'session') &&
        (entry.kind !== 'user' || userEnv !== undefined || entry.owner !== undefined) &&
        needs.owner === entry.owner;
      if (kindFits) adoptToken(entry.auth, needs.auth);
      work.push(kindFits ? this.refresh(entry, spec, userEnv) : this.remove(entry, 'service configuration changed'));
    }
    await Promise.all(work);
    if (this.bootable(spec)) this.keepRunning(spec);
  }

  /** Personal variable values may have changed: every session finds its link again, the user's links follow. */
  private async userChanged(userId: number): Promise<void> {
    this.bySession.clear();
    await this.closeModern((e) => e.userId === userId, 'personal values changed');
    for (const entry of [...this.entries.values()]) {
      // A per-user OAuth link is not made of personal values: a user change leaves it alone.
      if (entry.kind !== 'user' || entry.userId !== userId || entry.owner !== undefined) continue;
      try {
        const userEnv = await this.deps.catalog.userEnv(entry.serviceId, userId);
        if (userEnv) await this.refresh(entry, entry.link.spec, userEnv);
        else await this.remove(entry, 'personal values removed');
      } catch (err) {
        this.deps.logger.error({ err, userId }, 'applying a user change failed');
      }
    }
  }

  private async dropService(serviceId: number, reason: string): Promise<void> {
    for (const [key, entry] of this.bySession) if (entry.serviceId === serviceId) this.bySession.delete(key);
    this.legacyOnly.delete(serviceId);
    await this.closeModern((e) => e.serviceId === serviceId, reason);
    const doomed = [...this.entries.values()].filter((e) => e.serviceId === serviceId);
    if (doomed.length === 0) return;
    await Promise.all(doomed.map((e) => this.remove(e, reason)));
    // Awaited inside the service's queue, and only while still disabled: a quick re-enable has already
    // set the status to unknown, and a late "stopped" would stick until the next call.
    if (reason === 'service disabled')
      await this.deps.catalog
        .recordHealth(serviceId, { status: 'stopped', details: reason }, false)
        .catch((err) => this.deps.logger.error({ err, serviceId }, 'recording health failed'));
  }

  private bootable(spec: ServiceSpec): boolean {
    return (
      spec.enabled &&
      spec.type === 'stdio' &&
      spec.isolation === 'shared' &&
      this.deps.options.get('StdioServiceStartupStrategy') === 'boot'
    );
  }

  private keepRunning(spec: ServiceSpec): void {
    // A configuration change still being applied when the gateway shuts down starts nothing.
    if (this.closed) return;
    const { link } = this.upToDate(this.sharedEntry(spec), spec);
    link.keepAlive = true;
    link.wake();
  }

  /** `boot`: every enabled shared stdio service runs; `demand`: they may stop when idle. */
  private async applyStrategy(): Promise<void> {
    const boot = this.deps.options.get('StdioServiceStartupStrategy') === 'boot';
    for (const entry of this.entries.values()) if (entry.kind === 'shared') entry.link.keepAlive = boot && entry.link.spec.type === 'stdio';
    if (!boot) return;
    try {
      for (const spec of await this.deps.catalog.enabledServices()) if (this.bootable(spec)) this.keepRunning(spec);
    } catch (err) {
      this.deps.logger.error({ err }, 'starting services at boot failed');
    }
  }

  private reapIdle(): void {
    const timeoutMs = this.tuning.idleTimeoutMs ?? this.deps.options.int('StdioIdleTimeoutMinutes') * 60_000;
    const now = Date.now();
    for (const entry of [...this.modern.values()]) {
      if (entry.link.inFlight > 0 || now - entry.link.lastActivity < timeoutMs) continue;
      this.modern.delete(entry.key);
      void entry.link.close('idle');
    }
    for (const entry of [...this.entries.values()]) {
      const { link } = entry;
      if (link.state === 'stopped' || link.state === 'closed' || link.inFlight > 0 || now - link.lastActivity < timeoutMs) continue;
      if (entry.kind === 'session') {
        // The session is still there: its next request starts a fresh process.
        void link.stop('idle');
      } else if (!link.keepAlive) {
        // Idle means no calls: a session a client never deletes does not keep the process (its next call starts one).
        if (entry.kind === 'user' && link.attachedCount === 0) void this.remove(entry, 'idle');
        else if (entry.kind === 'user') void link.stop('idle');
        else {
          void link.stop('idle');
          this.record(entry.serviceId, { status: 'stopped', details: `stopped after ${Math.round(timeoutMs / 1000)} s without requests` });
        }
      }
    }
  }
}
