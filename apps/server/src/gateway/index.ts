import { checkHealthAs, consoleCall, listUpstreamTools } from './console-calls.js';
import type { Gateway, GatewayDeps, GatewayOptions } from './deps.js';
import { type OriginLists, OriginPolicy } from './downstream/origin-policy.js';
import { reactToConfiguration } from './downstream/session-reactions.js';
import { DEFAULT_LIMITS, SessionRegistry } from './downstream/session-registry.js';
import { buildFaces } from './faces.js';
import { internals, observeGateway } from './observation.js';
import { createUpstreamPool } from './upstream/index.js';
import { OneOffHealth, type OneOffHealthDeps } from './upstream/probe.js';

export type { AccessTokenPort, ProxyEndpoint, VerifiedToken } from './access-tokens.js';
export type { Gateway, GatewayDeps, GatewayObservation, GatewayOptions, LinkView, SessionView, UserStatusLookup } from './deps.js';
export type { SemanticRanker, SemanticRanking } from './downstream/hybrid-search.js';
export type { SearchableTool } from './downstream/tool-search.js';
export { type RunRecord, recordRun } from './upstream/leftovers.js';
export { MemoryWatch } from './upstream/memory-watch.js';
export type { OneOffHealth, OneOffHealthDeps } from './upstream/probe.js';

/**
 * The gateway's MCP health check without the gateway: no pool, no sessions, no proxy routes. Each check
 * starts the service for one round trip and stops it; for commands that install without serving.
 */
export function createHealthProbe(deps: OneOffHealthDeps): OneOffHealth {
  return new OneOffHealth(deps);
}

/**
 * Whether the MCP endpoints answer to a Host (origin-policy.ts: localhost, IP literals, ALLOWED_HOSTS and the
 * server address's host); the OAuth server's metadata follows the same rule.
 */
export function allowedHosts(options: GatewayDeps['options'], lists: OriginLists): (host: string) => boolean {
  const policy = new OriginPolicy(options, lists);
  return (host) => policy.hostAllowed(host);
}

const PURGE_MS = 60 * 60_000;

/**
 * Builds the gateway: the upstream pool (which starts the `boot` services at once), the session registry and
 * the three faces (faces.ts), mounted later. `start` connects the faces' Redis channels and the sessions'
 * reactions to configuration events (downstream/session-reactions.ts); `stop` drains and stops it all.
 */
export async function createGateway(deps: GatewayDeps, opts: GatewayOptions = {}): Promise<Gateway> {
  const options = {
    limits: opts.limits ?? { ...DEFAULT_LIMITS, perUserCap: deps.config.abuse.sessionsPerUser },
    tuning: opts.tuning ?? {},
  };
  const pool = createUpstreamPool(deps, options.tuning);
  const sessions = new SessionRegistry(pool, options.limits, deps.redis?.replicaId);
  const faces = buildFaces(deps, pool, sessions);
  deps.metrics.countSessions(() => sessions.countByTransport());
  let stopReacting: () => void = () => undefined;
  let purge: NodeJS.Timeout | undefined;
  let stopping: Promise<void> | undefined;

  const stop = async (graceMs: number) => {
    const pending = faces.work.pending;
    if (pending > 0) {
      deps.logger.info({ pending, graceMs }, 'waiting for proxied calls in flight to finish');
      const left = await faces.work.settle(graceMs);
      if (left > 0) deps.logger.warn({ left, graceMs }, 'shutdown grace period over: ending the calls still in flight');
    }
    stopReacting();
    faces.stop();
    clearInterval(purge);
    // The pool first: it answers every call still waiting with an error at once (so the client hears it and the
    // meter records it) and then stops the processes. Ending a session first would drop its calls unanswered.
    const stopped = pool.shutdown();
    sessions.removeAll();
    await stopped;
  };

  const gateway: Gateway = {
    options,
    ...observeGateway(sessions, pool),
    async start() {
      await faces.start();
      stopReacting = reactToConfiguration({ ...deps, sessions, face: faces.face, overrides: faces.overrides });
      // One DELETE of expired rows for the whole cluster: the leader's (idempotent, so every replica
      // runs it while Redis is away and nobody leads).
      purge = setInterval(() => {
        if (!deps.leader.runs('guarded')) return;
        void faces.revocations.purgeExpired().catch((err) => deps.logger.warn({ err }, 'revocation purge failed'));
      }, PURGE_MS);
      purge.unref();
    },
    stop: (graceMs = 0) => {
      stopping ??= stop(graceMs);
      return stopping;
    },
    checkHealth: (serviceId) => pool.checkHealth(serviceId),
    reconnect: (serviceId) => pool.reconnect(serviceId),
    checkHealthAs: (serviceId, userId) =>
      checkHealthAs({ pool, catalog: deps.catalog, redact: (text) => deps.serviceLog.redact(text) }, serviceId, userId),
    upstreamTools: (serviceId, userId) => listUpstreamTools(pool, deps.catalog, serviceId, userId),
    callTool: (serviceId, userId, name, args, locale) =>
      consoleCall({ pool, catalog: deps.catalog, dispatcher: faces.dispatcher }, serviceId, userId, name, args, locale),
    mount: (app) => faces.mount(app),
  };
  internals.set(gateway, { sessions, limits: sessions.limits, pool });
  return gateway;
}
