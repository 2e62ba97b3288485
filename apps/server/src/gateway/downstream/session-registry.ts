import type { UpstreamPool } from '../link-api.js';
import type { DownstreamSession } from './session.js';

export interface SessionLimits {
  /** A session unused this long is dropped from memory (its signed id stays valid). */
  idleMs: number;
  /**
   * Sessions one user may hold on this replica (PROXY_MAX_SESSIONS_PER_USER); the one idle longest goes
   * first. Evicting is cheap for the gateway; that a user cannot keep doing it in a loop is the new-session
   * rate's job (abuse.ts, PROXY_NEW_SESSIONS_PER_MINUTE), checked before a session is created.
   */
  perUserCap: number;
  /** How often idle sessions are swept and open streams get a keep-alive. */
  sweepMs: number;
}

export const DEFAULT_LIMITS: SessionLimits = { idleMs: 60 * 60_000, perUserCap: 100, sweepMs: 25_000 };

/**
 * The sessions this replica holds in memory. Dropping one detaches it from its upstream link and
 * closes its stream; for streamable HTTP the client can keep using its id (rebuilt on the next
 * request), a legacy SSE client has to reconnect.
 */
export class SessionRegistry {
  private readonly sessions = new Map<string, DownstreamSession>();
  private readonly byUser = new Map<number, Set<DownstreamSession>>();
  private readonly timer: NodeJS.Timeout;
  /** This registry's own copy: tests lower a limit on a live gateway. */
  readonly limits: SessionLimits;

  constructor(
    private readonly pool: UpstreamPool,
    limits: SessionLimits = DEFAULT_LIMITS,
    /** Several replicas: this one's id, named in the ids of the server-to-client requests its sessions send. */
    private readonly replicaId?: string,
  ) {
    this.limits = { ...limits };
    this.timer = setInterval(() => this.sweep(), limits.sweepMs);
    this.timer.unref();
  }

  get size(): number {
    return this.sessions.size;
  }

  /** Sessions held now per transport, for the metrics. */
  countByTransport(): Record<DownstreamSession['transport'], number> {
    const counts = { streamable: 0, legacy: 0, modern: 0 };
    for (const s of this.sessions.values()) counts[s.transport] += 1;
    return counts;
  }

  get(key: string): DownstreamSession | undefined {
    return this.sessions.get(key);
  }

  add(session: DownstreamSession): void {
    this.sessions.set(session.key, session);
    if (this.replicaId) session.outgoing.replica = this.replicaId;
    let mine = this.byUser.get(session.userId);
    if (!mine) {
      mine = new Set();
      this.byUser.set(session.userId, mine);
    }
    mine.add(session);
    if (mine.size > this.limits.perUserCap) this.evictOne(mine, session);
  }

  /**
   * Ends a session on this replica. Its requests still in flight are answered first, with an error
   * saying `session closed: <reason>` (on the stream too while it is open), and cancelled upstream.
   */
  remove(session: DownstreamSession, reason = 'session ended'): void {
    if (session.closed) return;
    session.closed = true;
    session.closedReason = reason;
    this.sessions.delete(session.key);
    const mine = this.byUser.get(session.userId);
    mine?.delete(session);
    if (mine?.size === 0) this.byUser.delete(session.userId);
    session.endRequests(reason);
    session.stream?.close();
    session.stream = undefined;
    session.calls.leave('session ended');
    this.pool.release(session.serviceId, session);
    for (const hook of session.onRemoved.splice(0)) hook();
  }

  /** Every session of a service (it was disabled or removed) or of a user. */
  removeWhere(match: (s: DownstreamSession) => boolean, reason = 'service or user no longer available'): void {
    for (const s of [...this.sessions.values()]) if (match(s)) this.remove(s, reason);
  }

  /** The sessions on this replica that match (a configuration change tells them something). */
  where(match: (s: DownstreamSession) => boolean): DownstreamSession[] {
    return [...this.sessions.values()].filter(match);
  }

  removeAll(): void {
    clearInterval(this.timer);
    this.removeWhere(() => true, 'the gateway is shutting down');
  }

  /** Drops the session idle longest, preferring those with nothing in flight and no open stream. */
  private evictOne(mine: Set<DownstreamSession>, keep: DownstreamSession): void {
    let victim: DownstreamSession | undefined;
    let rank = Number.POSITIVE_INFINITY;
    for (const s of mine) {
      if (s === keep) continue;
      const busy = s.inflight > 0 || s.stream?.open ? 1 : 0;
      // Busy sessions sort after every quiet one; within a group, the oldest activity first.
      const score = busy * 1e15 + s.lastActive;
      if (score < rank) {
        rank = score;
        victim = s;
      }
    }
    if (victim) this.remove(victim, 'too many sessions for this user');
  }

  sweep(now = Date.now()): void {
    for (const s of [...this.sessions.values()]) {
      if (s.stream?.open) {
        s.stream.keepAlive();
        continue;
      }
      if (s.inflight === 0 && now - s.lastActive > this.limits.idleMs) this.remove(s, 'idle timeout');
    }
  }
}
