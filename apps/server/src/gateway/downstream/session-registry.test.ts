import { afterEach, describe, expect, it } from 'vitest';
import type { HealthResult, SessionPeer, UpstreamLink, UpstreamPool } from '../link-api.js';
import { DownstreamSession, restoredInitParams } from './session.js';
import { SessionRegistry } from './session-registry.js';

/** Records what the registry hands back to the upstream side; nothing else is exercised here. */
class ReleaseLog implements UpstreamPool {
  released: string[] = [];
  acquire(): Promise<UpstreamLink> {
    throw new Error('not used');
  }
  release(_serviceId: number, session: SessionPeer): void {
    this.released.push(session.id);
  }
  checkHealth(): Promise<HealthResult> {
    throw new Error('not used');
  }
  reconnect(): Promise<HealthResult> {
    throw new Error('not used');
  }
  async shutdown(): Promise<void> {}
}

let n = 0;
const session = (userId: number, lastActive: number) => {
  n += 1;
  const s = new DownstreamSession({
    key: `key-${n}`,
    peerId: `peer-${n}`,
    userId,
    serviceId: 1,
    protocolVersion: '2025-06-18',
    issuedAt: 0,
    transport: 'streamable',
    initParams: restoredInitParams('2025-06-18'),
  });
  s.lastActive = lastActive;
  return s;
};

describe('session registry', () => {
  let registry: SessionRegistry;
  afterEach(() => registry.removeAll());

  it('evicts the session a user left idle longest once the per-user cap is passed, sparing busy ones', () => {
    const pool = new ReleaseLog();
    registry = new SessionRegistry(pool, { idleMs: 60_000, perUserCap: 3, sweepMs: 60_000 });
    const busyOldest = session(1, 100);
    busyOldest.inflight = 1;
    const idleOld = session(1, 200);
    const recent = session(1, 300);
    const otherUser = session(2, 50);
    for (const s of [busyOldest, idleOld, recent, otherUser]) registry.add(s);
    expect(registry.size).toBe(4);

    const newest = session(1, 400);
    registry.add(newest);
    expect(pool.released).toEqual([idleOld.id]);
    expect(registry.get(idleOld.key)).toBeUndefined();
    for (const kept of [busyOldest, recent, otherUser, newest]) expect(registry.get(kept.key)).toBe(kept);
    expect(idleOld.calls.gone).toBe(true);
  });

  it('drops sessions idle past the limit on a sweep, keeping those with requests in flight', () => {
    const pool = new ReleaseLog();
    registry = new SessionRegistry(pool, { idleMs: 1000, perUserCap: 100, sweepMs: 60_000 });
    const stale = session(1, 0);
    const staleButBusy = session(1, 0);
    staleButBusy.inflight = 2;
    const fresh = session(1, 5_000);
    for (const s of [stale, staleButBusy, fresh]) registry.add(s);
    registry.sweep(5_500);
    expect(pool.released).toEqual([stale.id]);
    expect(registry.size).toBe(2);
  });

  it('answers the requests in flight with why the session ended, once, before the upstream side lets go', () => {
    const pool = new ReleaseLog();
    registry = new SessionRegistry(pool);
    const s = session(1, 0);
    const other = session(2, 0);
    registry.add(s);
    registry.add(other);
    const heard: string[] = [];
    s.trackRequest((reason) => heard.push(`${reason} (released: ${pool.released.length})`));
    const done = (reason: string) => heard.push(`answered already: ${reason}`);
    s.trackRequest(done);
    s.untrackRequest(done);
    registry.removeWhere((x) => x.userId === 1, 'user disabled');
    registry.remove(s, 'again');
    expect(heard).toEqual(['user disabled (released: 0)']);
    expect(s.closedReason).toBe('user disabled');
    expect(pool.released).toEqual([s.id]);
  });

  it('removes a session once, however often it is asked to', () => {
    const pool = new ReleaseLog();
    registry = new SessionRegistry(pool);
    const s = session(1, 0);
    registry.add(s);
    registry.remove(s);
    registry.remove(s);
    expect(pool.released).toEqual([s.id]);
    expect(registry.size).toBe(0);
  });
});
