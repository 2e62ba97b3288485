import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2, SSEClientTransport as SseV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport as SseV1 } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport as HttpV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  type CallToolResult,
  type ClientCapabilities,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addService, addUser, type LiveGateway, startGateway } from './gateway-harness.js';

type Sdk = 'v1' | 'v2';
type Wire = 'http' | 'sse';

const ALL = { sampling: {}, elicitation: { form: {}, url: {} }, roots: {} } satisfies ClientCapabilities;
/** server-everything offers these only to a client that declared sampling, elicitation (both modes) and roots. */
const CAPABLE_TOOLS = ['trigger-sampling-request', 'trigger-elicitation-request', 'trigger-url-elicitation', 'get-roots-list'];

interface Asked {
  sampling: number;
  elicitation: string[];
  roots: number;
}

interface CapableClient {
  asked: Asked;
  listTools(): Promise<string[]>;
  call(name: string, args?: Record<string, unknown>): Promise<CallToolResult>;
  close(): Promise<void>;
}

/**
 * A real SDK client (v1 or v2) that declares `capabilities` and answers the server's requests the
 * way an application would: a fixed sampled message, an accepted form or URL elicitation, one root.
 */
async function capableClient(base: string, service: string, key: string, sdk: Sdk, wire: Wire, capabilities: ClientCapabilities = ALL) {
  const url = new URL(`${base}/proxy/${service}/${wire === 'http' ? 'mcp' : 'sse'}`);
  const headers = { authorization: `Bearer ${key}` };
  const eventSourceInit = {
    fetch: (u: string | URL, init?: RequestInit) => fetch(u, { ...init, headers: { ...init?.headers, ...headers } }),
  };
  const asked: Asked = { sampling: 0, elicitation: [], roots: 0 };
  const sampled = {
    role: 'assistant' as const,
    content: { type: 'text' as const, text: 'sampled through the gateway' },
    model: 'test-model',
  };
  const elicited = (mode: unknown) => {
    asked.elicitation.push(String(mode ?? 'form'));
    return mode === 'url' ? { action: 'accept' as const } : { action: 'accept' as const, content: { name: 'Ada Lovelace' } };
  };
  const roots = { roots: [{ uri: 'file:///work/project', name: 'project' }] };
  const info = { name: `client-requests-${sdk}`, version: '1.0.0' };

  if (sdk === 'v1') {
    const client = new ClientV1(info, { capabilities });
    if (capabilities.sampling)
      client.setRequestHandler(CreateMessageRequestSchema, async () => {
        asked.sampling += 1;
        return sampled;
      });
    if (capabilities.elicitation) client.setRequestHandler(ElicitRequestSchema, async (req) => elicited(req.params.mode));
    if (capabilities.roots)
      client.setRequestHandler(ListRootsRequestSchema, async () => {
        asked.roots += 1;
        return roots;
      });
    await client.connect(
      wire === 'http' ? new HttpV1(url, { requestInit: { headers } }) : new SseV1(url, { requestInit: { headers }, eventSourceInit }),
    );
    return {
      asked,
      listTools: async () => (await client.listTools()).tools.map((t) => t.name),
      call: async (name: string, args: Record<string, unknown> = {}) =>
        (await client.callTool({ name, arguments: args })) as CallToolResult,
      close: () => client.close(),
    } satisfies CapableClient;
  }
  const client = new ClientV2(info, { capabilities } as ConstructorParameters<typeof ClientV2>[1]);
  if (capabilities.sampling)
    client.setRequestHandler('sampling/createMessage', async () => {
      asked.sampling += 1;
      return sampled;
    });
  if (capabilities.elicitation) client.setRequestHandler('elicitation/create', async (req) => elicited(req.params.mode));
  if (capabilities.roots)
    client.setRequestHandler('roots/list', async () => {
      asked.roots += 1;
      return roots;
    });
  await client.connect(
    wire === 'http' ? new HttpV2(url, { requestInit: { headers } }) : new SseV2(url, { requestInit: { headers }, eventSourceInit }),
  );
  return {
    asked,
    listTools: async () => (await client.listTools()).tools.map((t) => t.name),
    call: async (name: string, args: Record<string, unknown> = {}) => (await client.callTool({ name, arguments: args })) as CallToolResult,
    close: () => client.close(),
  } satisfies CapableClient;
}

const texts = (result: CallToolResult): string => result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');

/**
 * Every server-to-client request server-everything makes, through the gateway, answered by `client`; on a
 * process several users share, `roots/list` is answered by the gateway itself, with no roots (decision 0042).
 */
async function exerciseAll(client: CapableClient, roots: 'relayed' | 'none'): Promise<void> {
  expect(await client.listTools()).toEqual(expect.arrayContaining(CAPABLE_TOOLS));
  const sampling = await client.call('trigger-sampling-request', { prompt: 'hello', maxTokens: 10 });
  expect(texts(sampling)).toContain('sampled through the gateway');
  const form = await client.call('trigger-elicitation-request');
  expect(texts(form)).toContain('Name: Ada Lovelace');
  const url = await client.call('trigger-url-elicitation', { url: 'https://example.com/authorize', message: 'Sign in' });
  expect(texts(url)).toContain('User completed the URL elicitation flow');
  const listed = texts(await client.call('get-roots-list'));
  if (roots === 'relayed') expect(listed).toContain('file:///work/project');
  else {
    expect(listed).toContain('no roots are currently configured');
    expect(client.asked.roots).toBe(0);
  }
  expect(client.asked.sampling).toBe(1);
  expect(client.asked.elicitation).toEqual(['form', 'url']);
}

/**
 * Server-to-client requests (sampling, elicitation in form and URL modes, roots) relayed to the
 * client that caused them (docs/architecture.md §4), with real SDK clients v1 and v2 over streamable HTTP
 * and legacy SSE, on a shared and an isolated server-everything.
 */
describe('server-to-client requests through the gateway', () => {
  let gw: LiveGateway;
  let alice: { id: number; key: string };
  let bob: { id: number; key: string };
  let sharedId: number;

  beforeAll(async () => {
    gw = await startGateway('sqlite');
    alice = await addUser(gw.ctx, 'alice');
    bob = await addUser(gw.ctx, 'bob');
    sharedId = await addService(gw.ctx, { name: 'shared' });
    const isolated = await addService(gw.ctx, { name: 'isolated' });
    await gw.ctx.db.updateTable('services').set({ isolation: 'session' }).where('id', '=', isolated).execute();
    gw.ctx.events.emit({ type: 'service.changed', serviceId: isolated });
  });
  afterAll(async () => gw?.close());

  for (const [sdk, wire] of [
    ['v1', 'http'],
    ['v2', 'http'],
    ['v1', 'sse'],
    ['v2', 'sse'],
  ] as const) {
    it(`relays them to a ${sdk} client over ${wire} on a shared upstream`, async () => {
      const client = await capableClient(gw.url, 'shared', alice.key, sdk, wire);
      try {
        await exerciseAll(client, 'none');
      } finally {
        await client.close();
      }
    });
  }

  for (const [sdk, wire] of [
    ['v1', 'http'],
    ['v2', 'sse'],
  ] as const) {
    it(`relays them to a ${sdk} client over ${wire} on an isolated upstream`, async () => {
      const client = await capableClient(gw.url, 'isolated', alice.key, sdk, wire);
      try {
        await exerciseAll(client, 'relayed');
      } finally {
        await client.close();
      }
    });
  }

  it('answers a clear error when the client did not declare the capability, on a shared and an isolated upstream', async () => {
    const shared = await capableClient(gw.url, 'shared', alice.key, 'v1', 'http', { roots: {} });
    const isolated = await capableClient(gw.url, 'isolated', alice.key, 'v2', 'http', { elicitation: {} });
    try {
      // The shared upstream was told every capability, so no tool vanishes; the client hears why it fails.
      expect(await shared.listTools()).toEqual(expect.arrayContaining(CAPABLE_TOOLS));
      const refused = await shared.call('trigger-sampling-request', { prompt: 'x' });
      expect(refused.isError).toBe(true);
      expect(texts(refused)).toContain('sampling/createMessage is not available: the client did not declare the sampling capability');
      // An isolated upstream sees the client's own capabilities (form-mode elicitation only).
      expect(await isolated.listTools()).toContain('trigger-elicitation-request');
      expect(await isolated.listTools()).not.toContain('trigger-sampling-request');
      expect(texts(await isolated.call('trigger-elicitation-request'))).toContain('Name: Ada Lovelace');
    } finally {
      await shared.close();
      await isolated.close();
    }
  });

  it('refuses, naming the reason, when two clients have calls in flight on a shared upstream, and asks neither', async () => {
    const a = await capableClient(gw.url, 'shared', alice.key, 'v1', 'http');
    const b = await capableClient(gw.url, 'shared', bob.key, 'v2', 'http');
    try {
      // Alice's long call keeps a request of hers in flight while Bob's tool asks for sampling: Bob calls once hers is
      // on the shared connection, and it lasts long enough for his to meet it on a loaded machine.
      const long = a.call('trigger-long-running-operation', { duration: 8, steps: 4 });
      await expect.poll(() => gw.ctx.gateway.links(sharedId).reduce((n, link) => n + link.inFlight, 0), { timeout: 20_000 }).toBe(1);
      const refused = await b.call('trigger-sampling-request', { prompt: 'whose?' });
      expect(refused.isError).toBe(true);
      expect(texts(refused)).toMatch(/sampling\/createMessage cannot be relayed to a client: 2 client requests are in flight/);
      expect(a.asked.sampling).toBe(0);
      expect(b.asked.sampling).toBe(0);
      expect(texts(await long)).toContain('Long running operation');
      // Alone again, Bob's call is still refused: Alice's calls ran on this process, and a request that names
      // no call may come of one of them (decision 0042).
      expect(texts(await b.call('trigger-sampling-request', { prompt: 'mine' }))).toMatch(
        /sampling\/createMessage cannot be relayed to a client: other users' calls have run on this shared connection/,
      );
      expect(b.asked.sampling).toBe(0);
      expect(a.asked.sampling).toBe(0);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
