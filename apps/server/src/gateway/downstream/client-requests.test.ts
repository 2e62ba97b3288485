import type { JSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { ClientRequests, replicaOfRequestId } from './client-requests.js';

const sampling: JSONRPCRequest = { jsonrpc: '2.0', id: 7, method: 'sampling/createMessage', params: { messages: [], maxTokens: 1 } };

describe('ClientRequests', () => {
  it('names the sending replica in the client-facing id once it has one, and reads it back', async () => {
    const outgoing = new ClientRequests('toolport-abcdefgh');
    const written: { id: unknown }[] = [];
    const write = (json: string) => written.push(JSON.parse(json)) > 0;
    const single = outgoing.send(sampling, write, 60_000);
    outgoing.replica = 'AbCdEf012_-x';
    const clustered = outgoing.send(sampling, write, 60_000);
    expect(written.map((m) => m.id)).toEqual(['toolport-abcdefgh-1', 'toolport-abcdefgh-2@AbCdEf012_-x']);
    expect(replicaOfRequestId(written[0]?.id)).toBeUndefined();
    expect(replicaOfRequestId(written[1]?.id)).toBe('AbCdEf012_-x');
    // Not one of the gateway's ids, or a malformed replica part: no replica.
    expect(replicaOfRequestId('client-1@AbCdEf012_-x')).toBeUndefined();
    expect(replicaOfRequestId('toolport-abcdefgh-3@short')).toBeUndefined();
    expect(replicaOfRequestId(3)).toBeUndefined();
    expect(outgoing.answer({ id: 'toolport-abcdefgh-1', result: { a: 1 } } as never)).toBe(true);
    expect(outgoing.answer({ id: 'toolport-abcdefgh-2@AbCdEf012_-x', result: { b: 2 } } as never)).toBe(true);
    await expect(single).resolves.toMatchObject({ result: { a: 1 } });
    await expect(clustered).resolves.toMatchObject({ result: { b: 2 } });
    expect(outgoing.size).toBe(0);
  });

  it('withdraws a request when its signal aborts: the client hears notifications/cancelled under its id', async () => {
    const outgoing = new ClientRequests('toolport-abcdefgh');
    const written: { id?: unknown; method?: string; params?: unknown }[] = [];
    const controller = new AbortController();
    const asked = outgoing.send(sampling, (json) => written.push(JSON.parse(json)) > 0, 60_000, controller.signal);
    controller.abort('the tool no longer needs it');
    await expect(asked).rejects.toThrow('the tool no longer needs it');
    expect(written[1]).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: 'toolport-abcdefgh-1', reason: 'the tool no longer needs it' },
    });
    expect(outgoing.size).toBe(0);
    // A late answer matches nothing.
    expect(outgoing.answer({ id: 'toolport-abcdefgh-1', result: {} } as never)).toBe(false);
  });

  it('does not write a request whose signal has already aborted, and forgets answered ones', async () => {
    const outgoing = new ClientRequests('toolport-abcdefgh');
    const controller = new AbortController();
    controller.abort('gone already');
    let writes = 0;
    await expect(outgoing.send(sampling, () => ++writes > 0, 60_000, controller.signal)).rejects.toThrow('gone already');
    expect(writes).toBe(0);
    const live = new AbortController();
    const asked = outgoing.send(sampling, () => ++writes > 0, 60_000, live.signal);
    outgoing.answer({ id: 'toolport-abcdefgh-2', result: {} } as never);
    await asked;
    // Aborting after the answer writes nothing more.
    live.abort('late');
    expect(writes).toBe(1);
  });
});
