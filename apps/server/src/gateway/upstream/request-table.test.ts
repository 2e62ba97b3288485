import type { JSONRPCError, JSONRPCMessage, JSONRPCNotification, JSONRPCResponse, RequestId } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { RequestSink, SessionPeer } from '../link-api.js';
import { GatewayErrorCode, type Pending, RequestTable } from './request-table.js';

const peer = (id: string, userId = 1): SessionPeer => ({ id, userId, protocolVersion: '2025-11-25', notify: () => undefined });

/** The request table both eras share (request-table.ts): numbered ids for 2025-11-25, `m<n>` for 2026-07-28. */
describe.each([
  ['2025-11-25', (n: number) => n],
  ['2026-07-28', (n: number) => `m${n}`],
] as const)('the request table with the ids of the %s era', (_era, idOf) => {
  let posted: JSONRPCMessage[];
  let unanswered: Pending[];
  let table: RequestTable;
  const sink = () => {
    const heard = { answers: [] as (JSONRPCResponse | JSONRPCError)[], notes: [] as JSONRPCNotification[] };
    const s: RequestSink = { notification: (n) => heard.notes.push(n), response: (a) => heard.answers.push(a) };
    return { s, heard };
  };
  beforeEach(() => {
    vi.useFakeTimers();
    posted = [];
    unanswered = [];
    const ids: (n: number) => RequestId = idOf;
    table = new RequestTable({ post: (m) => posted.push(m), callTimeoutMs: () => 10_000, unanswered: (p) => unanswered.push(p) }, ids);
  });
  afterEach(() => vi.useRealTimers());

  it("rewrites ids and progress tokens on the way up and restores the client's on the way down", () => {
    const { s, heard } = sink();
    const pending = table.register('tools/call', { name: 'x', _meta: { progressToken: 'tok' } }, peer('a'), 5, s, undefined);
    expect(pending.upstreamId).toBe(idOf(1));
    expect(pending.message).toMatchObject({ id: idOf(1), params: { name: 'x', _meta: { progressToken: idOf(1) } } });
    expect(table.progress({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: idOf(1), progress: 1 } })).toBe(
      pending,
    );
    expect(heard.notes[0]?.params?.progressToken).toBe('tok');
    table.answer({ jsonrpc: '2.0', id: idOf(1), result: { ok: true } });
    expect(heard.answers).toEqual([{ jsonrpc: '2.0', id: 5, result: { ok: true } }]);
    // Answered once: a second answer under the same id reaches nobody.
    expect(table.answer({ jsonrpc: '2.0', id: idOf(1), result: {} })).toBeUndefined();
    expect(heard.answers).toHaveLength(1);
    expect(table.clientInFlight).toBe(0);
  });

  it('answers -32001 after the call timeout and cancels upstream; an opening request is never cancelled', () => {
    const { s, heard } = sink();
    table.register('tools/call', {}, peer('a'), 1, s, undefined);
    table.register('initialize', {}, undefined, undefined, s, undefined, 5_000);
    vi.advanceTimersByTime(5_000);
    expect(heard.answers.map((a) => ('error' in a ? a.error.message : ''))).toEqual(['upstream did not answer initialize within 5 s']);
    vi.advanceTimersByTime(5_000);
    expect(heard.answers.map((a) => ('error' in a ? a.error.code : 0))).toEqual([
      GatewayErrorCode.RequestTimeout,
      GatewayErrorCode.RequestTimeout,
    ]);
    expect(posted).toEqual([{ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: idOf(1), reason: 'timeout' } }]);
    expect(unanswered).toHaveLength(2);
  });

  it('cancels upstream without an answer when the client goes away, and with one when asked', () => {
    const gone = sink();
    const controller = new AbortController();
    table.register('tools/call', {}, peer('a'), 1, gone.s, controller.signal);
    controller.abort();
    expect(gone.heard.answers).toEqual([]);
    const cancelled = sink();
    const pending = table.register('tools/call', {}, peer('a'), 2, cancelled.s, undefined);
    expect(table.ofClient(peer('a'), 2)).toBe(pending);
    table.cancel(pending, 'cancelled by the client', { code: GatewayErrorCode.Cancelled, message: 'request cancelled' });
    expect(cancelled.heard.answers).toEqual([{ jsonrpc: '2.0', id: 2, error: { code: -32800, message: 'request cancelled' } }]);
    expect(posted.map((m) => ('params' in m ? m.params?.requestId : undefined))).toEqual([idOf(1), idOf(2)]);
    expect(table.size).toBe(0);
  });

  it("keeps each session's ids apart, strings from numbers, and fails all but those still on their way", () => {
    const a = sink();
    const b = sink();
    table.register('tools/call', {}, peer('a'), '7', a.s, undefined);
    table.register('tools/call', {}, peer('a'), 7, a.s, undefined);
    const busy = table.register('tools/call', {}, peer('b'), 7, b.s, undefined);
    busy.busy = true;
    expect(table.ofClient(peer('a'), '7')).not.toBe(table.ofClient(peer('a'), 7));
    expect(table.ofSession(peer('b'))).toEqual([busy]);
    expect(table.clientInFlight).toBe(3);
    table.failAll('upstream unavailable: gone');
    expect(a.heard.answers.map((x) => x.id)).toEqual(['7', 7]);
    expect(b.heard.answers).toEqual([]);
    expect(table.isLive(busy)).toBe(true);
  });
});
