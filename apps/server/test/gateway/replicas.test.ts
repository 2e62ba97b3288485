import { readlinkSync, realpathSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type CallToolResult, CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ADMIN_PASSWORD, bearer, createPgDatabase, createTestApp, type TestApp } from '../harness.js';
import { textOf, until } from './clients.js';
import { addService, addUser, everythingEntry, liveChildren, setUserEnabled } from './gateway-harness.js';
import { openSession, post, raw, SseReader } from './raw-http.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * Several replicas (docs/architecture.md §7): two real apps on one PostgreSQL database and one Redis, with
 * the same SECRET_KEY, each listening on loopback. Every pair gets a key and channel prefix of its
 * own, so suites running side by side on the same Redis never hear each other.
 */
interface Replica {
  t: TestApp;
  url: string;
}

interface Pair {
  a: Replica;
  b: Replica;
  close(): Promise<void>;
}

async function startPair(redisUrl = REDIS_URL): Promise<Pair> {
  const database = await createPgDatabase();
  const env = {
    DATABASE_URL: database.url,
    REDIS_URL: redisUrl,
    REDIS_PREFIX: `toolport-test:${process.pid}:${Math.random().toString(36).slice(2, 10)}:`,
  };
  const replicas: Replica[] = [];
  // One after the other, as the second one's bootstrap finds the first one's root.
  for (let i = 0; i < 2; i++) {
    const t = await createTestApp('postgres', env);
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    replicas.push({ t, url: `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}` });
  }
  const [a, b] = replicas as [Replica, Replica];
  return {
    a,
    b,
    async close() {
      await Promise.all(replicas.map((r) => r.t.close()));
      await database.drop();
    },
  };
}

/** The upstream processes one replica runs for a service, told apart by their working directory. */
function processesOf(r: Replica, serviceId: number): number[] {
  const cwd = path.join(realpathSync(r.t.dataDir), 'services', String(serviceId));
  return liveChildren(everythingEntry).filter((pid) => {
    try {
      return readlinkSync(`/proc/${pid}/cwd`) === cwd;
    } catch {
      return false;
    }
  });
}

const toggle = async (r: Replica, serviceId: number): Promise<boolean> => {
  const res = await r.t.app.inject({
    method: 'POST',
    url: `/api/mcp_services/${serviceId}/toggle`,
    headers: bearer(await r.t.rootToken()),
  });
  expect(res.statusCode).toBe(200);
  return res.json().data.enabled as boolean;
};

describe('two replicas sharing PostgreSQL and Redis', () => {
  let pair: Pair;
  let a: Replica;
  let b: Replica;

  beforeAll(async () => {
    pair = await startPair();
    ({ a, b } = pair);
  });
  afterAll(async () => pair?.close());

  it('starts and stops the stdio process on the other replica when a service is added and toggled', async () => {
    const id = await addService(a.t.ctx, { name: 'toggled' });
    // `boot` strategy: each replica runs its own process for the enabled service.
    await until(() => processesOf(b, id).length === 1, 'the process on replica B');
    await until(() => processesOf(a, id).length === 1, 'the process on replica A');

    expect(await toggle(a, id)).toBe(false);
    await until(() => processesOf(b, id).length === 0, 'replica B to stop its process');
    await until(() => processesOf(a, id).length === 0, 'replica A to stop its process');

    expect(await toggle(a, id)).toBe(true);
    await until(() => processesOf(b, id).length === 1, 'replica B to start its process again');
    const onB = `${b.url}/proxy/toggled/mcp`;
    const user = await addUser(a.t.ctx, 'toggle-user');
    const session = await openSession(onB, user.key);
    const call = await post(
      onB,
      user.key,
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { message: 'from B' } } },
      { 'mcp-session-id': session },
    );
    expect(call.json()).toMatchObject({ result: { content: [{ type: 'text', text: 'Echo: from B' }] } });
  });

  it('restarts the service’s processes on every replica when an admin reconnects it through one', async () => {
    const id = await addService(a.t.ctx, { name: 'reconnected' });
    await until(() => processesOf(a, id).length === 1 && processesOf(b, id).length === 1, 'a process on each replica');
    const [onA] = processesOf(a, id);
    const [onB] = processesOf(b, id);
    const res = await a.t.app.inject({
      method: 'POST',
      url: `/api/mcp_services/${id}/reconnect`,
      headers: bearer(await a.t.rootToken()),
    });
    expect(res.statusCode).toBe(200);
    // Replica A restarted its own before it answered; replica B hears of it and restarts its own.
    expect(processesOf(a, id)).not.toContain(onA);
    await until(() => {
      const now = processesOf(b, id);
      return now.length === 1 && now[0] !== onB;
    }, 'replica B to restart its process');
  });

  it('applies a preference changed through one replica on the other', async () => {
    const origin = 'https://gateway.example.com';
    const fromBrowser = () => post(`${b.url}/proxy/none/mcp`, undefined, {}, { origin });
    // A foreign browser origin is refused before anything else…
    expect((await fromBrowser()).status).toBe(403);
    const res = await a.t.app.inject({
      method: 'PUT',
      url: '/api/option/',
      headers: bearer(await a.t.rootToken()),
      payload: { key: 'ServerAddress', value: origin },
    });
    expect(res.statusCode).toBe(200);
    // …until it is the server address set on replica A: then B asks for the API key like anywhere else.
    await until(async () => (await fromBrowser()).status === 401, 'replica B to accept the new server address');
    expect(b.t.ctx.options.get('ServerAddress')).toBe(origin);
  });

  it('refuses on one replica, at once, a session deleted through the other', async () => {
    await addService(a.t.ctx, { name: 'sessions' });
    const user = await addUser(a.t.ctx, 'session-user');
    const onB = `${b.url}/proxy/sessions/mcp`;
    const doomed = await openSession(onB, user.key);
    const kept = await openSession(onB, user.key);
    const list = (id: string) => post(onB, user.key, { jsonrpc: '2.0', id: 3, method: 'tools/list' }, { 'mcp-session-id': id });
    expect((await list(doomed)).status).toBe(200);
    expect((await list(kept)).status).toBe(200);

    const deleted = await raw(`${a.url}/proxy/sessions/mcp`, {
      method: 'DELETE',
      headers: { ...bearer(user.key), 'mcp-session-id': doomed },
    });
    expect(deleted.status).toBe(200);
    // B served it a moment ago (its own "not revoked" answer is still fresh), yet refuses it now.
    expect((await list(doomed)).status).toBe(404);
    expect((await list(kept)).status).toBe(200);
  });

  it('serves a legacy SSE client whose stream is on one replica and whose POSTs land on the other', async () => {
    await addService(a.t.ctx, { name: 'legacy' });
    const user = await addUser(a.t.ctx, 'legacy-user');
    const bPort = new URL(b.url).port;
    const sentToB: string[] = [];
    // The load balancer of this test: the stream goes to A, every message POST to B.
    const balancer = (input: string | URL, init?: RequestInit): Promise<Response> => {
      const url = new URL(input);
      if (init?.method === 'POST' && url.pathname.endsWith('/message')) {
        url.port = bPort;
        sentToB.push(url.toString());
      }
      return fetch(url, init);
    };
    const client = new Client({ name: 'legacy-across-replicas', version: '1.0.0' }, { capabilities: {} });
    await client.connect(
      new SSEClientTransport(new URL(`${a.url}/proxy/legacy/sse`), { requestInit: { headers: bearer(user.key) }, fetch: balancer }),
    );
    try {
      const result = (await client.callTool({ name: 'echo', arguments: { message: 'across' } })) as CallToolResult;
      expect(textOf(result)).toBe('Echo: across');
      expect((await client.listTools()).tools.length).toBeGreaterThan(0);
      // The stream and its session are on A alone.
      expect(a.t.ctx.gateway.stats().byTransport.legacy).toBe(1);
      expect(b.t.ctx.gateway.stats().byTransport.legacy).toBe(0);
    } finally {
      await client.close();
    }
    // initialize, notifications/initialized, tools/call, tools/list: all went to B, all answered on A's stream.
    expect(sentToB.length).toBeGreaterThanOrEqual(4);

    // Once the stream is gone, a POST for it is answered 404 as on one replica.
    const last = sentToB.at(-1) as string;
    await until(() => a.t.ctx.gateway.stats().byTransport.legacy === 0, 'replica A to end the legacy session');
    const late = await post(last, user.key, { jsonrpc: '2.0', id: 9, method: 'ping' });
    expect(late.status).toBe(404);
  });

  /**
   * A balancer for one SDK v1 client: every request goes to A, except the POSTs `toB` picks, which go
   * to B (and are recorded with B's answer status).
   */
  const balancerTo = (toB: (url: URL, body: unknown) => boolean, sentToB: { url: string; status: number; body: unknown }[]) => {
    const bPort = new URL(b.url).port;
    return async (input: string | URL, init?: RequestInit): Promise<Response> => {
      const url = new URL(input);
      const body = init?.method === 'POST' && typeof init.body === 'string' ? JSON.parse(init.body) : undefined;
      if (init?.method !== 'POST' || !toB(url, body)) return fetch(url, init);
      url.port = bPort;
      const res = await fetch(url, init);
      sentToB.push({ url: url.toString(), status: res.status, body });
      return res;
    };
  };
  const isAnswer = (body: unknown) => typeof body === 'object' && body !== null && !('method' in body) && 'id' in body;
  const sampled = {
    role: 'assistant' as const,
    content: { type: 'text' as const, text: 'sampled on the other replica' },
    model: 'test-model',
  };

  it('completes a sampling request held by one replica when the client answers it through the other (streamable HTTP)', async () => {
    await addService(a.t.ctx, { name: 'sampling' });
    const user = await addUser(a.t.ctx, 'sampling-user');
    const sentToB: { url: string; status: number; body: unknown }[] = [];
    const client = new Client({ name: 'answers-across-replicas', version: '1.0.0' }, { capabilities: { sampling: {} } });
    let asked = 0;
    client.setRequestHandler(CreateMessageRequestSchema, async () => {
      asked += 1;
      return sampled;
    });
    // The call goes to A (which relays the upstream's sampling request on the call's stream); the answer to B.
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${a.url}/proxy/sampling/mcp`), {
        requestInit: { headers: bearer(user.key) },
        fetch: balancerTo((_url, body) => isAnswer(body), sentToB),
      }),
    );
    try {
      const result = (await client.callTool({
        name: 'trigger-sampling-request',
        arguments: { prompt: 'hello', maxTokens: 10 },
      })) as CallToolResult;
      expect(JSON.stringify(result.content)).toContain('sampled on the other replica');
      expect(asked).toBe(1);
      // The answer went to B, which took it (202) and passed it to A under the id naming A. The call's result can
      // reach the client before the client has read B's 202: the POST is recorded once its answer is read.
      await vi.waitFor(() => expect(sentToB).toHaveLength(1), { timeout: 10_000 });
      expect(sentToB[0]?.status).toBe(202);
      expect(String((sentToB[0]?.body as { id?: unknown } | undefined)?.id)).toMatch(/@[A-Za-z0-9_-]{12}$/);
      expect(a.t.ctx.gateway.sessionsOf(user.id).reduce((n, s) => n + s.outgoing, 0)).toBe(0);
    } finally {
      await client.close();
    }
  });

  it('completes a sampling request of a legacy SSE session whose answer lands on the other replica', async () => {
    await addService(a.t.ctx, { name: 'legacy-sampling' });
    const user = await addUser(a.t.ctx, 'legacy-sampling-user');
    const sentToB: { url: string; status: number; body: unknown }[] = [];
    const client = new Client({ name: 'legacy-answers-across-replicas', version: '1.0.0' }, { capabilities: { sampling: {} } });
    client.setRequestHandler(CreateMessageRequestSchema, async () => sampled);
    // The stream on A; every message POST, the answer among them, to B.
    await client.connect(
      new SSEClientTransport(new URL(`${a.url}/proxy/legacy-sampling/sse`), {
        requestInit: { headers: bearer(user.key) },
        fetch: balancerTo((url) => url.pathname.endsWith('/message'), sentToB),
      }),
    );
    try {
      const result = (await client.callTool({
        name: 'trigger-sampling-request',
        arguments: { prompt: 'hello', maxTokens: 10 },
      })) as CallToolResult;
      expect(JSON.stringify(result.content)).toContain('sampled on the other replica');
      // The result comes on A's stream, possibly before the client has read B's answer to the POST (recorded then).
      await vi.waitFor(() => expect(sentToB.filter((p) => isAnswer(p.body)).map((p) => p.status)).toEqual([202]), { timeout: 10_000 });
    } finally {
      await client.close();
    }
  });

  it("serves a group's legacy SSE client whose stream is on one replica and whose POSTs land on the other", async () => {
    const member = await addService(a.t.ctx, { name: 'group-member' });
    const user = await addUser(a.t.ctx, 'group-user');
    const created = await a.t.app.inject({
      method: 'POST',
      url: '/api/groups',
      headers: bearer(await a.t.rootToken()),
      payload: { name: 'across', members: [{ service_id: member }] },
    });
    expect(created.statusCode).toBe(201);
    const sentToB: { url: string; status: number; body: unknown }[] = [];
    const client = new Client({ name: 'group-legacy-across-replicas', version: '1.0.0' }, { capabilities: {} });
    await client.connect(
      new SSEClientTransport(new URL(`${a.url}/group/across/sse`), {
        requestInit: { headers: bearer(user.key) },
        fetch: balancerTo((url) => url.pathname.endsWith('/message'), sentToB),
      }),
    );
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('group-member__echo');
      const result = (await client.callTool({ name: 'group-member__echo', arguments: { message: 'grouped' } })) as CallToolResult;
      expect(textOf(result)).toBe('Echo: grouped');
      expect(a.t.ctx.gateway.stats().byTransport.legacy).toBe(1);
      expect(b.t.ctx.gateway.stats().byTransport.legacy).toBe(0);
    } finally {
      await client.close();
    }
    // initialize, notifications/initialized, tools/list, tools/call: all taken by B and answered on A's stream.
    expect(sentToB.length).toBeGreaterThanOrEqual(4);
    expect(sentToB.every((p) => p.status === 202)).toBe(true);
  });

  it('ends a legacy stream held by one replica when the user is disabled through the other', async () => {
    await addService(a.t.ctx, { name: 'leaving' });
    const user = await addUser(a.t.ctx, 'leaving-user');
    const res = await fetch(`${b.url}/proxy/leaving/sse`, { headers: { ...bearer(user.key), accept: 'text/event-stream' } });
    expect(res.status).toBe(200);
    const stream = SseReader.of(res);
    expect((await stream.next()).event).toBe('endpoint');
    await setUserEnabled(a.t.ctx, user.id, false);
    await expect(stream.next()).rejects.toThrow('stream ended');
  });

  it('counts failed sign-ins of one username across both replicas', async () => {
    const attempt = (r: Replica) =>
      r.t.app.inject({
        method: 'POST',
        url: '/api/auth/login',
        headers: { 'x-forwarded-for': '203.0.113.9' },
        payload: { username: 'guessed-account', password: 'not-the-password' },
      });
    // Five failures on each: neither replica alone has reached the limit of ten.
    for (let i = 0; i < 5; i++) expect((await attempt(a)).statusCode).toBe(401);
    for (let i = 0; i < 5; i++) expect((await attempt(b)).statusCode).toBe(401);
    const refused = await attempt(a);
    expect(refused.statusCode).toBe(429);
    expect(refused.json().message).toMatch(/^Too many sign-in attempts/);
  });
});

/**
 * A TCP relay between the replicas and Redis that can be cut and restored: a Redis outage as the
 * replicas see it (connections dropped, then refused, then accepted again) without touching the
 * Redis other suites use.
 */
class CuttableRelay {
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  async listen(): Promise<void> {
    const server = net.createServer((client) => {
      const upstream = net.connect(this.target);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  /** Drops every connection and refuses new ones. */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  }
}

describe('two replicas through a Redis outage', () => {
  const target = new URL(REDIS_URL);
  const relay = new CuttableRelay({ host: target.hostname, port: Number(target.port || 6379) });
  let pair: Pair;

  beforeAll(async () => {
    await relay.listen();
    pair = await startPair(`redis://127.0.0.1:${relay.port}`);
  });
  afterAll(async () => {
    await pair?.close();
    await relay.cut();
  });

  it('keeps serving while Redis is away and catches up on missed changes once it is back', async () => {
    const { a, b } = pair;
    const id = await addService(a.t.ctx, { name: 'outage' });
    await until(() => processesOf(b, id).length === 1, 'the process on replica B');

    await relay.cut();
    // Nothing reaches B now: the toggle is stored and applied on A, and A answers as usual.
    expect(await toggle(a, id)).toBe(false);
    await until(() => processesOf(a, id).length === 0, 'replica A to stop its process');
    expect(processesOf(b, id)).toHaveLength(1);
    // Sign-in is counted in memory meanwhile; the API and the proxy still answer.
    expect((await a.t.app.inject({ method: 'GET', url: '/api/health' })).statusCode).toBe(200);
    expect(await b.t.login('root', ADMIN_PASSWORD)).toBeTruthy();

    await relay.listen();
    // Reconnected, B reads what it missed from the database and stops the disabled service's process.
    await until(() => processesOf(b, id).length === 0, 'replica B to catch up after the outage', 25_000);
  }, 60_000);
});
