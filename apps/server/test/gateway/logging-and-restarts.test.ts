import path from 'node:path';
import { Client as ClientV2, SSEClientTransport as SseV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as HttpV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, LoggingLevel } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from './clients.js';
import { addService, addUser, type LiveGateway, startGateway } from './gateway-harness.js';

const levelsServer = path.join(import.meta.dirname, 'fixtures/levels-server.mjs');

interface Observed {
  logs: string[];
  listChanged: number;
  setLevel(level: LoggingLevel): Promise<void>;
  call(name: string): Promise<CallToolResult>;
  close(): Promise<void>;
}

/** A real client (v1 over streamable HTTP, or v2 over legacy SSE) that records log levels and tool list changes. */
async function observer(base: string, key: string, sdk: 'v1' | 'v2'): Promise<Observed> {
  const headers = { authorization: `Bearer ${key}` };
  const seen = { logs: [] as string[], listChanged: 0 };
  const record = async (n: { method: string; params?: Record<string, unknown> }) => {
    if (n.method === 'notifications/message') seen.logs.push(String(n.params?.level));
    if (n.method === 'notifications/tools/list_changed') seen.listChanged += 1;
  };
  if (sdk === 'v1') {
    const client = new ClientV1({ name: 'levels-v1', version: '1' }, { capabilities: {} });
    client.fallbackNotificationHandler = record;
    await client.connect(new HttpV1(new URL(`${base}/proxy/levels/mcp`), { requestInit: { headers } }));
    return Object.assign(seen, {
      setLevel: async (level: LoggingLevel) => void (await client.setLoggingLevel(level)),
      call: async (name: string) => (await client.callTool({ name, arguments: {} })) as CallToolResult,
      close: () => client.close(),
    });
  }
  const client = new ClientV2({ name: 'levels-v2', version: '1' }, { capabilities: {} });
  client.fallbackNotificationHandler = record as never;
  const eventSourceInit = {
    fetch: (u: string | URL, init?: RequestInit) => fetch(u, { ...init, headers: { ...init?.headers, ...headers } }),
  };
  await client.connect(new SseV2(new URL(`${base}/proxy/levels/sse`), { requestInit: { headers }, eventSourceInit }));
  return Object.assign(seen, {
    setLevel: async (level: LoggingLevel) => void (await client.setLoggingLevel(level)),
    call: async (name: string) => (await client.callTool({ name, arguments: {} })) as CallToolResult,
    close: () => client.close(),
  });
}

const upstreamLevel = (r: CallToolResult) => JSON.parse(r.content[0]?.type === 'text' ? r.content[0].text : '{}').upstreamLevel;

/**
 * logging/setLevel per session on one shared upstream, and list_changed after the upstream crashes
 * and restarts (docs/architecture.md §4), with a v1 client over streamable HTTP and a v2 client over SSE.
 */
describe('log levels per session and list changes after a restart', () => {
  let gw: LiveGateway;
  let a: Observed;
  let b: Observed;

  beforeAll(async () => {
    gw = await startGateway('sqlite');
    const alice = await addUser(gw.ctx, 'alice');
    const bob = await addUser(gw.ctx, 'bob');
    await addService(gw.ctx, { name: 'levels', args: [levelsServer] });
    a = await observer(gw.url, alice.key, 'v1');
    b = await observer(gw.url, bob.key, 'v2');
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await gw?.close();
  });

  it('gives each client the levels it asked for, with the upstream at the most verbose one', async () => {
    await a.setLevel('error');
    await b.setLevel('debug');
    const fromA = await a.call('log-all-levels');
    expect(upstreamLevel(fromA)).toBe('debug');
    await until(() => a.logs.length >= 4, 'the error messages');
    const fromB = await b.call('log-all-levels');
    expect(upstreamLevel(fromB)).toBe('debug');
    await until(() => b.logs.length >= 8, 'every message');
    expect(a.logs).toEqual(['error', 'critical', 'alert', 'emergency']);
    expect(b.logs).toEqual(['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency']);
  });

  it('tells every open session that the lists changed after each crash and restart, and sets the level again', async () => {
    for (let round = 1; round <= 2; round++) {
      const failed = await a.call('crash').catch((err: Error) => ({ isError: true, content: [{ type: 'text', text: err.message }] }));
      expect(failed.isError).toBe(true);
      await until(() => a.listChanged >= round && b.listChanged >= round, `list_changed on both sessions, round ${round}`);
    }
    a.logs.length = 0;
    expect(upstreamLevel(await a.call('log-all-levels'))).toBe('debug');
    await until(() => a.logs.length >= 4, 'the error messages after the restart');
    expect(a.logs).toEqual(['error', 'critical', 'alert', 'emergency']);
  });
});
