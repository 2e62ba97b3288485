import type { JSONRPCMessage, JSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import type { RequestSink, SessionPeer } from '../link-api.js';
import { Multiplexer, type Pending } from './multiplexer.js';

const peer = (id: string, userId: number): SessionPeer => ({ id, userId, protocolVersion: '2025-11-25', notify: () => undefined });
const sink: RequestSink = { notification: () => undefined, response: () => undefined };

/**
 * Which client request a server-to-client request is given to on a shared connection (decision 0042): the
 * one it names by progress token, or the sole request in flight while only its user's calls have run there.
 */
describe('attributing an upstream request to a client request', () => {
  const setup = () => {
    const written: JSONRPCMessage[] = [];
    const asked: (Pending | undefined)[] = [];
    const mux = new Multiplexer({
      mode: 'shared',
      transmit: (pending) => written.push(pending.message),
      post: () => undefined,
      serverRequest: (_request, origin) => void asked.push(origin),
      serverCancelled: () => undefined,
      callTimeoutMs: () => 60_000,
      logUnrouted: () => undefined,
      touch: () => undefined,
    });
    let serverIds = 1000;
    /** The upstream asks for sampling now, naming `progressToken` when given; returns whose request it was given to. */
    const sampling = (progressToken?: number): string | undefined => {
      serverIds += 1;
      const request: JSONRPCRequest = {
        jsonrpc: '2.0',
        id: serverIds,
        method: 'sampling/createMessage',
        params: { messages: [], maxTokens: 1, ...(progressToken === undefined ? {} : { _meta: { progressToken } }) },
      };
      mux.receive(request);
      return asked.at(-1)?.session?.id;
    };
    const send = (who: SessionPeer, id: number, method: string, progress = false): number => {
      mux.request(who, { jsonrpc: '2.0', id, method, params: progress ? { _meta: { progressToken: `p${id}` } } : {} }, sink);
      return (written.at(-1) as { id: number }).id;
    };
    const answer = (upstreamId: number) => mux.receive({ jsonrpc: '2.0', id: upstreamId, result: {} });
    return { mux, sampling, send, answer };
  };
  const alice = peer('alice-1', 1);
  const aliceAgain = peer('alice-2', 1);
  const bob = peer('bob-1', 2);

  it("gives it to the one call in flight only while that call's user is the only one whose calls ran", () => {
    const { mux, sampling, send, answer } = setup();
    const first = send(alice, 1, 'tools/call');
    expect(sampling()).toBe('alice-1');
    answer(first);
    // Another session of the same user: still certain to be that user's.
    const second = send(aliceAgain, 1, 'tools/call');
    expect(sampling()).toBe('alice-2');
    answer(second);
    // Bob lists (nothing of his reaches the server), but Alice's calls ran: it may come of hers, not his.
    const list = send(bob, 1, 'tools/list');
    expect(sampling()).toBeUndefined();
    answer(list);
    // Bob's own call, alone in flight: Alice's earlier calls may still be at work in the process.
    const call = send(bob, 2, 'tools/call');
    expect(sampling()).toBeUndefined();
    answer(call);
    // A fresh process knows nothing of them.
    mux.connectionOpened();
    send(bob, 3, 'tools/call');
    expect(sampling()).toBe('bob-1');
  });

  it('gives it to the request it names by progress token, whoever else called', () => {
    const { sampling, send } = setup();
    const named = send(alice, 1, 'tools/call', true);
    send(bob, 1, 'tools/call', true);
    expect(sampling(named)).toBe('alice-1');
    // Two in flight and no name: nobody's.
    expect(sampling()).toBeUndefined();
  });

  it('lets lists of any user leave a lone call attributable', () => {
    const { sampling, send, answer } = setup();
    answer(send(bob, 1, 'tools/list'));
    answer(send(bob, 2, 'prompts/list'));
    send(alice, 1, 'tools/call');
    expect(sampling()).toBe('alice-1');
  });
});
