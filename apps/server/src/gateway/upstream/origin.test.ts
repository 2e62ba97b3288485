import type { JSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import type { RequestSink, SessionPeer } from '../link-api.js';
import { Multiplexer, type MultiplexerHost, type Pending } from './multiplexer.js';

const peer = (id: string, userId: number): SessionPeer =>
  ({ id, userId, protocolVersion: '2025-11-25', notify() {}, request: async () => ({}) }) as unknown as SessionPeer;
const sink = (): RequestSink => ({ notification() {}, response() {} }) as unknown as RequestSink;

/** Which client request a server-to-client request is attributed to (Multiplexer.originOf), on a shared link. */
describe('attributing a server-to-client request on a shared link', () => {
  const setup = () => {
    const sent: Pending[] = [];
    const host: MultiplexerHost = {
      mode: 'shared',
      transmit: (p) => sent.push(p),
      post() {},
      serverRequest() {},
      serverCancelled() {},
      callTimeoutMs: () => 60_000,
      logUnrouted() {},
      touch() {},
    };
    const mux = new Multiplexer(host);
    const alice = peer('alice', 1);
    const bob = peer('bob', 2);
    // Two clients' calls in flight, each with a progress token of its own (rewritten to the upstream id).
    mux.request(alice, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'a', _meta: { progressToken: 'pa' } } }, sink());
    mux.request(bob, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'b', _meta: { progressToken: 'pb' } } }, sink());
    return { mux, sent };
  };
  const sampling = (id: number, progressToken: number): JSONRPCRequest => ({
    jsonrpc: '2.0',
    id,
    method: 'sampling/createMessage',
    params: { messages: [], maxTokens: 1, _meta: { progressToken } },
  });

  it('follows a progress token that names one of the calls in flight', () => {
    const { mux, sent } = setup();
    const [, bobs] = sent;
    expect(mux.originOf(sampling(900, bobs?.upstreamId ?? -1))?.session?.id).toBe('bob');
  });

  it("does not read the server's own token (its request id) as a reference to a call of the same number", () => {
    const { mux, sent } = setup();
    for (const pending of sent) {
      // The SDK's request n carries progressToken n: whoever caused it, it names no call of ours.
      expect(mux.originOf(sampling(pending.upstreamId, pending.upstreamId))).toBeUndefined();
    }
  });
});
