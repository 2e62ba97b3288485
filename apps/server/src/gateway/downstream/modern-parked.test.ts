import { afterEach, describe, expect, it, vi } from 'vitest';
import { type ModernCall, ParkedCalls } from './modern.js';
import type { ProxyCaller } from './proxy-auth.js';

/** A call as the parking lot sees it: its state token, its owner, and how it is abandoned. */
const fakeCall = (token: string, userId: number, serviceId = 1) => {
  const abandoned: string[] = [];
  const call = { token, userId, method: 'tools/call', session: { serviceId }, abandon: (reason: string) => abandoned.push(reason) };
  return { call: call as unknown as ModernCall, abandoned };
};
const caller = (userId: number, serviceId = 1) => ({ user: { id: userId }, service: { id: serviceId } }) as unknown as ProxyCaller;

describe('calls waiting for client input', () => {
  afterEach(() => vi.useRealTimers());

  it('are bounded in number, per replica and per user', () => {
    const parked = new ParkedCalls({ max: 3, perUser: 2, waitMs: 60_000 });
    expect(parked.park(fakeCall('a1', 1).call)).toBe(true);
    expect(parked.park(fakeCall('a2', 1).call)).toBe(true);
    expect(parked.park(fakeCall('a3', 1).call)).toBe(false);
    expect(parked.park(fakeCall('b1', 2).call)).toBe(true);
    expect(parked.park(fakeCall('c1', 3).call)).toBe(false);
    expect(parked.size).toBe(3);
  });

  it('are taken back only by their own user on their own service with the same method, once', () => {
    const parked = new ParkedCalls({ max: 10, perUser: 10, waitMs: 60_000 });
    const { call } = fakeCall('t', 1, 5);
    parked.park(call);
    expect(parked.take('t', caller(2, 5), 'tools/call')).toBeUndefined();
    expect(parked.take('t', caller(1, 6), 'tools/call')).toBeUndefined();
    expect(parked.take('t', caller(1, 5), 'prompts/get')).toBeUndefined();
    expect(parked.take('t', caller(1, 5), 'tools/call')).toBe(call);
    expect(parked.take('t', caller(1, 5), 'tools/call')).toBeUndefined();
  });

  it('are abandoned (cancelled upstream) when the client does not come back in time', () => {
    vi.useFakeTimers();
    const parked = new ParkedCalls({ max: 10, perUser: 10, waitMs: 1000 });
    const waiting = fakeCall('late', 1);
    const resumed = fakeCall('back', 1);
    parked.park(waiting.call);
    parked.park(resumed.call);
    parked.take('back', caller(1), 'tools/call');
    vi.advanceTimersByTime(1000);
    expect(waiting.abandoned).toEqual(['the client did not send the requested input within 1 s']);
    expect(resumed.abandoned).toEqual([]);
  });
});
