import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Role } from '@toolport/contract';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { signAccessToken } from '../../src/http/access-tokens.js';
import { connect, connectUrl, type McpClient, textOf } from './clients.js';
import { addService, addUser, apiCall, type LiveGateway, startGateway } from './gateway-harness.js';

const fixture = new URL('../fixtures/fixture-mcp-server.mjs', import.meta.url).pathname;

/**
 * Issue 14 inside groups and issue 17's list cache, through the real app with real members
 * (server-everything and the fixture server) and the official SDK client on /group/{name}/mcp.
 */
describe('personal switches inside groups, and the group tools/list cache', () => {
  let gw: LiveGateway;
  let dir: string;
  let listLog: string;
  let everything: number;
  let counted: number;
  let admin: { id: number; key: string; token: string };
  let alice: { id: number; key: string; token: string };
  let bob: { id: number; key: string; token: string };
  const clients: McpClient[] = [];

  const api = (token: string, method: string, url: string, body?: unknown) => apiCall(gw.url, token, method, url, body);
  const withToken = async (u: { id: number; key: string }) => {
    const row = await gw.ctx.usersRepo.byId(u.id);
    return { ...u, token: await signAccessToken(gw.ctx.secrets.jwtKey, { userId: u.id, authVersion: row?.auth_version ?? 0 }) };
  };
  const open = async (key: string) => {
    const client = await connectUrl(new URL(`${gw.url}/group/team/mcp`), key, { sdk: 'v1', wire: 'http' });
    clients.push(client);
    return client;
  };
  const names = async (client: McpClient) => (await client.listTools()).tools.map((t) => t.name);
  const listChanges = (client: McpClient) => client.notifications.filter((n) => n.method === 'notifications/tools/list_changed').length;
  /** How many tools/list the fixture member has answered so far. */
  const upstreamLists = () => readFileSync(listLog, 'utf8').split('\n').filter(Boolean).length;

  beforeAll(async () => {
    gw = await startGateway('sqlite');
    dir = mkdtempSync(path.join(tmpdir(), 'toolport-group-cache-'));
    listLog = path.join(dir, 'lists.log');
    writeFileSync(listLog, '');
    everything = await addService(gw.ctx, { name: 'everything' });
    counted = await addService(gw.ctx, { name: 'counted', args: [fixture], env: { LIST_LOG: listLog } });
    const a = await addUser(gw.ctx, 'admin1');
    await gw.ctx.usersRepo.update(a.id, { role: Role.Admin });
    admin = await withToken(a);
    alice = await withToken(await addUser(gw.ctx, 'alice'));
    bob = await withToken(await addUser(gw.ctx, 'bob'));
    const created = await api(admin.token, 'POST', '/groups', {
      name: 'team',
      members: [{ service_id: everything }, { service_id: counted }],
    });
    expect(created.status).toBe(201);
  });
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await gw?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('hides and refuses a member a user switched off, in their groups only, and tells their sessions', async () => {
    const mine = await open(alice.key);
    const theirs = await open(bob.key);
    expect(await names(mine)).toEqual(expect.arrayContaining(['everything__echo', 'counted__echo']));
    expect(await names(theirs)).toEqual(expect.arrayContaining(['everything__echo', 'counted__echo']));
    const heardBefore = listChanges(mine);
    const bobHeardBefore = listChanges(theirs);

    // Alice's switch is personal (role 1): the service is off for her alone.
    const off = await api(alice.token, 'POST', `/mcp_services/${everything}/toggle`);
    expect(off.status).toBe(200);
    expect(off.body.data).toMatchObject({ enabled: false, scope: 'personal' });
    await vi.waitFor(() => expect(listChanges(mine)).toBeGreaterThan(heardBefore), { timeout: 5000 });

    const hers = await names(mine);
    expect(hers.some((n) => n.startsWith('everything__'))).toBe(false);
    expect(hers).toContain('counted__echo');
    await expect(mine.callTool('everything__echo', { message: 'hi' })).rejects.toThrow(
      'Service unavailable: everything is switched off for you; switch it on again in the console',
    );
    // The same words as /proxy refuses her with.
    const proxied = await fetch(`${gw.url}/proxy/everything/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${alice.key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      }),
    });
    expect(proxied.status).toBe(503);
    expect(JSON.stringify(await proxied.json())).toContain('everything is switched off for you');
    // A new session of hers is refused the same way.
    const fresh = await open(alice.key);
    expect((await names(fresh)).some((n) => n.startsWith('everything__'))).toBe(false);

    // Bob is unaffected: his list is whole, his call works, he was not told to re-list.
    expect(await names(theirs)).toContain('everything__echo');
    expect(textOf(await theirs.callTool('everything__echo', { message: 'bob' }))).toBe('Echo: bob');
    expect(listChanges(theirs)).toBe(bobHeardBefore);

    // Switched on again: she hears it and the member is back.
    const heard = listChanges(mine);
    expect((await api(alice.token, 'POST', `/mcp_services/${everything}/toggle`)).body.data).toMatchObject({ enabled: true });
    await vi.waitFor(() => expect(listChanges(mine)).toBeGreaterThan(heard), { timeout: 5000 });
    expect(await names(mine)).toContain('everything__echo');
    expect(textOf(await mine.callTool('everything__echo', { message: 'back' }))).toBe('Echo: back');
  });

  it('hides and refuses a member once its access list leaves a user out: the cached list drops and their sessions hear it', async () => {
    const mine = await open(alice.key);
    const theirs = await open(bob.key);
    // Listed twice: the second answer comes from the cache, which the change must drop.
    await names(mine);
    expect(await names(mine)).toContain('counted__echo');
    expect(await names(theirs)).toContain('counted__echo');
    const heard = listChanges(mine);
    const bobHeard = listChanges(theirs);

    const restricted = await api(admin.token, 'PUT', `/mcp_services/${counted}`, { access: { restricted: true, user_ids: [bob.id] } });
    expect(restricted.status).toBe(200);
    await vi.waitFor(() => expect(listChanges(mine)).toBeGreaterThan(heard), { timeout: 5000 });
    await vi.waitFor(() => expect(listChanges(theirs)).toBeGreaterThan(bobHeard), { timeout: 5000 });

    // Alice: the list no longer shows what a call would refuse, and the refusal names the service as /proxy does.
    const hers = await names(mine);
    expect(hers.some((n) => n.startsWith('counted__'))).toBe(false);
    expect(hers).toContain('everything__echo');
    await expect(mine.callTool('counted__echo', { text: 'hi' })).rejects.toThrow('Forbidden: you do not have access to counted');
    // Bob, on the list, keeps it.
    expect(await names(theirs)).toContain('counted__echo');
    expect(textOf(await theirs.callTool('counted__echo', { text: 'bob' }))).toBe('echo: bob');

    // Open again: back for her at once.
    await api(admin.token, 'PUT', `/mcp_services/${counted}`, { access: { restricted: false, user_ids: [] } });
    expect(await names(mine)).toContain('counted__echo');
    expect(textOf(await mine.callTool('counted__echo', { text: 'back' }))).toBe('echo: back');
  });

  it('answers tools/list from its cache until a member, an override, the membership or access changes', async () => {
    const client = await open(bob.key);
    await names(client);
    await names(client);
    // Warm: further lists do not reach the member.
    const warm = upstreamLists();
    for (let i = 0; i < 5; i += 1) expect(await names(client)).toContain('counted__echo');
    expect(upstreamLists()).toBe(warm);

    /** After a change: the first list asks the member once, the next ones do not. */
    const refetchedOnce = async () => {
      const before = upstreamLists();
      const listed = await names(client);
      expect(upstreamLists()).toBe(before + 1);
      await names(client);
      expect(upstreamLists()).toBe(before + 1);
      return listed;
    };

    // The member's own list_changed drops it.
    await client.callTool('counted__change-list', {});
    await refetchedOnce();

    // An override drops it, and the list shows the override at once.
    expect((await api(admin.token, 'PUT', `/mcp_services/${counted}/tools/pids`, { alias: 'process-ids' })).status).toBe(200);
    const renamed = await refetchedOnce();
    expect(renamed).toContain('counted__process-ids');
    expect(renamed).not.toContain('counted__pids');

    // So does a membership change.
    const id = (await api(admin.token, 'GET', '/groups')).body.data[0].id as number;
    expect(
      (await api(admin.token, 'PUT', `/groups/${id}`, { name: 'team', members: [{ service_id: counted }, { service_id: everything }] }))
        .status,
    ).toBe(200);
    await refetchedOnce();

    // And an access change.
    expect(
      (await api(admin.token, 'PUT', `/mcp_services/${counted}`, { access: { restricted: true, user_ids: [alice.id, bob.id] } })).status,
    ).toBe(200);
    await refetchedOnce();
    await api(admin.token, 'PUT', `/mcp_services/${counted}`, { access: { restricted: false, user_ids: [] } });
    await api(admin.token, 'PUT', `/mcp_services/${counted}/tools/pids`, { alias: null });
  });

  it('keeps /proxy unaffected by the group cache', async () => {
    const proxied = await connect(gw.url, 'counted', bob.key, { sdk: 'v1', wire: 'http' });
    clients.push(proxied);
    const before = upstreamLists();
    await proxied.listTools();
    await proxied.listTools();
    expect(upstreamLists()).toBe(before + 2);
  });
});
