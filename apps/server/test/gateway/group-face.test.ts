import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { Role } from '@toolport/contract';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { connect, connectUrl, type McpClient, textOf } from './clients.js';
import { addService, addUser, addUserWithToken, apiCall, type LiveGateway, setServiceEnabled, startGateway } from './gateway-harness.js';

const require = createRequire(import.meta.url);
const memoryEntry = path.join(path.dirname(require.resolve('@modelcontextprotocol/server-memory/package.json')), 'dist/index.js');
const fixture = path.join(import.meta.dirname, '../fixtures/fixture-mcp-server.mjs');

/**
 * A group's face with real members (server-everything, server-memory and a member that cannot start)
 * through the official SDK clients over /group/{name}/mcp and /group/{name}/sse.
 */
describe('the group face', () => {
  let gw: LiveGateway;
  let memoryDir: string;
  let everything: number;
  let memory: number;
  let admin: { id: number; key: string; token: string };
  let alice: { id: number; key: string };
  let bob: { id: number; key: string };
  const clients: McpClient[] = [];

  const api = (method: string, url: string, body?: unknown) => apiCall(gw.url, admin.token, method, url, body);
  /** The group every test but one shares (the list is ordered by name, and others are made beside it). */
  const teamId = async () => (await api('GET', '/groups')).body.data.find((g: { name: string }) => g.name === 'team').id as number;
  const open = async (key: string, wire: 'http' | 'sse', sdk: 'v1' | 'v2' = 'v1') => {
    const client = await connectGroup(gw.url, 'team', key, wire, sdk);
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    gw = await startGateway('sqlite');
    memoryDir = mkdtempSync(path.join(tmpdir(), 'toolport-memory-'));
    everything = await addService(gw.ctx, { name: 'everything', rpdLimit: 3 });
    memory = await addService(gw.ctx, { name: 'memory', args: [memoryEntry], env: { MEMORY_FILE_PATH: path.join(memoryDir, 'm.jsonl') } });
    admin = await addUserWithToken(gw.ctx, 'admin1', Role.Admin);
    alice = await addUser(gw.ctx, 'alice');
    bob = await addUser(gw.ctx, 'bob');
    const created = await api('POST', '/groups', {
      name: 'team',
      members: [{ service_id: everything }, { service_id: memory, tools: ['read_graph', 'search_nodes', 'create_entities'] }],
    });
    expect(created.status).toBe(201);
  });
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await gw?.close();
    rmSync(memoryDir, { recursive: true, force: true });
  });

  it('merges the members’ tools under namespaced names, over streamable HTTP and SSE, with SDK v1 and v2', async () => {
    for (const [wire, sdk] of [
      ['http', 'v1'],
      ['sse', 'v2'],
    ] as const) {
      const client = await open(alice.key, wire, sdk);
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toEqual(
        expect.arrayContaining(['everything__echo', 'everything__get-sum', 'memory__read_graph', 'memory__search_nodes']),
      );
      // Only the chosen subset of memory's tools.
      expect(names.filter((n) => n.startsWith('memory__')).sort()).toEqual([
        'memory__create_entities',
        'memory__read_graph',
        'memory__search_nodes',
      ]);
      expect(textOf(await client.callTool('everything__echo', { message: `via ${wire}` }))).toBe(`Echo: via ${wire}`);
      await expect(client.callTool('memory__delete_entities', { entityNames: [] })).rejects.toThrow(
        'Unknown tool: memory__delete_entities',
      );
      await expect(client.callTool('nowhere__echo', {})).rejects.toThrow('Unknown tool: nowhere__echo');
    }
  });

  it('routes calls to the member and its overrides apply inside the group', async () => {
    const client = await open(alice.key, 'http');
    await client.callTool('memory__create_entities', { entities: [{ name: 'Ada', entityType: 'person', observations: ['wrote notes'] }] });
    const graph = textOf(await client.callTool('memory__read_graph', {}));
    expect(graph).toContain('Ada');

    expect((await api('PUT', `/mcp_services/${everything}/tools/get-sum`, { alias: 'add' })).status).toBe(200);
    await vi.waitFor(() => expect(client.notifications.some((n) => n.method === 'notifications/tools/list_changed')).toBe(true), {
      timeout: 5000,
    });
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toContain('everything__add');
    expect(names).not.toContain('everything__get-sum');
    expect(textOf(await client.callTool('everything__add', { a: 40, b: 2 }))).toContain('42');
    await api('PUT', `/mcp_services/${everything}/tools/get-sum`, { alias: null });
  });

  it('counts a call through the group once, against the same daily limit as /proxy', async () => {
    const proxied = await connect(gw.url, 'everything', bob.key, { sdk: 'v1', wire: 'http' });
    clients.push(proxied);
    const grouped = await open(bob.key, 'http');
    await proxied.callTool('echo', { message: '1' });
    await grouped.callTool('everything__echo', { message: '2' });
    await proxied.callTool('echo', { message: '3' });
    await expect(grouped.callTool('everything__echo', { message: '4' })).rejects.toThrow('daily request limit exceeded: 3/3');
    await expect(proxied.callTool('echo', { message: '5' })).rejects.toThrow('daily request limit exceeded');
    // Memory has no limit: the group's other member keeps working.
    expect(textOf(await grouped.callTool('memory__read_graph', {}))).toContain('Ada');
  });

  it('tells its clients when a member is disabled, and keeps serving the others', async () => {
    const client = await open(alice.key, 'http');
    await client.listTools();
    await setServiceEnabled(gw.ctx, memory, false);
    await vi.waitFor(() => expect(client.notifications.some((n) => n.method === 'notifications/tools/list_changed')).toBe(true), {
      timeout: 5000,
    });
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names.some((n) => n.startsWith('memory__'))).toBe(false);
    expect(names).toContain('everything__echo');
    await expect(client.callTool('memory__read_graph', {})).rejects.toThrow('Service memory is disabled');
    await setServiceEnabled(gw.ctx, memory, true);
  });

  it('answers tools/list within its bound when a member is dead, and the dead member’s calls get a clear error', async () => {
    const dead = await addService(gw.ctx, { name: 'dead', command: process.execPath, args: ['-e', 'process.exit(3)'] });
    expect(
      (
        await api('PUT', `/groups/${await teamId()}`, {
          name: 'team',
          members: [{ service_id: everything }, { service_id: dead }],
        })
      ).status,
    ).toBe(200);
    // A user of their own: alice has used up her daily calls to everything by now.
    const carol = await addUser(gw.ctx, 'carol');
    const client = await open(carol.key, 'http');
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toContain('everything__echo');
    expect(names.some((n) => n.startsWith('dead__'))).toBe(false);
    await expect(client.callTool('dead__anything', {})).rejects.toThrow(/Upstream unavailable|Unknown tool/);
    expect(textOf(await client.callTool('everything__echo', { message: 'still here' }))).toBe('Echo: still here');
  });

  it('waits past its bound for a member it has never listed, so a slow first start is not left out', async () => {
    // Answers tools/list later than MEMBER_LIST_BOUND_MS (3 s), well within FIRST_MEMBER_LIST_BOUND_MS (20 s).
    const slow = await addService(gw.ctx, { name: 'slow', args: [fixture], env: { FIXTURE_MODE: 'slow-list=3500' } });
    const made = await api('POST', '/groups', { name: 'patient', members: [{ service_id: everything }, { service_id: slow }] });
    expect(made.status).toBe(201);
    const dave = await addUser(gw.ctx, 'dave');
    const client = await connectUrl(new URL(`${gw.url}/group/patient/mcp`), dave.key, { sdk: 'v1', wire: 'http' });
    clients.push(client);
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['everything__echo', 'slow__echo', 'slow__sleep']));
  });

  it('asks every member for its tools at once when a group is saved, not one after another', async () => {
    // Two members that answer tools/list late, writing to one log as each list arrives and as it is answered.
    const log = path.join(memoryDir, 'save-lists.log');
    const env = { FIXTURE_MODE: 'slow-list=3000', LIST_LOG: log };
    const a = await addService(gw.ctx, { name: 'late-a', args: [fixture], env });
    const b = await addService(gw.ctx, { name: 'late-b', args: [fixture], env });
    // A new service is started and counted at once: its own lists end before the save's are looked at.
    const answered = () =>
      existsSync(log)
        ? readFileSync(log, 'utf8')
            .split('\n')
            .filter((l) => l === 'answered').length
        : 0;
    await vi.waitFor(() => expect(answered()).toBeGreaterThanOrEqual(2), { timeout: 30_000, interval: 100 });
    writeFileSync(log, '');
    const made = await api('POST', '/groups', { name: 'at-once', members: [{ service_id: a }, { service_id: b }] });
    expect(made.status).toBe(201);
    // One after another, the first member's list would be answered before the second member's arrived.
    expect(readFileSync(log, 'utf8').trim().split('\n')).toEqual(['tools/list', 'tools/list', 'answered', 'answered']);
  });

  it("relays a member's sampling request to the group's client and its answer back, over streamable HTTP and SSE", async () => {
    const sampler = await addUser(gw.ctx, 'group-sampler');
    // A process only this user's calls run on: Alice's and Bob's ran on the one before, and a question that
    // names no call may come of theirs, so it would be refused (decision 0042).
    await gw.ctx.gateway.reconnect(everything);
    const headers = { authorization: `Bearer ${sampler.key}` };
    for (const wire of ['http', 'sse'] as const) {
      const client = new ClientV1({ name: `group-sampling-${wire}`, version: '1.0.0' }, { capabilities: { sampling: {} } });
      let asked = 0;
      client.setRequestHandler(CreateMessageRequestSchema, async () => {
        asked += 1;
        return { role: 'assistant', content: { type: 'text', text: `sampled for the group over ${wire}` }, model: 'test-model' };
      });
      const url = new URL(`${gw.url}/group/team/${wire === 'http' ? 'mcp' : 'sse'}`);
      await client.connect(
        wire === 'http'
          ? new StreamableHTTPClientTransport(url, { requestInit: { headers } })
          : new SSEClientTransport(url, {
              requestInit: { headers },
              eventSourceInit: { fetch: (u, init) => fetch(u, { ...init, headers: { ...init?.headers, ...headers } }) },
            }),
      );
      try {
        const result = await client.callTool({ name: 'everything__trigger-sampling-request', arguments: { prompt: 'hi', maxTokens: 5 } });
        expect(result.isError ?? false).toBe(false);
        expect(JSON.stringify(result.content)).toContain(`sampled for the group over ${wire}`);
        expect(asked).toBe(1);
      } finally {
        await client.close();
      }
    }
  });

  it('refuses users without access with 403 and unknown groups with 404', async () => {
    const id = await teamId();
    await api('PUT', `/groups/${id}`, {
      name: 'team',
      members: [{ service_id: everything }],
      access: { restricted: true, user_ids: [bob.id] },
    });
    const init = (key: string, name: string) =>
      fetch(`${gw.url}/group/${name}/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
        }),
      }).then((r) => r.status);
    expect(await init(alice.key, 'team')).toBe(403);
    expect(await init(bob.key, 'team')).toBe(200);
    expect(await init(admin.key, 'team')).toBe(200);
    expect(await init(bob.key, 'nope')).toBe(404);
    expect(await init('not-a-key', 'team')).toBe(401);
  });
});

/** An SDK client on a group's face: the harness's connect() with the /group URL. */
function connectGroup(base: string, group: string, key: string, wire: 'http' | 'sse', sdk: 'v1' | 'v2'): Promise<McpClient> {
  return connectUrl(new URL(`${base}/group/${group}/${wire === 'http' ? 'mcp' : 'sse'}`), key, { sdk, wire });
}
