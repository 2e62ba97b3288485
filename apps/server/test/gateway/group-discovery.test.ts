import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Role } from '@toolport/contract';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ToolIndexCache } from '../../src/gateway/downstream/tool-search.js';
import { connect, connectUrl, type McpClient, textOf } from './clients.js';
import { addService, addUser, addUserWithToken, apiCall, type LiveGateway, startGateway } from './gateway-harness.js';

const require = createRequire(import.meta.url);
const memoryEntry = path.join(path.dirname(require.resolve('@modelcontextprotocol/server-memory/package.json')), 'dist/index.js');

interface Found {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/**
 * A group in discovery mode (issue 17, item 2) with real members, server-everything and
 * server-memory, through the official SDK clients: two tools, search in English and Chinese, and
 * call_tool taking the same path, limits and overrides as a direct call in `all` mode.
 */
describe('a discovery group', () => {
  let gw: LiveGateway;
  let memoryDir: string;
  let everything: number;
  let memory: number;
  let groupId: number;
  let admin: { id: number; key: string; token: string };
  const clients: McpClient[] = [];

  const api = (method: string, url: string, body?: unknown) => apiCall(gw.url, admin.token, method, url, body);
  const open = async (key: string, wire: 'http' | 'sse' = 'http', sdk: 'v1' | 'v2' = 'v1') => {
    const client = await connectUrl(new URL(`${gw.url}/group/finder/${wire === 'http' ? 'mcp' : 'sse'}`), key, { sdk, wire });
    clients.push(client);
    return client;
  };
  const search = async (client: McpClient, query: string, limit?: number) => {
    const result = await client.callTool('search_tools', { query, ...(limit ? { limit } : {}) });
    expect(result.isError).toBeFalsy();
    const structured = result.structuredContent as { tools: Found[] };
    // The same answer as text (JSON) for clients that read only content.
    expect(JSON.parse(textOf(result))).toEqual(structured);
    return structured.tools;
  };
  const saveGroup = (mode: 'all' | 'discovery') =>
    api('PUT', `/groups/${groupId}`, { name: 'finder', mode, members: [{ service_id: everything }, { service_id: memory }] });

  beforeAll(async () => {
    gw = await startGateway('sqlite');
    memoryDir = mkdtempSync(path.join(tmpdir(), 'toolport-memory-'));
    everything = await addService(gw.ctx, { name: 'everything', rpdLimit: 2 });
    memory = await addService(gw.ctx, { name: 'memory', args: [memoryEntry], env: { MEMORY_FILE_PATH: path.join(memoryDir, 'm.jsonl') } });
    admin = await addUserWithToken(gw.ctx, 'admin1', Role.Admin);
    const created = await api('POST', '/groups', {
      name: 'finder',
      mode: 'discovery',
      members: [{ service_id: everything }, { service_id: memory }],
    });
    expect(created.status).toBe(201);
    expect(created.body.data.mode).toBe('discovery');
    groupId = created.body.data.id;
  });
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await gw?.close();
    rmSync(memoryDir, { recursive: true, force: true });
  });

  it('lists exactly search_tools and call_tool, and still aggregates prompts and resources', async () => {
    const alice = await addUser(gw.ctx, 'alice');
    for (const [wire, sdk] of [
      ['http', 'v1'],
      ['sse', 'v2'],
    ] as const) {
      const client = await open(alice.key, wire, sdk);
      const { tools } = (await client.listTools()) as { tools: { name: string; outputSchema?: unknown }[] };
      expect(tools.map((t) => t.name)).toEqual(['search_tools', 'call_tool']);
      expect(tools[0]?.outputSchema).toMatchObject({ type: 'object', required: ['tools'] });
      const prompts = (await client.listPrompts()).prompts.map((p) => p.name);
      expect(prompts.length).toBeGreaterThan(0);
      expect(prompts.every((p) => p.startsWith('everything__'))).toBe(true);
      expect((await client.listResources()).resources.length).toBeGreaterThan(0);
    }
  });

  it('finds the right member tool in English and in Chinese, with its namespaced name and input schema', async () => {
    // An admin re-described a tool in Chinese for their team: search reads the overridden description.
    expect((await api('PUT', `/mcp_services/${memory}/tools/read_graph`, { description: '读取整个知识图谱的全部内容' })).status).toBe(200);
    const bob = await addUser(gw.ctx, 'bob');
    const client = await open(bob.key);
    await client.listTools();

    const echo = await search(client, 'echo a message back');
    expect(echo[0]?.name).toBe('everything__echo');
    expect(echo[0]?.description).toBe('Echoes back the input string');
    expect(echo[0]?.inputSchema).toMatchObject({ type: 'object', properties: { message: expect.any(Object) } });
    expect((await search(client, 'search nodes in the knowledge graph'))[0]?.name).toBe('memory__search_nodes');
    expect((await search(client, 'add two numbers'))[0]?.name).toBe('everything__get-sum');
    expect(await search(client, 'knowledge graph', 2)).toHaveLength(2);

    const chinese = await search(client, '查看知识图谱');
    expect(chinese[0]?.name).toBe('memory__read_graph');
    expect(chinese[0]?.description).toBe('读取整个知识图谱的全部内容');

    // Nothing matches: an empty list, not an error.
    expect(await search(client, 'kubernetes')).toEqual([]);
    // A call without a query is the model's mistake, told as a tool error it can correct.
    const missing = await client.callTool('search_tools', {});
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toContain('search_tools needs a "query"');
    await api('PUT', `/mcp_services/${memory}/tools/read_graph`, { description: null });
  });

  it('routes call_tool to the member, counted once against the member’s daily limit like /proxy', async () => {
    const carol = await addUser(gw.ctx, 'carol');
    const client = await open(carol.key);
    // Searching and listing reach no member tool: not counted.
    await search(client, 'echo');
    await search(client, 'sum');
    expect(textOf(await client.callTool('call_tool', { name: 'everything__echo', arguments: { message: 'via discovery' } }))).toBe(
      'Echo: via discovery',
    );
    // memory has no limit: its calls count against nothing of everything's.
    await client.callTool('call_tool', {
      name: 'memory__create_entities',
      arguments: { entities: [{ name: 'Ada', entityType: 'person', observations: ['x'] }] },
    });
    expect(textOf(await client.callTool('call_tool', { name: 'memory__read_graph' }))).toContain('Ada');

    const proxied = await connect(gw.url, 'everything', carol.key, { sdk: 'v1', wire: 'http' });
    clients.push(proxied);
    expect(textOf(await proxied.callTool('echo', { message: 'via proxy' }))).toBe('Echo: via proxy');
    // 2 of 2 used (one through the group, one through /proxy): both faces refuse the third.
    await expect(client.callTool('call_tool', { name: 'everything__echo', arguments: { message: 'three' } })).rejects.toThrow(
      'daily request limit exceeded: 2/2',
    );
    await expect(proxied.callTool('echo', { message: 'three' })).rejects.toThrow('daily request limit exceeded');
  });

  it('refuses a disabled tool, an unknown name and a direct call with clear errors, and hides the disabled tool from search', async () => {
    expect((await api('PUT', `/mcp_services/${everything}/tools/get-sum`, { enabled: false })).status).toBe(200);
    const dave = await addUser(gw.ctx, 'dave');
    const client = await open(dave.key);
    await expect(client.callTool('call_tool', { name: 'everything__get-sum', arguments: { a: 1, b: 2 } })).rejects.toThrow(
      'Tool get-sum is disabled on this gateway',
    );
    expect((await search(client, 'sum of two numbers', 20)).map((t) => t.name)).not.toContain('everything__get-sum');
    await expect(client.callTool('call_tool', { name: 'nowhere__echo', arguments: {} })).rejects.toThrow('Unknown tool: nowhere__echo');
    await expect(client.callTool('everything__echo', { message: 'direct' })).rejects.toThrow(
      'Unknown tool: everything__echo (this group offers search_tools and call_tool)',
    );
    const nameless = await client.callTool('call_tool', { arguments: {} });
    expect(nameless.isError).toBe(true);
    expect(textOf(nameless)).toContain('call_tool needs a "name"');
    await api('PUT', `/mcp_services/${everything}/tools/get-sum`, { enabled: null });
  });

  it('builds the index once per change of the group, not per query', async () => {
    // The index caches this gateway's group face uses, seen as they are asked.
    const caches = new Set<ToolIndexCache<never>>();
    const get = ToolIndexCache.prototype.get;
    const spy = vi.spyOn(ToolIndexCache.prototype, 'get').mockImplementation(function (this: ToolIndexCache<never>, ...args) {
      caches.add(this);
      return get.apply(this, args);
    });
    const builds = () => [...caches].reduce((sum, c) => sum + c.builds, 0);
    try {
      const frank = await addUser(gw.ctx, 'frank');
      const client = await open(frank.key);
      await search(client, 'echo');
      const first = builds();
      for (const query of ['add two numbers', 'knowledge graph', '查看知识图谱', 'echo a message', 'read graph'])
        await search(client, query);
      expect(caches.size).toBe(1);
      expect(builds()).toBe(first);
      // A change of the group's tools (an admin re-describes one): the next search builds once more, then reuses it.
      expect((await api('PUT', `/mcp_services/${memory}/tools/read_graph`, { description: 'Dump the whole memory' })).status).toBe(200);
      await vi.waitFor(async () => expect((await search(client, 'dump the whole memory'))[0]?.name).toBe('memory__read_graph'), {
        timeout: 5000,
      });
      const changed = builds();
      expect(changed).toBe(first + 1);
      for (const query of ['echo', 'dump memory', 'sum']) await search(client, query);
      expect(builds()).toBe(changed);
    } finally {
      spy.mockRestore();
      await api('PUT', `/mcp_services/${memory}/tools/read_graph`, { description: null });
    }
  });

  it('tells its clients when the mode changes, and lists accordingly', async () => {
    const erin = await addUser(gw.ctx, 'erin');
    const client = await open(erin.key);
    expect((await client.listTools()).tools).toHaveLength(2);
    expect((await saveGroup('all')).status).toBe(200);
    await vi.waitFor(() => expect(client.notifications.some((n) => n.method === 'notifications/tools/list_changed')).toBe(true), {
      timeout: 5000,
    });
    await vi.waitFor(async () => expect((await client.listTools()).tools.map((t) => t.name)).toContain('everything__echo'), {
      timeout: 5000,
    });
    client.notifications.length = 0;
    expect((await saveGroup('discovery')).status).toBe(200);
    await vi.waitFor(() => expect(client.notifications.some((n) => n.method === 'notifications/tools/list_changed')).toBe(true), {
      timeout: 5000,
    });
    await vi.waitFor(async () => expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['search_tools', 'call_tool']), {
      timeout: 5000,
    });
  });
});
