import type { GatewayObservation, LinkView, SessionView } from './deps.js';
import type { DownstreamSession } from './downstream/session.js';
import type { SessionLimits, SessionRegistry } from './downstream/session-registry.js';
import type { LinkPool } from './upstream/pool.js';

/**
 * What tests, benchmarks and the metrics may read of the gateway's live state, read-only (deps.ts
 * GatewayObservation), and the idle sweep on demand. The registry and the pool themselves stay inside gateway/.
 */
export function observeGateway(sessions: SessionRegistry, pool: LinkPool): GatewayObservation {
  const linkView =
    (era: LinkView['era']) =>
    (l: { state: LinkView['state']; inFlight: number; attachedCount: number }): LinkView => ({
      era,
      state: l.state,
      inFlight: l.inFlight,
      attached: l.attachedCount,
    });
  return {
    stats: () => ({ sessions: sessions.size, byTransport: sessions.countByTransport() }),
    session: (id) => {
      const found = sessions.get(id);
      return found ? sessionView(found) : undefined;
    },
    sessionsOf: (userId) => sessions.where((s) => s.userId === userId).map(sessionView),
    links: (serviceId) => [
      ...pool.links(serviceId).map(linkView('2025-11-25')),
      ...pool.modernLinks(serviceId).map(linkView('2026-07-28')),
    ],
    sweepNow: (at = Date.now()) => sessions.sweep(at),
  };
}

/**
 * A live, read-only view of one session: it goes on answering after the session ended and left the registry.
 * The registry lets go of an ended session's stream, so the view keeps the last stream it saw.
 */
function sessionView(s: DownstreamSession): SessionView {
  let seen = s.stream;
  const stream = () => {
    seen = s.stream ?? seen;
    return seen;
  };
  return {
    id: s.id,
    userId: s.userId,
    transport: s.transport,
    get inflight() {
      return s.inflight;
    },
    get outgoing() {
      return s.outgoing.size;
    },
    get closed() {
      return s.closed;
    },
    get closedReason() {
      return s.closedReason;
    },
    get streamOpen() {
      return stream()?.open === true;
    },
    get streamPeakBuffered() {
      return stream()?.peakBuffered ?? 0;
    },
  };
}

/** The internals behind a gateway, for the tests that must change them (test-only: see testing.ts). */
export const internals = new WeakMap<object, { sessions: SessionRegistry; limits: SessionLimits; pool: LinkPool }>();
