import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Role } from '@toolport/contract';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { signAccessToken } from '../../src/http/access-tokens.js';
import { engines } from '../harness.js';
import { connect, type McpClient, textOf } from './clients.js';
import { addService, addUser, apiCall, type LiveGateway, startGateway } from './gateway-harness.js';

const require = createRequire(import.meta.url);
const memoryEntry = path.join(path.dirname(require.resolve('@modelcontextprotocol/server-memory/package.json')), 'dist/index.js');

/**
 * Issue 17 against real members: tool overrides on /proxy (server-everything), access lists of
 * services, and groups saved with server-everything and server-memory as members. Both engines.
 */
describe.each(engines)('tool overrides, access and groups on %s', (engine) => {
  let gw: LiveGateway;
  let memoryDir: string;
  let everything: number;
  let memory: number;
  let admin: { id: number; key: string; token: string };
  let alice: { id: number; key: string; token: string };
  let bob: { id: number; key: string; token: string };
  let client: McpClient | undefined;

  const tokenFor = async (id: number, role: number) => {
    if (role !== Role.User) await gw.ctx.usersRepo.update(id, { role });
    const row = await gw.ctx.usersRepo.byId(id);
    return signAccessToken(gw.ctx.secrets.jwtKey, { userId: id, authVersion: row?.auth_version ?? 0 });
  };
  const person = async (name: string, role: number = Role.User) => {
    const u = await addUser(gw.ctx, name);
    return { ...u, token: await tokenFor(u.id, role) };
  };
  const api = (method: string, url: string, token: string, body?: unknown, lang = 'en') =>
    apiCall(gw.url, token, method, url, body, { 'accept-language': lang });
  const initialize = (key: string, service: string) =>
    fetch(`${gw.url}/proxy/${service}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      }),
    });

  beforeAll(async () => {
    gw = await startGateway(engine);
    memoryDir = mkdtempSync(path.join(tmpdir(), 'toolport-memory-'));
    everything = await addService(gw.ctx, { name: 'everything' });
    memory = await addService(gw.ctx, {
      name: 'memory',
      args: [memoryEntry],
      env: { MEMORY_FILE_PATH: path.join(memoryDir, 'memory.jsonl') },
    });
    admin = await person('admin1', Role.Admin);
    alice = await person('alice');
    bob = await person('bob');
  });
  afterAll(async () => {
    await client?.close();
    await gw?.close();
    rmSync(memoryDir, { recursive: true, force: true });
  });

  it('lists a service’s live tools with their input schemas', async () => {
    const { status, body } = await api('GET', `/mcp_services/${everything}/tools`, alice.token);
    expect(status).toBe(200);
    const echo = body.data.tools.find((t: { original_name: string }) => t.original_name === 'echo');
    expect(echo).toMatchObject({ name: 'echo', enabled: true, alias: null });
    expect(echo.input_schema.properties).toHaveProperty('message');
  });

  it('tries a tool through the gateway as the signed-in user: text, images, isError, the time taken', async () => {
    const echo = await api('POST', `/mcp_services/${everything}/tools/echo/call`, alice.token, { arguments: { message: 'tried' } });
    expect(echo.status).toBe(200);
    expect(echo.body.data).toMatchObject({ is_error: false, content: [{ type: 'text', text: 'Echo: tried' }] });
    expect(echo.body.data.duration_ms).toBeGreaterThan(0);
    const image = await api('POST', `/mcp_services/${everything}/tools/get-tiny-image/call`, alice.token, {});
    expect(image.body.data.content.some((c: { type: string; mimeType?: string }) => c.type === 'image' && c.mimeType === 'image/png')).toBe(
      true,
    );
    // Missing arguments: the tool answers with an error result, shown as such.
    const bad = await api('POST', `/mcp_services/${everything}/tools/get-sum/call`, alice.token, { arguments: {} });
    expect(bad.status).toBe(200);
    expect(bad.body.data.is_error).toBe(true);
    // Metered as the user's calls, like /proxy (the counters reach the database within a second).
    await vi.waitFor(
      async () => {
        const installed = await api('GET', '/mcp_market/installed', alice.token);
        expect(installed.body.data.find((s: { name: string }) => s.name === 'everything').user_daily_request_count).toBe(3);
      },
      { timeout: 5000, interval: 200 },
    );
  });

  it('over the daily limit, Try it says so in the caller’s language with the count and the limit', async () => {
    const carol = await person('carol');
    expect((await api('PUT', `/mcp_services/${memory}`, admin.token, { rpd_limit: 1 })).status).toBe(200);
    try {
      const first = await api('POST', `/mcp_services/${memory}/tools/read_graph/call`, carol.token, { arguments: {} });
      expect(first.status).toBe(200);
      for (const [lang, text] of [
        ['zh-CN', '你对 memory 的每日请求次数已达上限（1/1）'],
        ['en', 'Your daily request limit for memory is reached (1/1)'],
      ] as const) {
        const over = await api('POST', `/mcp_services/${memory}/tools/read_graph/call`, carol.token, { arguments: {} }, lang);
        expect(over.status).toBe(429);
        expect(over.body).toMatchObject({ success: false, code: 'daily_limit' });
        expect(over.body.message).toContain(text);
        expect(over.body.message).not.toContain('daily request limit exceeded');
      }
    } finally {
      await api('PUT', `/mcp_services/${memory}`, admin.token, { rpd_limit: 0 });
    }
  });

  it('when the tool server cannot start, Try it says so in the caller’s language, with its diagnostic as it came', async () => {
    const broken = await addService(gw.ctx, { name: 'never-starts', command: process.execPath, args: ['-e', 'process.exit(3)'] });
    try {
      for (const [lang, words] of [
        ['zh-CN', /^调用 echo 失败：上游服务不可用：工具服务器.*3/],
        ['en', /^The call of echo failed: Upstream unavailable: tool server exited with code 3/],
      ] as const) {
        const res = await api('POST', `/mcp_services/${broken}/tools/echo/call`, admin.token, { arguments: {} }, lang);
        expect([lang, res.status]).toEqual([lang, 502]);
        expect(res.body).toMatchObject({ success: false, code: 'jsonrpc_error', message: expect.stringMatching(words) });
      }
    } finally {
      expect((await api('POST', '/mcp_market/uninstall', admin.token, { service_id: broken })).status).toBe(200);
    }
  });

  it('renames, re-describes and disables tools on /proxy, and clients hear list_changed', async () => {
    client = await connect(gw.url, 'everything', alice.key, { sdk: 'v1', wire: 'http' });
    // The client's standalone stream is open once a list works.
    await client.listTools();

    const renamed = await api('PUT', `/mcp_services/${everything}/tools/echo`, admin.token, { alias: 'say', description: 'Says it back' });
    expect(renamed.status).toBe(200);
    await vi.waitFor(() => expect(client?.notifications.some((n) => n.method === 'notifications/tools/list_changed')).toBe(true), {
      timeout: 5000,
    });
    const disabled = await api('PUT', `/mcp_services/${everything}/tools/get-sum`, admin.token, { enabled: false });
    expect(disabled.status).toBe(200);

    const tools = (await client.listTools()).tools as { name: string; description?: string }[];
    const names = tools.map((t) => t.name);
    expect(names).toContain('say');
    expect(names).not.toContain('echo');
    expect(names).not.toContain('get-sum');
    expect(tools.find((t) => t.name === 'say')?.description).toBe('Says it back');

    expect(textOf(await client.callTool('say', { message: 'hi' }))).toBe('Echo: hi');
    await expect(client.callTool('echo', { message: 'hi' })).rejects.toThrow('Unknown tool: echo');
    await expect(client.callTool('get-sum', { a: 1, b: 2 })).rejects.toThrow('Tool get-sum is disabled');

    // A user sees only the enabled tools; the admin sees all with their overrides.
    const mine = await api('GET', `/mcp_services/${everything}/tools`, alice.token);
    expect(mine.body.data.tools.map((t: { name: string }) => t.name)).not.toContain('get-sum');
    const cards = await api('GET', '/mcp_market/installed', alice.token);
    expect(cards.body.data.find((s: { name: string }) => s.name === 'everything').tools_disabled).toBe(1);
    const all = await api('GET', `/mcp_services/${everything}/tools`, admin.token);
    // Both count every listed tool, so a user's dialog says "N of M" as the card does (issue 29).
    expect(mine.body.data.total).toBe(all.body.data.tools.length);
    expect(mine.body.data.tools.length).toBe(all.body.data.total - 1);
    expect(all.body.data.tools.find((t: { original_name: string }) => t.original_name === 'get-sum')).toMatchObject({ enabled: false });
  });

  it('refuses bad overrides with a localised 400 and changes nothing', async () => {
    const unknown = await api('PUT', `/mcp_services/${everything}/tools/no-such-tool`, admin.token, { enabled: false }, 'zh-CN');
    expect(unknown.status).toBe(400);
    expect(unknown.body.message).toBe('服务 everything 没有名为“no-such-tool”的工具');
    const invalid = await api('PUT', `/mcp_services/${everything}/tools/get-env`, admin.token, { alias: 'has space' });
    expect(invalid.status).toBe(400);
    expect(invalid.body.message).toContain('Invalid tool name "has space"');
    const taken = await api('PUT', `/mcp_services/${everything}/tools/get-env`, admin.token, { alias: 'say' });
    expect(taken.status).toBe(400);
    expect(taken.body.message).toBe('The name "say" is already used by the tool echo');
    const byUser = await api('PUT', `/mcp_services/${everything}/tools/echo`, alice.token, { enabled: false });
    expect(byUser.status).toBe(403);
    const names = (await client?.listTools())?.tools.map((t) => t.name);
    expect(names).toContain('get-env');
    expect(names).toContain('say');
  });

  it('keeps overrides across a restart, and null clears one', async () => {
    await client?.close();
    client = undefined;
    await gw.restart();
    const after = await connect(gw.url, 'everything', alice.key, { sdk: 'v2', wire: 'sse' });
    try {
      const names = (await after.listTools()).tools.map((t) => t.name);
      expect(names).toContain('say');
      expect(names).not.toContain('get-sum');
      await api('PUT', `/mcp_services/${everything}/tools/echo`, admin.token, { alias: null, description: null });
      await api('PUT', `/mcp_services/${everything}/tools/get-sum`, admin.token, { enabled: null });
      const back = (await after.listTools()).tools.map((t) => t.name);
      expect(back).toEqual(expect.arrayContaining(['echo', 'get-sum']));
      expect(back).not.toContain('say');
    } finally {
      await after.close();
    }
  });

  it('restricts a service to chosen users: 403 on /proxy and hidden from the list for the others', async () => {
    const bad = await api('PUT', `/mcp_services/${memory}`, admin.token, { access: { restricted: true, user_ids: [bob.id, 999_999] } });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toBe('There are no users with these IDs: 999999');
    expect((await initialize(alice.key, 'memory')).status).toBe(200);

    const set = await api('PUT', `/mcp_services/${memory}`, admin.token, { access: { restricted: true, user_ids: [bob.id] } });
    expect(set.status).toBe(200);
    expect((await api('GET', `/mcp_services/${memory}/access`, admin.token)).body.data).toEqual({ restricted: true, user_ids: [bob.id] });

    const refused = await initialize(alice.key, 'memory');
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toBe('Forbidden: you do not have access to memory');
    expect((await initialize(bob.key, 'memory')).status).toBe(200);
    expect((await initialize(admin.key, 'memory')).status).toBe(200);

    const listed = (who: { token: string }) =>
      api('GET', '/mcp_market/installed', who.token).then((r) => r.body.data.map((s: { name: string }) => s.name));
    expect(await listed(alice)).toEqual(['everything']);
    expect(await listed(bob)).toEqual(['everything', 'memory']);
    expect((await api('GET', `/mcp_services/${memory}/tools`, alice.token)).status).toBe(403);
    // Every other door of a user to the one service asks the same list (decision 0040), refusing by id.
    const doors: [string, string, unknown?][] = [
      ['POST', `/mcp_services/${memory}/health/check`],
      ['POST', `/mcp_services/${memory}/toggle`],
      ['GET', `/mcp_services/${memory}/my_env`],
      ['PUT', `/mcp_services/${memory}/my_env`, { env: { MEMORY_FILE_PATH: '/tmp/x' } }],
      ['GET', `/mcp_services/${memory}/oauth`],
      ['POST', `/mcp_services/${memory}/oauth/connect`],
      ['POST', `/mcp_services/${memory}/oauth/disconnect`],
      ['POST', `/mcp_services/${memory}/tools/read_graph/call`, { arguments: {} }],
    ];
    for (const [method, url, body] of doors) {
      const refused = await api(method, url, alice.token, body);
      expect([url, refused.status, refused.body.message]).toEqual([url, 403, `You do not have access to the service with ID ${memory}`]);
      // Bob, on the list, passes the access check (whatever the door then answers).
      expect([url, (await api(method, url, bob.token, body)).status]).not.toEqual([url, 403]);
    }
    // Bob's personal switch flipped above: back on.
    expect((await api('POST', `/mcp_services/${memory}/toggle`, bob.token)).body.data).toMatchObject({ enabled: true, scope: 'personal' });

    // Disabled, the restricted service still answers a stranger "no access": its state is none of their business.
    expect((await api('POST', `/mcp_services/${memory}/toggle`, admin.token)).body.data).toMatchObject({ enabled: false });
    const stranger = await initialize(alice.key, 'memory');
    expect([stranger.status, ((await stranger.json()) as { error: { message: string } }).error.message]).toEqual([
      403,
      'Forbidden: you do not have access to memory',
    ]);
    const listed503 = await initialize(bob.key, 'memory');
    expect([listed503.status, ((await listed503.json()) as { error: { message: string } }).error.message]).toEqual([
      503,
      'Service unavailable: memory is disabled',
    ]);
    expect((await api('POST', `/mcp_services/${memory}/toggle`, admin.token)).body.data).toMatchObject({ enabled: true });

    await api('PUT', `/mcp_services/${memory}`, admin.token, { access: { restricted: false, user_ids: [] } });
    expect((await initialize(alice.key, 'memory')).status).toBe(200);
  });

  it('saves groups of real members and refuses bad ones with a localised 400', async () => {
    const group = {
      name: 'team',
      display_name: 'Team tools',
      members: [{ service_id: everything }, { service_id: memory, tools: ['read_graph', 'search_nodes'] }],
    };
    const created = await api('POST', '/groups', admin.token, group);
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({
      name: 'team',
      mode: 'all',
      separator: '__',
      members: group.members,
      access: { restricted: false, user_ids: [] },
    });
    const id = created.body.data.id as number;

    const refusals: [unknown, string][] = [
      [{ ...group, name: 'other', members: [] }, 'A group needs at least one service'],
      [{ ...group, name: 'team' }, 'A group named "team" already exists'],
      [{ ...group, name: 'Bad Name' }, 'Invalid group name "Bad Name"'],
      [{ ...group, name: 'other', members: [{ service_id: 424242 }] }, 'There is no service with ID 424242'],
      [{ ...group, name: 'other', members: [{ service_id: memory, tools: ['nope'] }] }, 'Service memory has no tool named "nope"'],
      [{ ...group, name: 'other', separator: 'e' }, 'The separator "e" appears in the service name "everything"'],
      [{ ...group, name: 'other', separator: '/' }, 'Invalid separator "/"'],
      [{ ...group, name: 'other', access: { restricted: true, user_ids: [888_888] } }, 'There are no users with these IDs: 888888'],
    ];
    for (const [body, message] of refusals) {
      const res = await api('POST', '/groups', admin.token, body);
      expect(res.status, message).toBe(400);
      expect(res.body.message).toContain(message);
    }
    // Refusals about one field name it, for the dialog to show beside it (decision 0058).
    expect((await api('POST', '/groups', admin.token, group)).body).toMatchObject({ code: 'group_name_taken', field: 'name' });
    expect((await api('POST', '/groups', admin.token, { ...group, name: 'other', separator: 'e' })).body).toMatchObject({
      field: 'separator',
    });
    expect((await api('POST', '/groups', admin.token, { ...group, name: 'other', members: [] })).body).toMatchObject({ field: 'members' });
    // Discovery mode is built (decision 0033); a mode that does not exist is refused.
    expect((await api('POST', '/groups', admin.token, { ...group, name: 'other', mode: 'smart' })).status).toBe(400);
    const zh = await api('POST', '/groups', admin.token, { ...group, name: 'other', members: [] }, 'zh-CN');
    expect(zh.body.message).toBe('分组至少需要一个服务');
    expect((await api('GET', '/groups', admin.token)).body.data.map((g: { name: string }) => g.name)).toEqual(['team']);
    expect((await api('POST', '/groups', alice.token, { ...group, name: 'mine' })).status).toBe(403);

    // Restricted to bob: alice neither lists nor reads it.
    const restricted = await api('PUT', `/groups/${id}`, admin.token, { ...group, access: { restricted: true, user_ids: [bob.id] } });
    expect(restricted.status).toBe(200);
    expect((await api('GET', '/groups', alice.token)).body.data).toEqual([]);
    expect((await api('GET', `/groups/${id}`, alice.token)).status).toBe(403);
    const forBob = await api('GET', '/groups', bob.token);
    expect(forBob.body.data.map((g: { name: string }) => g.name)).toEqual(['team']);
    // Users are not told who else may use it.
    expect(forBob.body.data[0].access).toEqual({ restricted: false, user_ids: [] });

    // Refused by id: alice is not told the name of a group she may not use.
    expect((await api('GET', `/groups/${id}`, alice.token)).body.message).toBe(`You do not have access to the group with ID ${id}`);

    // A member restricted to others is left out of the group as alice is shown it (decision 0040), and of Tools.
    await api('PUT', `/groups/${id}`, admin.token, group);
    await api('PUT', `/mcp_services/${memory}`, admin.token, { access: { restricted: true, user_ids: [bob.id] } });
    const members = async (who: { token: string }) =>
      (await api('GET', `/groups/${id}`, who.token)).body.data.members.map((m: { service_id: number }) => m.service_id);
    expect(await members(alice)).toEqual([everything]);
    expect((await api('GET', '/groups', alice.token)).body.data[0].members).toEqual([{ service_id: everything }]);
    expect(await members(bob)).toEqual([everything, memory]);
    expect(await members(admin)).toEqual([everything, memory]);
    const tools = await api('GET', `/mcp_services/${memory}/tools`, alice.token, undefined, 'zh-CN');
    expect([tools.status, tools.body.message]).toEqual([403, `你无权使用 ID 为 ${memory} 的服务`]);
    await api('PUT', `/mcp_services/${memory}`, admin.token, { access: { restricted: false, user_ids: [] } });

    expect((await api('DELETE', `/groups/${id}`, admin.token)).status).toBe(200);
    expect((await api('GET', `/groups/${id}`, admin.token)).status).toBe(404);
  });
});
