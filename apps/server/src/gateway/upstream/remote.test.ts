import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { ProgressNotification } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  call,
  callTool,
  freePort,
  startEverythingHttp,
  stdioSpec,
  TestSession,
  testPool,
  toolText,
} from '../../../test/fixtures/upstream-kit.js';
import type { ServiceSpec } from '../catalog.js';

const init = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } };
const remoteSpec = (type: 'sse' | 'streamableHttp', url: string, headers: Record<string, string> = {}): ServiceSpec =>
  stdioSpec({ type, command: url, args: [], headers });

describe('a streamable HTTP upstream (server-everything)', () => {
  const kit = testPool({ initializeTimeoutMs: 10_000 });
  const pool = kit.make();
  let port: number;
  let upstream: Awaited<ReturnType<typeof startEverythingHttp>>;
  let spec: ServiceSpec;
  const alice = new TestSession('alice', 1);
  const bob = new TestSession('bob', 2);

  beforeAll(async () => {
    port = await freePort();
    upstream = await startEverythingHttp('streamableHttp', port);
    spec = kit.catalog.put(remoteSpec('streamableHttp', `http://127.0.0.1:${port}/mcp`));
  });
  afterAll(async () => {
    await pool.shutdown();
    await upstream.stop();
    kit.cleanup();
  });

  it('serves two sessions using the same ids, each its own answers', async () => {
    const link = await pool.acquire(spec, alice);
    expect(await pool.acquire(spec, bob)).toBe(link);
    expect((await link.initialize(alice, init)).serverInfo.name).toBe('mcp-servers/everything');
    const calls = [];
    for (let id = 1; id <= 10; id++) {
      calls.push(callTool(link, alice, id, 'echo', { message: `alice-${id}` }).then((r) => ({ who: 'alice', id, r })));
      calls.push(callTool(link, bob, id, 'echo', { message: `bob-${id}` }).then((r) => ({ who: 'bob', id, r })));
    }
    for (const { who, id, r } of await Promise.all(calls)) {
      expect(r.response.id).toBe(id);
      expect(toolText(r)).toBe(`Echo: ${who}-${id}`);
    }
  });

  it('routes progress to the caller only', async () => {
    const link = await pool.acquire(spec, alice);
    const params = { name: 'trigger-long-running-operation', arguments: { duration: 0.2, steps: 2 }, _meta: { progressToken: 'p' } };
    const [a, b] = await Promise.all([
      call(link, alice, { id: 'lr', method: 'tools/call', params }),
      call(link, bob, { id: 'lr', method: 'tools/call', params }),
    ]);
    for (const r of [a, b]) {
      const progress = r.notifications.filter((n) => n.method === 'notifications/progress') as unknown as ProgressNotification[];
      expect(progress.map((n) => [n.params.progressToken, n.params.progress])).toEqual([
        ['p', 1],
        ['p', 2],
      ]);
    }
  });

  it('re-initialises transparently when the upstream restarted and lost the session', async () => {
    const link = await pool.acquire(spec, alice);
    expect(toolText(await callTool(link, alice, 1, 'echo', { message: 'before' }))).toBe('Echo: before');
    await upstream.stop();
    upstream = await startEverythingHttp('streamableHttp', port);
    expect(toolText(await callTool(link, alice, 2, 'echo', { message: 'after' }))).toBe('Echo: after');
    expect(kit.serviceLog.of(spec.id).some((m) => m.startsWith('upstream session lost'))).toBe(true);
  });

  it('checks health with a short-lived connection, and reports an unreachable upstream', async () => {
    const healthy = await pool.checkHealth(spec.id);
    expect(healthy.status).toBe('healthy');
    expect(healthy.toolCount).toBeGreaterThan(5);
    const gone = kit.catalog.put(remoteSpec('streamableHttp', `http://127.0.0.1:${await freePort()}/mcp`));
    const down = await pool.checkHealth(gone.id);
    expect(down.status).toBe('unhealthy');
    expect(kit.catalog.lastHealth(gone.id)?.status).toBe('unhealthy');
  });
});

describe('a legacy SSE upstream (server-everything)', () => {
  const kit = testPool();
  const pool = kit.make();
  let upstream: Awaited<ReturnType<typeof startEverythingHttp>>;
  let spec: ServiceSpec;

  beforeAll(async () => {
    const port = await freePort();
    upstream = await startEverythingHttp('sse', port);
    spec = kit.catalog.put(remoteSpec('sse', `http://127.0.0.1:${port}/sse`));
  });
  afterAll(async () => {
    await pool.shutdown();
    await upstream.stop();
    kit.cleanup();
  });

  it('answers through the SSE stream', async () => {
    const alice = new TestSession('alice');
    const link = await pool.acquire(spec, alice);
    await link.initialize(alice, init);
    expect(toolText(await callTool(link, alice, 1, 'echo', { message: 'over sse' }))).toBe('Echo: over sse');
  });
});

describe('what a remote upstream receives', () => {
  const kit = testPool({ initializeTimeoutMs: 5_000 });
  const pool = kit.make();
  const seen: IncomingHttpHeaders[] = [];
  let server: Server;
  let redirector: Server;
  let port: number;
  let redirectPort: number;

  beforeAll(async () => {
    // A real SDK server (stateless, JSON answers) that records the headers of every request.
    server = createServer(async (req, res) => {
      seen.push(req.headers);
      const mcp = new McpServer({ name: 'header-recorder', version: '1.0.0' });
      mcp.registerTool('hello', { description: 'says hello' }, async () => ({ content: [{ type: 'text', text: 'hello' }] }));
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      await mcp.connect(transport);
      await transport.handleRequest(req, res);
    });
    port = await freePort();
    await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
    // Sends every request on to another origin.
    redirector = createServer((_req, res) => {
      res.writeHead(307, { location: `http://localhost:${port}/mcp` }).end();
    });
    redirectPort = await freePort();
    await new Promise<void>((r) => redirector.listen(redirectPort, '127.0.0.1', r));
  });
  afterAll(async () => {
    await pool.shutdown();
    await new Promise((r) => server.close(r));
    await new Promise((r) => redirector.close(r));
    kit.cleanup();
  });

  it('gets the configured headers on every request and never an Authorization it was not given', async () => {
    const spec = kit.catalog.put(remoteSpec('streamableHttp', `http://127.0.0.1:${port}/mcp`, { 'X-Upstream-Key': 'configured-value' }));
    const alice = new TestSession('alice');
    const link = await pool.acquire(spec, alice);
    await link.initialize(alice, init);
    expect(toolText(await callTool(link, alice, 1, 'hello'))).toBe('hello');
    expect(seen.length).toBeGreaterThanOrEqual(3);
    for (const headers of seen) {
      expect(headers['x-upstream-key']).toBe('configured-value');
      expect(headers.authorization).toBeUndefined();
    }
  });

  it('does not follow a redirect to another origin', async () => {
    const spec = kit.catalog.put(remoteSpec('streamableHttp', `http://127.0.0.1:${redirectPort}/mcp`));
    const before = seen.length;
    const health = await pool.checkHealth(spec.id);
    expect(health.status).toBe('unhealthy');
    expect(health.details).toMatch(/redirected to another origin: http:\/\/localhost:\d+\/mcp/);
    expect(seen.length).toBe(before);
  });
});
