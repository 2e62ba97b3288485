import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type CallToolResult, CreateMessageRequestSchema, type CreateMessageResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from './clients.js';
import { addService, addUser, type LiveGateway, startGateway } from './gateway-harness.js';

const fixture = path.join(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/relay-server.mjs');

type Wire = 'http' | 'sse';
type Sampler = (signal: AbortSignal) => Promise<CreateMessageResult>;

/** A real SDK v1 client declaring sampling, whose sampling handler is the test's `sampler`. */
async function samplingClient(base: string, key: string, wire: Wire, sampler: { current: Sampler }) {
  const url = new URL(`${base}/proxy/relay/${wire === 'http' ? 'mcp' : 'sse'}`);
  const headers = { authorization: `Bearer ${key}` };
  const client = new Client({ name: `cancellation-${wire}`, version: '1.0.0' }, { capabilities: { sampling: {} } });
  client.setRequestHandler(CreateMessageRequestSchema, (_request, extra) => sampler.current(extra.signal));
  await client.connect(
    wire === 'http'
      ? new StreamableHTTPClientTransport(url, { requestInit: { headers } })
      : new SSEClientTransport(url, {
          requestInit: { headers },
          eventSourceInit: { fetch: (u, init) => fetch(u, { ...init, headers: { ...init?.headers, ...headers } }) },
        }),
  );
  return client;
}

const textOf = (result: unknown): string => ((result as CallToolResult).content[0] as { text: string }).text;

/**
 * Cancellation of relayed server-to-client requests (issue 16), with an upstream of our own on the SDK
 * v1 server (fixtures/relay-server.mjs) and real SDK v1 clients over streamable HTTP and legacy SSE:
 * the upstream withdrawing its request reaches the client under the id the client knows, and a
 * client call that ends while the upstream's request waits leaves nothing behind and gets the
 * upstream an error answer at once (not after the call timeout of 300 s).
 */
describe('cancellation of relayed server-to-client requests', () => {
  let gw: LiveGateway;
  let alice: { id: number; key: string };

  beforeAll(async () => {
    gw = await startGateway('sqlite');
    await addService(gw.ctx, { name: 'relay', args: [fixture] });
    alice = await addUser(gw.ctx, 'alice');
  });
  afterAll(async () => gw?.close());

  /** What the session of this user holds: server-to-client requests still waiting for an answer. */
  const waitingInSessions = () => gw.ctx.gateway.sessionsOf(alice.id).reduce((n, s) => n + s.outgoing, 0);

  for (const wire of ['http', 'sse'] as const) {
    it(`tells a client over ${wire} that the upstream withdrew its request, under the client's id`, async () => {
      const seen: { reason?: unknown; aborted: boolean }[] = [];
      const sampler: { current: Sampler } = {
        current: async () => {
          throw new Error('not yet');
        },
      };
      const client = await samplingClient(gw.url, alice.key, wire, sampler);
      // The withdrawing call, awaited before the client closes: closing first would fail it unhandled.
      let withdrawal: Promise<unknown> | undefined;
      try {
        sampler.current = (signal) =>
          new Promise((_resolve, reject) => {
            const record = { aborted: false } as { reason?: unknown; aborted: boolean };
            seen.push(record);
            signal.addEventListener('abort', () => {
              record.aborted = true;
              record.reason = signal.reason;
              reject(new Error('withdrawn'));
            });
            // The question has reached the client: the tool takes it back (a second call, in parallel).
            withdrawal = client.callTool({ name: 'withdraw', arguments: { reason: 'the tool found the answer itself' } });
          });
        const asked = await client.callTool({ name: 'ask', arguments: {} });
        expect(textOf(asked)).toBe('withdrawn: the tool found the answer itself');
        // The SDK client aborted its handler: the gateway's notifications/cancelled named the request it had received.
        await until(() => seen[0]?.aborted === true, 'the client to hear the withdrawal');
        expect(seen).toHaveLength(1);
        expect(seen[0]?.reason).toBe('the tool found the answer itself');
        expect(waitingInSessions()).toBe(0);
        expect(textOf(await withdrawal)).toBe('withdrawn');
      } finally {
        await withdrawal?.catch(() => undefined);
        await client.close();
      }
    });

    it(`answers the upstream with an error at once when the client's call over ${wire} ends first`, async () => {
      const call = new AbortController();
      const sampler: { current: Sampler } = {
        // The client gives up on its call while the upstream's question is still open, and never answers the question.
        current: () => {
          call.abort('the user pressed stop');
          return new Promise<never>(() => undefined);
        },
      };
      const client = await samplingClient(gw.url, alice.key, wire, sampler);
      try {
        await expect(client.callTool({ name: 'ask', arguments: {} }, undefined, { signal: call.signal })).rejects.toThrow();
        // The upstream's createMessage got an error answer (without the cleanup it would wait 300 s).
        const outcome = async () => textOf(await client.callTool({ name: 'outcome', arguments: {} }));
        await until(async () => (await outcome()).startsWith('error:'), 'the upstream to get an error answer');
        expect(await outcome()).toMatch(
          /^error: -32603 .*sampling\/createMessage could not be relayed to the client: the client request that caused it has ended/,
        );
        // Nothing is left waiting in the session.
        expect(waitingInSessions()).toBe(0);
      } finally {
        await client.close();
      }
    });
  }
});
