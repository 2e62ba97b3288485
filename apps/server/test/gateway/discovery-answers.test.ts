import path from 'node:path';
import { Role } from '@toolport/contract';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { connect, connectUrl, type McpClient, textOf } from './clients.js';
import { addService, addUser, addUserWithToken, apiCall, type LiveGateway, startGateway } from './gateway-harness.js';
import { openSession, post, sseMessages } from './raw-http.js';

const publishedTools = path.join(import.meta.dirname, '../fixtures/published-tools-server.mjs');

/** Tools no strict client accepts as they are, beside Sentry's real ones (its `whoami` has `inputSchema: {}`). */
const BAD_TOOLS = [
  { name: 'string_input', description: 'Takes a bare string', inputSchema: { type: 'string' } },
  { name: 'boolean_property', description: 'Takes a flag of any shape', inputSchema: { type: 'object', properties: { flag: true } } },
  { name: 'array_output', description: 'Answers a list', inputSchema: { type: 'object' }, outputSchema: { type: 'array' } },
  { name: 'no_schema', description: 'Lists no schema at all' },
];

interface Found {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}
interface Answer {
  tools: Found[];
  weak?: boolean;
  note?: string;
  services?: { name: string; description: string }[];
  mode: string;
}

/**
 * Issue 28, items 3 and 4: a member that publishes a tool strict clients reject (Sentry's `whoami`
 * with `inputSchema: {}`) breaks no list on any face, for the official SDK clients v1 and v2; and
 * `search_tools` answers what an agent can act on (service filter, limit, a weak or empty result
 * that says so and lists the group's services).
 */
describe('strict clients and discovery answers', () => {
  let gw: LiveGateway;
  let admin: { id: number; key: string; token: string };
  let user: { id: number; key: string };
  let sentry: number;
  const clients: McpClient[] = [];
  const api = (method: string, url: string, body?: unknown) => apiCall(gw.url, admin.token, method, url, body);
  const open = async (url: string, sdk: 'v1' | 'v2' = 'v1') => {
    const client = await connectUrl(new URL(url), user.key, { sdk, wire: 'http' });
    clients.push(client);
    return client;
  };
  const search = async (client: McpClient, args: Record<string, unknown>) => {
    const result = await client.callTool('search_tools', args);
    return { result, answer: result.structuredContent as unknown as Answer };
  };

  beforeAll(async () => {
    gw = await startGateway('sqlite');
    admin = await addUserWithToken(gw.ctx, 'admin1', Role.Admin);
    user = await addUser(gw.ctx, 'ursula');
    sentry = await addService(gw.ctx, {
      name: 'sentry',
      args: [publishedTools],
      env: { CATALOG_SERVERS: 'sentry', CATALOG_EXTRA: JSON.stringify(BAD_TOOLS) },
    });
    const github = await addService(gw.ctx, { name: 'github', args: [publishedTools], env: { CATALOG_SERVERS: 'github' } });
    const everything = await addService(gw.ctx, { name: 'everything' });
    for (const [name, mode, members] of [
      ['mixed', 'all', [sentry, everything]],
      ['finder', 'discovery', [sentry, github, everything]],
    ] as const) {
      const made = await api('POST', '/groups', { name, mode, members: members.map((id) => ({ service_id: id })) });
      expect(made.status).toBe(201);
    }
  });
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await gw?.close();
  });

  const expectRepaired = (tools: { name: string; inputSchema?: unknown; outputSchema?: unknown }[], prefix: string) => {
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect(byName.get(`${prefix}whoami`)?.inputSchema).toEqual({ type: 'object' });
    expect(byName.get(`${prefix}boolean_property`)?.inputSchema).toEqual({ type: 'object', properties: { flag: {} } });
    expect(byName.get(`${prefix}array_output`)).toBeDefined();
    expect(byName.get(`${prefix}array_output`)?.outputSchema).toBeUndefined();
    expect(byName.get(`${prefix}no_schema`)?.inputSchema).toEqual({ type: 'object' });
    // The one that cannot be repaired without changing what it takes is left out; the rest stay.
    expect(byName.has(`${prefix}string_input`)).toBe(false);
    expect(byName.has(`${prefix}find_organizations`)).toBe(true);
  };

  it('lists a member with Sentry’s whoami on /proxy and in a group, for SDK v1 and v2', async () => {
    for (const sdk of ['v1', 'v2'] as const) {
      const proxied = await connect(gw.url, 'sentry', user.key, { sdk, wire: 'http' });
      clients.push(proxied);
      const own = (await proxied.listTools()).tools;
      expectRepaired(own, '');
      expect(own).toHaveLength(8 + BAD_TOOLS.length - 1);

      const group = await open(`${gw.url}/group/mixed/mcp`, sdk);
      const merged = (await group.listTools()).tools;
      expectRepaired(merged, 'sentry__');
      expect(merged.some((t) => t.name === 'everything__echo')).toBe(true);
      // The repaired tool is called as it is.
      expect(textOf(await group.callTool('sentry__whoami', {}))).toBe('called whoami {}');
    }
  });

  it('tells each repair and each tool left out once in the service’s log, where the console shows it', async () => {
    const client = await open(`${gw.url}/group/mixed/mcp`);
    await client.listTools();
    await gw.ctx.serviceLog.flush();
    const logs = await api('GET', `/mcp_logs?service_id=${sentry}&page_size=100`);
    expect(logs.status).toBe(200);
    const lines = (logs.body.data.logs as { level: string; message: string }[]).map((l) => `${l.level} ${l.message}`);
    const about = (tool: string) => lines.filter((l) => l.includes(`Tool "${tool}"`));
    expect(about('string_input')).toEqual([
      'warn Tool "string_input" left out of tools/list: input schema is of type "string", where MCP asks for an object (a strict MCP client would reject the whole list)',
    ]);
    expect(about('whoami')).toEqual(['warn Tool "whoami" repaired in tools/list: input schema had no type: taken as an object']);
    expect(about('array_output')).toHaveLength(1);
    expect(about('find_organizations')).toEqual([]);
  });

  it('finds the repaired tool in discovery and calls it', async () => {
    const client = await open(`${gw.url}/group/finder/mcp`, 'v2');
    const { answer } = await search(client, { query: 'which account am I signed in with' });
    expect(answer.tools[0]).toMatchObject({ name: 'sentry__whoami', inputSchema: { type: 'object' } });
    expect(answer.tools.map((t) => t.name)).not.toContain('sentry__string_input');
    expect(textOf(await client.callTool('call_tool', { name: 'sentry__whoami' }))).toBe('called whoami {}');
  });

  it('narrows a search to one service or several, and refuses a service the group lacks', async () => {
    const client = await open(`${gw.url}/group/finder/mcp`);
    const everywhere = (await search(client, { query: 'search issues', limit: 10 })).answer.tools.map((t) => t.name);
    expect(everywhere.some((n) => n.startsWith('sentry__')) && everywhere.some((n) => n.startsWith('github__'))).toBe(true);
    const github = (await search(client, { query: 'search issues', service: 'github', limit: 10 })).answer.tools;
    expect(github.length).toBeGreaterThan(0);
    expect(github.every((t) => t.name.startsWith('github__'))).toBe(true);
    const both = (await search(client, { query: 'search issues', service: ['github', 'sentry'] })).answer.tools;
    expect(both.every((t) => /^(github|sentry)__/.test(t.name))).toBe(true);

    const unknown = await search(client, { query: 'search issues', service: 'gitlab' });
    expect(unknown.result.isError).toBe(true);
    expect(textOf(unknown.result)).toBe('This group has no service named "gitlab". Its services: sentry, github, everything.');
    const wrongType = await search(client, { query: 'x', service: 7 });
    expect(wrongType.result.isError).toBe(true);
    expect(textOf(wrongType.result)).toContain('"service" must be the name of one of this group');
  });

  it('checks the limit: a whole number from 1 to 20', async () => {
    const client = await open(`${gw.url}/group/finder/mcp`);
    for (const limit of [0, 21, 2.5, '3', -1]) {
      const { result } = await search(client, { query: 'issue', limit });
      expect(result.isError, String(limit)).toBe(true);
      expect(textOf(result)).toBe(`"limit" must be a whole number from 1 to 20 (got ${JSON.stringify(limit)}).`);
    }
    // Every tool of the github member says "github" in its service field: more than 20 match.
    expect((await search(client, { query: 'github', limit: 20 })).answer.tools).toHaveLength(20);
    expect((await search(client, { query: 'issue', limit: 2 })).answer.tools).toHaveLength(2);
  });

  it('says so when nothing matches, or nothing well, and lists the group’s services one line each', async () => {
    const described = await api('PUT', `/mcp_services/${sentry}`, {
      description: 'Sentry: errors, issues and releases of your projects\nmore lines',
    });
    expect(described.status, JSON.stringify(described.body)).toBe(200);
    const client = await open(`${gw.url}/group/finder/mcp`);
    const none = (await search(client, { query: 'book a flight to Paris' })).answer;
    expect(none.tools).toEqual([]);
    expect(none.weak).toBe(true);
    expect(none.note).toContain('No tool of this group matched "book a flight to Paris"');
    expect(none.services?.map((s) => s.name)).toEqual(['sentry', 'github', 'everything']);
    // A new description is not announced: the group face reads the service again within 3 s.
    await vi.waitFor(
      async () =>
        expect((await search(client, { query: 'book a flight to Paris' })).answer.services?.[0]?.description).toBe(
          'Sentry: errors, issues and releases of your projects',
        ),
      { timeout: 8000, interval: 500 },
    );

    // "order" is a parameter of some search tools (sort order): a third of the query, a guess.
    const weak = (await search(client, { query: 'order a pizza delivery' })).answer;
    expect(weak.tools.length).toBeGreaterThan(0);
    expect(weak.weak).toBe(true);
    expect(weak.note).toContain('Nothing matched "order a pizza delivery" well');
    expect(weak.services).toHaveLength(3);

    const good = (await search(client, { query: 'create a pull request' })).answer;
    expect(good.tools[0]?.name).toBe('github__create_pull_request');
    expect(good.weak).toBeUndefined();
    expect(good.services).toBeUndefined();
    expect(good.mode).toBe('lexical');
  });

  it('never names, lists or searches a member the caller may not use', async () => {
    const github = (await api('GET', '/mcp_market/installed')).body.data.find((s: { name: string }) => s.name === 'github');
    expect((await api('PUT', `/mcp_services/${github.id}`, { access: { restricted: true, user_ids: [] } })).status).toBe(200);
    try {
      const client = await open(`${gw.url}/group/finder/mcp`);
      await vi.waitFor(
        async () =>
          expect((await search(client, { query: 'book a flight to Paris' })).answer.services?.map((s) => s.name)).toEqual([
            'sentry',
            'everything',
          ]),
        { timeout: 8000, interval: 500 },
      );
      expect(
        (await search(client, { query: 'create a pull request', limit: 20 })).answer.tools.some((t) => t.name.startsWith('github__')),
      ).toBe(false);
      const refused = await search(client, { query: 'create a pull request', service: 'github' });
      expect(refused.result.isError).toBe(true);
      expect(textOf(refused.result)).toBe('This group has no service named "github". Its services: sentry, everything.');
    } finally {
      await api('PUT', `/mcp_services/${github.id}`, { access: { restricted: false, user_ids: [] } });
    }
  });

  it('answers in Chinese to a client that asks for it', async () => {
    const url = `${gw.url}/group/finder/mcp`;
    const id = await openSession(url, user.key);
    const reply = await post(
      url,
      user.key,
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'search_tools', arguments: { query: '订一份披萨外卖' } } },
      { 'mcp-session-id': id, 'accept-language': 'zh-CN' },
    );
    const message = (reply.headers.get('content-type')?.includes('event-stream') ? sseMessages(reply.text)[0] : reply.json()) as {
      result: { structuredContent: Answer };
    };
    expect(message.result.structuredContent.note).toContain('本分组没有与 "订一份披萨外卖" 匹配的工具');
    const refused = await post(
      url,
      user.key,
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'search_tools', arguments: { query: 'x', limit: 99 } } },
      { 'mcp-session-id': id, 'accept-language': 'zh-CN' },
    );
    const text = JSON.stringify(refused.headers.get('content-type')?.includes('event-stream') ? sseMessages(refused.text) : refused.json());
    expect(text).toContain('必须是 1 到 20 之间的整数');
  });
});
