import { type ChildProcess, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type ElicitRequest, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { Role, UserStatus } from '@toolport/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppParts } from '../../src/app.js';
import type { SessionPeer, UpstreamLink } from '../../src/gateway/link-api.js';
import { createUpstreamPool, type LinkPool } from '../../src/gateway/upstream/index.js';
import { type GrantedToken, type UpstreamAuthorization, UpstreamConnectionMissing } from '../../src/gateway/upstream-auth.js';
import { ConfigEvents } from '../../src/infra/events.js';
import { hashPassword } from '../../src/infra/passwords.js';
import { createUpstreamAuthorizationModule, type TokenKeeper } from '../../src/modules/upstream-authorization/index.js';
import { issueApiKey } from '../../src/modules/users/api-keys.js';
import { type OAuthMcpServer, startOAuthMcpServer } from '../fixtures/oauth-mcp-server.js';
import { engines } from '../harness.js';
import { connect, type McpClient, textOf, until } from './clients.js';
import { addService, type LiveGateway, startGateway } from './gateway-harness.js';

const require = createRequire(import.meta.url);

interface Person {
  id: number;
  key: string;
  token: string;
}

/** A user with a password (for the console API) and an API key (for the proxy). */
async function person(gw: LiveGateway, name: string, role: number = Role.User): Promise<Person> {
  const key = issueApiKey(gw.ctx.secrets);
  const now = Date.now();
  const row = await gw.ctx.usersRepo.insert({
    username: name,
    display_name: name,
    email: '',
    password_hash: await hashPassword('password-1234'),
    role,
    status: UserStatus.Enabled,
    api_key_hash: key.hash,
    api_key_enc: key.encrypted,
    created_at: now,
    updated_at: now,
  });
  return { id: row.id, key: key.plain, token: await login(gw, name, 'password-1234') };
}

async function login(gw: LiveGateway, username: string, password: string): Promise<string> {
  const res = await fetch(`${gw.url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username, password }),
  });
  return ((await res.json()) as { data: { access_token: string } }).data.access_token;
}

// biome-ignore lint/suspicious/noExplicitAny: answers of many endpoints, read field by field in the assertions
type Answer = { success: boolean; message?: string; data?: any };

async function api(gw: LiveGateway, token: string, method: string, url: string, body?: unknown, locale = 'en') {
  const res = await fetch(`${gw.url}/api${url}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'accept-language': locale, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, text, json: JSON.parse(text) as Answer };
}

/**
 * Follows redirects by hand as a browser would, adding `headers` on the provider's pages (who
 * consents), and stops at the console page: its URL is the result.
 */
async function follow(start: string, headers: Record<string, string> = {}): Promise<URL> {
  let url = new URL(start);
  for (let hop = 0; hop < 10; hop++) {
    if (url.pathname === '/oauth/upstream') return url;
    const res = await fetch(url, { redirect: 'manual', headers });
    const location = res.headers.get('location');
    await res.body?.cancel();
    if (!location) throw new Error(`no redirect from ${url} (${res.status})`);
    url = new URL(location, url);
  }
  throw new Error('too many redirects');
}

const connectAs = async (gw: LiveGateway, who: Person, serviceId: number, headers: Record<string, string> = {}) => {
  const started = await api(gw, who.token, 'POST', `/mcp_services/${serviceId}/oauth/connect`);
  expect(started.status, started.text).toBe(200);
  return follow(started.json.data.authorize_url, headers);
};

const statusOf = async (gw: LiveGateway, who: Person, serviceId: number) => {
  const list = await api(gw, who.token, 'GET', '/mcp_market/installed');
  return list.json.data.find((s: { id: number }) => s.id === serviceId)?.oauth_status as string;
};

const whoami = async (c: McpClient) => textOf(await c.callTool('whoami', {}));

describe.each(engines)('remote services that require OAuth (%s)', (engine) => {
  let gw: LiveGateway;
  let upstream: OAuthMcpServer;
  let admin: Person;
  let alice: Person;
  let bob: Person;
  let serviceId: number;
  const open: McpClient[] = [];
  const client = async (who: Person) => {
    const c = await connect(gw.url, 'guarded', who.key, { sdk: 'v1', wire: 'http' });
    open.push(c);
    return c;
  };

  beforeAll(async () => {
    upstream = await startOAuthMcpServer();
    gw = await startGateway(engine);
    admin = await person(gw, 'admin1', Role.Admin);
    alice = await person(gw, 'alice');
    bob = await person(gw, 'bob');
    serviceId = await addService(gw.ctx, { name: 'guarded', type: 'streamableHttp', command: upstream.mcpUrl, args: [] });
  });
  afterAll(async () => {
    await Promise.all(open.map((c) => c.close().catch(() => undefined)));
    await gw?.close();
    await upstream?.close();
  });

  it('marks a service that answers 401 as needing authorization when it is checked, and says so to MCP clients', async () => {
    const check = await api(gw, admin.token, 'POST', `/mcp_services/${serviceId}/health/check`);
    expect(check.status).toBeLessThan(500);
    // The health says so in words of ours (decision 0054), not with the upstream's raw 401 body.
    expect(check.json.data).toMatchObject({
      health_status: 'needs_authorization',
      health_details: 'The service needs authorization: an administrator must connect its account (Connect on its card in Services)',
    });
    await until(async () => (await statusOf(gw, alice, serviceId)) === 'needs_authorization', 'discovery after the 401');
    for (const [locale, words] of [
      ['en', /^The service guarded needs authorization: an administrator must connect it in the console at .*\/services$/],
      ['zh-CN', /^服务 guarded 需要授权：请管理员在控制台 .*\/services 中连接$/],
    ] as const) {
      // Checked again now that discovery has set the service up as shared: the connection is missing.
      const again = await api(gw, admin.token, 'POST', `/mcp_services/${serviceId}/health/check`, undefined, locale);
      expect(again.json.data.health_status).toBe('needs_authorization');
      expect(again.json.data.health_details).toMatch(words);
      const listed = (await api(gw, alice.token, 'GET', '/mcp_market/installed', undefined, locale)).json.data.find(
        (s: { id: number }) => s.id === serviceId,
      );
      expect(listed).toMatchObject({ health_status: 'needs_authorization', health_details: expect.stringMatching(words) });
      expect(listed.health_details).not.toContain('invalid_token');
    }
    const state = await api(gw, admin.token, 'GET', `/mcp_services/${serviceId}/oauth`);
    expect(state.json.data).toMatchObject({ oauth_mode: 'shared', oauth_status: 'needs_authorization', issuer: upstream.url });
    const refused = await connect(gw.url, 'guarded', alice.key, { sdk: 'v1', wire: 'http' }).catch((err: Error) => err);
    expect(String(refused)).toMatch(/needs authorization: an administrator must connect it in the console at .*\/services/);
  });

  it('a client that meets the 401 before any check leaves needs_authorization, not the upstream’s 401 body', async () => {
    const fresh = await addService(gw.ctx, { name: 'guarded-fresh', type: 'streamableHttp', command: upstream.mcpUrl, args: [] });
    const refused = await connect(gw.url, 'guarded-fresh', alice.key, { sdk: 'v1', wire: 'http' }).catch((err: Error) => err);
    expect(refused).toBeInstanceOf(Error);
    const healthOf = async (locale: string) =>
      (await api(gw, admin.token, 'GET', '/mcp_market/installed', undefined, locale)).json.data.find((s: { id: number }) => s.id === fresh);
    await until(async () => (await healthOf('en'))?.health_status === 'needs_authorization', 'the shared link’s 401 recorded');
    const zh = await healthOf('zh-CN');
    expect(zh.health_details).toBe('该服务需要授权：请管理员连接其账号（在“服务”页面的服务卡片上点击“连接”）');
    expect(JSON.stringify(zh)).not.toContain('invalid_token');
  });

  it('lets only an admin connect the shared account; every user then calls with it', async () => {
    const denied = await api(gw, alice.token, 'POST', `/mcp_services/${serviceId}/oauth/connect`, undefined, 'zh-CN');
    expect(denied.status).toBe(403);
    expect(denied.json.message).toBe('只有管理员可以连接服务的共享账号');

    const before = (await api(gw, admin.token, 'GET', '/mcp_market/installed')).json.data.find((s: { id: number }) => s.id === serviceId);
    expect(before).toMatchObject({ health_status: 'needs_authorization', tool_count: 0 });
    const done = await connectAs(gw, admin, serviceId, { 'x-test-user': 'team-bot' });
    expect(done.searchParams.get('result')).toBe('connected');
    // Checked at once after Connect (decision 0054): the list shows the new health and the real tool count
    // without anyone pressing the health check.
    const after = (await api(gw, bob.token, 'GET', '/mcp_market/installed', undefined, 'zh-CN')).json.data.find(
      (s: { id: number }) => s.id === serviceId,
    );
    expect(after).toMatchObject({ health_status: 'healthy', tool_count: 1 });
    expect(after.health_details).toMatch(/^1 个工具，\d+ 毫秒$/);
    expect(upstream.seen.registrations).toBe(1);
    // The resource indicator names the protected MCP server (RFC 8707).
    expect(upstream.seen.resources.at(-1)).toBe(upstream.mcpUrl);
    expect(await whoami(await client(alice))).toBe('team-bot');
    expect(await whoami(await client(bob))).toBe('team-bot');
    expect(await statusOf(gw, bob, serviceId)).toBe('connected');
  });

  it('refuses a replayed or forged callback and keeps the connection', async () => {
    const started = await api(gw, admin.token, 'POST', `/mcp_services/${serviceId}/oauth/connect`);
    const authorize = await fetch(started.json.data.authorize_url, { redirect: 'manual', headers: { 'x-test-user': 'intruder' } });
    const callback = authorize.headers.get('location') as string;
    expect((await follow(callback)).searchParams.get('result')).toBe('connected');
    expect((await follow(callback)).searchParams.get('result')).toBe('invalid_state');
    const forged = new URL(callback);
    forged.searchParams.set('state', 'made-up');
    expect((await follow(forged.toString())).searchParams.get('result')).toBe('invalid_state');
    expect(await whoami(await client(alice))).toBe('intruder');
    // Put the team account back for the tests that follow.
    expect((await connectAs(gw, admin, serviceId, { 'x-test-user': 'team-bot' })).searchParams.get('result')).toBe('connected');
  });

  it('refreshes on a 401 and goes on with the call', async () => {
    const c = await client(alice);
    const before = upstream.seen.refreshGrants;
    upstream.expireAccessTokens();
    expect(await whoami(c)).toBe('team-bot');
    expect(upstream.seen.refreshGrants).toBe(before + 1);
  });

  it('one refresh wins when two replicas renew the same rejected token at once', async () => {
    const c = await client(alice);
    await whoami(c);
    const row = await gw.ctx.db.selectFrom('upstream_oauth_tokens').selectAll().where('owner_id', '=', 0).executeTakeFirstOrThrow();
    const rejected = gw.ctx.secrets.decrypt(row.access_token_enc);
    const [one, two] = [otherReplica(gw.ctx), otherReplica(gw.ctx)];
    const before = upstream.seen.refreshGrants;
    const [a, b] = await Promise.all([one.keeper.renew(serviceId, 0, rejected), two.keeper.renew(serviceId, 0, rejected)]);
    expect(a).toBe(b);
    expect(a).not.toBe(rejected);
    // Refresh tokens rotate at this provider: a second refresh would have failed with invalid_grant.
    expect(upstream.seen.refreshGrants).toBe(before + 1);
    await Promise.all([one.close(), two.close()]);
    expect(await whoami(c)).toBe('team-bot');
  });

  it('takes over a refresh whose replica died holding the claim', async () => {
    const row = await gw.ctx.db.selectFrom('upstream_oauth_tokens').selectAll().where('owner_id', '=', 0).executeTakeFirstOrThrow();
    const rejected = gw.ctx.secrets.decrypt(row.access_token_enc);
    // Another replica claimed the refresh and never finished: its claim runs out shortly.
    await gw.ctx.db
      .updateTable('upstream_oauth_tokens')
      .set({ refreshing_until: Date.now() + 300 })
      .where('owner_id', '=', 0)
      .where('service_id', '=', serviceId)
      .execute();
    const replica = otherReplica(gw.ctx);
    const before = upstream.seen.refreshGrants;
    const fresh = await replica.keeper.renew(serviceId, 0, rejected);
    await replica.close();
    expect(fresh).not.toBe(rejected);
    expect(upstream.seen.refreshGrants).toBe(before + 1);
  });

  it('per user: each user connects their own account and acts as themselves upstream', async () => {
    const set = await api(gw, admin.token, 'PUT', `/mcp_services/${serviceId}`, { oauth_mode: 'per_user' });
    expect(set.status, set.text).toBe(200);
    expect(await statusOf(gw, alice, serviceId)).toBe('needs_authorization');
    // Not connected yet: the session opens, lists nothing, and a call says where to connect.
    const early = await client(bob);
    expect(await early.listTools()).toMatchObject({ tools: [] });
    const refused = await early.callTool('whoami', {}).catch((err: Error) => err);
    expect(String(refused)).toMatch(/You have not connected your account for guarded yet: connect it in the console at .*\/services/);
    // A client that declared URL elicitation is first asked to open that page (MCP 2025-11-25), which
    // needs the gateway's public address to be absolute.
    await api(gw, admin.token, 'PUT', '/option/', { key: 'ServerAddress', value: gw.url });
    const asked: ElicitRequest['params'][] = [];
    const capable = new Client({ name: 'url-elicitation', version: '1' }, { capabilities: { elicitation: { url: {} } } });
    capable.setRequestHandler(ElicitRequestSchema, async (req) => {
      asked.push(req.params);
      return { action: 'accept' };
    });
    await capable.connect(
      new StreamableHTTPClientTransport(new URL(`${gw.url}/proxy/guarded/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${bob.key}` } },
      }),
    );
    const refusedAfterAsking = await capable.callTool({ name: 'whoami', arguments: {} }).catch((err: Error) => err);
    await capable.close();
    await api(gw, admin.token, 'PUT', '/option/', { key: 'ServerAddress', value: '' });
    expect(String(refusedAfterAsking)).toMatch(/You have not connected your account for guarded yet/);
    expect(asked).toEqual([
      expect.objectContaining({
        mode: 'url',
        url: `${gw.url}/services`,
        message: expect.stringContaining('connect it in the console'),
      }),
    ]);

    expect((await connectAs(gw, alice, serviceId, { 'x-test-user': 'alice-upstream' })).searchParams.get('result')).toBe('connected');
    expect((await connectAs(gw, bob, serviceId, { 'x-test-user': 'bob-upstream' })).searchParams.get('result')).toBe('connected');
    const [a, b] = [await client(alice), await client(bob)];
    expect(await whoami(a)).toBe('alice-upstream');
    expect(await whoami(b)).toBe('bob-upstream');
    // The session opened before bob connected heard that its tools changed, and now reaches his own link.
    await until(() => early.notifications.some((n) => n.method === 'notifications/tools/list_changed'), 'list_changed after connecting');
    expect((await early.listTools()).tools.map((t) => t.name)).toContain('whoami');
    expect(await whoami(early)).toBe('bob-upstream');
    expect(await statusOf(gw, alice, serviceId)).toBe('connected');
    expect(await statusOf(gw, admin, serviceId)).toBe('needs_authorization');
  });

  it("per user: the health check (which has no user) counts the upstream's 401 as up, not unhealthy", async () => {
    const check = await api(gw, admin.token, 'POST', `/mcp_services/${serviceId}/health/check`);
    expect(check.status, check.text).toBe(200);
    expect(check.json.data).toMatchObject({ health_status: 'healthy', health_details: expect.stringContaining('each user connects') });
    // A per-user service that is really down is still unhealthy.
    const gone = await addService(gw.ctx, { name: 'gone', type: 'streamableHttp', command: 'http://127.0.0.1:9/mcp', args: [] });
    const set = await api(gw, admin.token, 'PUT', `/mcp_services/${gone}`, { oauth_mode: 'per_user' });
    expect(set.status, set.text).toBe(200);
    const down = await api(gw, admin.token, 'POST', `/mcp_services/${gone}/health/check`);
    expect(down.json.data).toMatchObject({ health_status: 'unhealthy' });
  });

  it("per user: each user's card shows their own connection's health and tool count, checked at Connect (issue 29)", async () => {
    const rowOf = async (who: Person) => {
      const list = await api(gw, who.token, 'GET', '/mcp_market/installed');
      expect(list.status, list.text).toBe(200);
      return list.json.data.find((s: { id: number }) => s.id === serviceId);
    };
    // Dana's upstream account has three tools; she connects, and the provider's return checked her connection.
    upstream.extraTools.set('dana-upstream', ['list_repos', 'create_issue']);
    const dana = await person(gw, 'dana');
    expect((await connectAs(gw, dana, serviceId, { 'x-test-user': 'dana-upstream' })).searchParams.get('result')).toBe('connected');
    expect(await rowOf(dana)).toMatchObject({
      oauth_status: 'connected',
      health_status: 'healthy',
      tool_count: 3,
      health_details: expect.stringMatching(/^3 tools, \d+ ms$/),
    });
    // Each user sees their own: alice (connected before checks were kept) until she checks, then her one tool; the
    // admin, who has no connection, the service's own check, which lists nobody's tools.
    const before = await rowOf(alice);
    expect(before.tool_count).not.toBe(3);
    const checked = await api(gw, alice.token, 'POST', `/mcp_services/${serviceId}/health/check`);
    expect(checked.json.data).toMatchObject({ health_status: 'healthy', tool_count: 1 });
    expect(await rowOf(alice)).toMatchObject({
      health_status: 'healthy',
      tool_count: 1,
      health_details: expect.stringMatching(/^1 tools, /),
    });
    expect(await rowOf(dana)).toMatchObject({ tool_count: 3 });
    expect(await rowOf(admin)).toMatchObject({
      oauth_status: 'needs_authorization',
      health_details: expect.stringContaining('each user connects'),
    });
    expect((await rowOf(admin)).tool_count).not.toBe(3);

    // The count is live: the upstream gives dana one tool more, and her next check says so; alice's is untouched.
    upstream.extraTools.set('dana-upstream', ['list_repos', 'create_issue', 'merge_pull']);
    const again = await api(gw, dana.token, 'POST', `/mcp_services/${serviceId}/health/check`, undefined, 'zh-CN');
    expect(again.json.data).toMatchObject({ health_status: 'healthy', tool_count: 4 });
    expect(await rowOf(dana)).toMatchObject({ tool_count: 4 });
    expect(await rowOf(alice)).toMatchObject({ tool_count: 1 });
    // Checks at the same moment by two users and by the admin share nothing: each answer is the asker's own.
    const [mine, hers, shared] = await Promise.all(
      [alice, dana, admin].map((who) => api(gw, who.token, 'POST', `/mcp_services/${serviceId}/health/check`)),
    );
    expect([mine?.json.data.tool_count, hers?.json.data.tool_count]).toEqual([1, 4]);
    expect(shared?.json.data.health_details).toContain('each user connects');
    // The Tools dialog and the card agree for her.
    const tools = await api(gw, dana.token, 'GET', `/mcp_services/${serviceId}/tools`);
    expect(tools.json.data.total).toBe(4);

    // The service found down later (here: disabled, and checked) is shown to her as it is, over her older check.
    expect((await api(gw, admin.token, 'POST', `/mcp_services/${serviceId}/toggle`)).status).toBe(200);
    expect((await api(gw, admin.token, 'POST', `/mcp_services/${serviceId}/health/check`)).json.data.health_status).toBe('stopped');
    expect(await rowOf(dana)).toMatchObject({ health_status: 'stopped', tool_count: 4 });
    expect((await api(gw, admin.token, 'POST', `/mcp_services/${serviceId}/toggle`)).status).toBe(200);
    expect((await api(gw, admin.token, 'POST', `/mcp_services/${serviceId}/health/check`)).json.data.health_status).toBe('healthy');
    const back = await api(gw, dana.token, 'POST', `/mcp_services/${serviceId}/health/check`);
    expect(back.json.data).toMatchObject({ health_status: 'healthy', tool_count: 4 });
    expect(await rowOf(dana)).toMatchObject({ health_status: 'healthy', tool_count: 4 });

    // Disconnected, her card asks her to connect again and shows none of her old connection's check.
    const gone = await api(gw, dana.token, 'POST', `/mcp_services/${serviceId}/oauth/disconnect`);
    expect(gone.status, gone.text).toBe(200);
    const after = await rowOf(dana);
    expect(after).toMatchObject({ oauth_status: 'needs_authorization', health_details: expect.stringContaining('each user connects') });
    expect(after.tool_count).not.toBe(4);
    // Her health check now checks the service (she has no connection to go through), and records nothing for her.
    const plain = await api(gw, dana.token, 'POST', `/mcp_services/${serviceId}/health/check`);
    expect(plain.json.data.health_details).toContain('each user connects');
  });

  it('a denied consent leaves the user unconnected with a clear result', async () => {
    const done = await connectAs(gw, admin, serviceId, { 'x-test-consent': 'deny' });
    expect(done.searchParams.get('result')).toBe('denied');
    expect(done.searchParams.get('reason')).toBe('The user said no');
    expect(await statusOf(gw, admin, serviceId)).toBe('needs_authorization');
    expect(await statusOf(gw, alice, serviceId)).toBe('connected');
  });

  it('never shows a token, and stores them encrypted', async () => {
    const answers = [
      (await api(gw, admin.token, 'GET', '/mcp_market/installed')).text,
      (await api(gw, admin.token, 'GET', `/mcp_services/${serviceId}/oauth`)).text,
      (await api(gw, alice.token, 'GET', `/mcp_services/${serviceId}/oauth`)).text,
    ].join('\n');
    const rows = await gw.ctx.db.selectFrom('upstream_oauth_tokens').selectAll().execute();
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      const plain = gw.ctx.secrets.decrypt(row.access_token_enc);
      expect(answers).not.toContain(plain);
      expect(JSON.stringify(row)).not.toContain(plain);
      expect(row.access_token_enc.startsWith('v1.')).toBe(true);
    }
  });

  it('a refresh token revoked upstream: that user needs authorization again, nobody else is affected', async () => {
    const b = await client(bob);
    expect(await whoami(b)).toBe('bob-upstream');
    // Bob's grant ends at the provider (alice's stays): his access token and his refresh token are refused.
    const bobRow = await gw.ctx.db.selectFrom('upstream_oauth_tokens').selectAll().where('owner_id', '=', bob.id).executeTakeFirstOrThrow();
    await fetch(`${upstream.url}/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: gw.ctx.secrets.decrypt(bobRow.refresh_token_enc as string) }).toString(),
    });
    await fetch(`${upstream.url}/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: gw.ctx.secrets.decrypt(bobRow.access_token_enc) }).toString(),
    });
    const failed = await b.callTool('whoami', {}).catch((err: Error) => err);
    expect(String(failed)).toMatch(/You have not connected your account for guarded yet/);
    expect(await statusOf(gw, bob, serviceId)).toBe('needs_authorization');
    expect(await whoami(await client(alice))).toBe('alice-upstream');
  });

  it('disconnecting revokes upstream and forgets the connection', async () => {
    const before = upstream.seen.revoked.length;
    const res = await api(gw, alice.token, 'POST', `/mcp_services/${serviceId}/oauth/disconnect`, undefined, 'zh-CN');
    expect(res.status).toBe(200);
    expect(res.json.message).toBe('已断开连接');
    expect(res.json.data.oauth_status).toBe('needs_authorization');
    expect(upstream.seen.revoked.slice(before)).toEqual(['refresh_token', 'access_token']);
    const failed = await whoami(await client(alice)).catch((err: Error) => err);
    expect(String(failed)).toMatch(/You have not connected your account/);
  });

  it('forgets the connection of a user who is deleted', async () => {
    const carol = await person(gw, 'carol');
    expect((await connectAs(gw, carol, serviceId, { 'x-test-user': 'carol-upstream' })).searchParams.get('result')).toBe('connected');
    const mine = () => gw.ctx.db.selectFrom('upstream_oauth_tokens').select('owner_id').where('owner_id', '=', carol.id).execute();
    expect(await mine()).toHaveLength(1);
    const removed = await api(gw, admin.token, 'DELETE', `/user/${carol.id}`);
    expect(removed.status, removed.text).toBe(200);
    expect(await mine()).toHaveLength(0);
  });

  it('serves a Client ID Metadata Document and uses it when ServerAddress is https and the provider supports it', async () => {
    const cimd = await startOAuthMcpServer({ cimd: true });
    try {
      const id = await addService(gw.ctx, { name: 'cimd', type: 'streamableHttp', command: cimd.mcpUrl, args: [] });
      const set = await api(gw, admin.token, 'PUT', '/option/', { key: 'ServerAddress', value: 'https://toolport.example' });
      expect(set.status, set.text).toBe(200);
      const started = await api(gw, admin.token, 'POST', `/mcp_services/${id}/oauth/connect`);
      const url = new URL(started.json.data.authorize_url);
      expect(url.searchParams.get('client_id')).toBe('https://toolport.example/api/upstream_oauth/client_metadata.json');
      expect(url.searchParams.get('redirect_uri')).toBe('https://toolport.example/api/upstream_oauth/callback');
      expect(url.searchParams.get('code_challenge_method')).toBe('S256');
      expect(cimd.seen.registrations).toBe(0);
      const doc = await (await fetch(`${gw.url}/api/upstream_oauth/client_metadata.json`)).json();
      expect(doc).toMatchObject({
        client_id: 'https://toolport.example/api/upstream_oauth/client_metadata.json',
        redirect_uris: ['https://toolport.example/api/upstream_oauth/callback'],
      });
    } finally {
      await api(gw, admin.token, 'PUT', '/option/', { key: 'ServerAddress', value: '' });
      await cimd.close();
    }
  });

  it('refreshes tokens that end soon in the background, before any call needs it', async () => {
    const short = await startOAuthMcpServer({ accessTtl: 120 });
    try {
      const id = await addService(gw.ctx, { name: 'short', type: 'streamableHttp', command: short.mcpUrl, args: [] });
      expect((await connectAs(gw, admin, id)).searchParams.get('result')).toBe('connected');
      const module = otherReplica(gw.ctx);
      await module.keeper.refreshExpiring();
      await module.close();
      // This gateway scans too (every minute), and its tick may land in this test: a token of 120 s still ends soon after
      // one refresh, so each scan that ran refreshed it once, and the database's version counts each refresh.
      expect(short.seen.refreshGrants).toBeGreaterThanOrEqual(1);
      const row = await gw.ctx.db.selectFrom('upstream_oauth_tokens').selectAll().where('service_id', '=', id).executeTakeFirstOrThrow();
      expect(row.version).toBe(1 + short.seen.refreshGrants);
    } finally {
      await short.close();
    }
  });
});

/**
 * What the pool asks of the token keeper (docs/decisions/0050-credentials-in-one-step.md): a counting
 * wrapper around the real module of a second replica, counting the port's question and every renewal of a
 * token it granted. A pool of its own asks it; the gateway's pool keeps the main module.
 */
function countingKeeper(keeper: TokenKeeper) {
  const asked = { forLink: 0, renew: 0 };
  const counted = (token: GrantedToken): GrantedToken => ({
    value: token.value,
    freshUntil: token.freshUntil,
    renew: async (rejected) => {
      asked.renew++;
      return counted(await token.renew(rejected));
    },
  });
  const port: UpstreamAuthorization = {
    async forLink(serviceId, userId) {
      // An acquisition asks for its session's user. The pool's own questions (a health probe, the reaction to a
      // connection's change, which may land at any moment on a busy machine) ask for no user and are not counted.
      if (userId !== undefined) asked.forLink++;
      const grant = await keeper.forLink(serviceId, userId);
      return 'token' in grant ? { ...grant, token: counted(grant.token) } : grant;
    },
  };
  return { port, asked };
}

const peer = (id: string, userId: number): SessionPeer => ({ id, userId, protocolVersion: '2025-06-18', notify: () => undefined });

/** One tool call through a link as the dispatcher makes it; the answer's text, or its error message. */
function callThrough(link: UpstreamLink, session: SessionPeer, id: number): Promise<string> {
  return new Promise((resolve) => {
    link.request(
      session,
      { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'whoami', arguments: {} } },
      {
        notification: () => undefined,
        response: (message) => {
          if ('error' in message) resolve(`error: ${message.error.message}`);
          else resolve(String((message.result.content as { text?: string }[] | undefined)?.[0]?.text));
        },
      },
    );
  });
}

describe.each(engines)('credentials reach a link in one step (%s)', (engine) => {
  let gw: LiveGateway;
  let upstream: OAuthMcpServer;
  let admin: Person;
  let alice: Person;
  let bob: Person;
  let serviceId: number;
  let replica: ReturnType<typeof otherReplica>;
  let pool: LinkPool;
  let asked: { forLink: number; renew: number };
  const initialize = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'count', version: '1' } };

  beforeAll(async () => {
    upstream = await startOAuthMcpServer();
    gw = await startGateway(engine);
    admin = await person(gw, 'admin1', Role.Admin);
    alice = await person(gw, 'alice');
    bob = await person(gw, 'bob');
    serviceId = await addService(gw.ctx, { name: 'guarded', type: 'streamableHttp', command: upstream.mcpUrl, args: [] });
    // Hears the configuration events the pool hears, as a replica does through the relay.
    replica = createUpstreamAuthorizationModule({ ...replicaDeps(gw.ctx), events: gw.ctx.events });
    const counting = countingKeeper(replica.keeper);
    asked = counting.asked;
    // Connected before this pool exists: the change a connection announces makes every pool that hears it ask
    // again for each of its links, and on a busy machine that reaction could land on the link the test makes.
    expect((await connectAs(gw, admin, serviceId, { 'x-test-user': 'team-bot' })).searchParams.get('result')).toBe('connected');
    const { catalog, serviceLog, options, events, logger, config } = gw.ctx;
    pool = createUpstreamPool({
      catalog,
      serviceLog,
      options,
      events,
      logger,
      config,
      remoteFetch: gw.ctx.remote.fetch,
      authorization: counting.port,
    });
  });
  afterAll(async () => {
    await pool?.shutdown();
    await replica?.close();
    await gw?.close();
    await upstream?.close();
  });

  it('one acquisition asks the port once; calls on the link ask nothing; a 401 asks once more', async () => {
    const spec = await gw.ctx.catalog.byId(serviceId);
    if (!spec) throw new Error('no service');
    const session = peer('one', alice.id);
    const link = await pool.acquire(spec, session);
    expect(asked).toEqual({ forLink: 1, renew: 0 });
    await link.initialize(session, initialize);
    for (let id = 1; id <= 5; id++) expect(await callThrough(link, session, id)).toBe('team-bot');
    // The link's start and five calls sent the token it was given: the keeper was not asked again.
    expect(asked).toEqual({ forLink: 1, renew: 0 });
    // The same session finds its link again without a question; another session asks once.
    expect(await pool.acquire(spec, session)).toBe(link);
    const other = peer('two', bob.id);
    expect(await pool.acquire(spec, other)).toBe(link);
    expect(asked).toEqual({ forLink: 2, renew: 0 });
    // The upstream refuses the token: one renewal, and the call goes on.
    const refreshes = upstream.seen.refreshGrants;
    upstream.expireAccessTokens();
    expect(await callThrough(link, session, 6)).toBe('team-bot');
    expect(asked).toEqual({ forLink: 2, renew: 1 });
    expect(upstream.seen.refreshGrants).toBe(refreshes + 1);
  });

  it('a user without a connection gets the reason, localised, and no link starts', async () => {
    const set = await api(gw, admin.token, 'PUT', `/mcp_services/${serviceId}`, { oauth_mode: 'per_user' });
    expect(set.status, set.text).toBe(200);
    await until(async () => pool.links(serviceId).length === 0, 'the shared link replaced');
    const spec = await gw.ctx.catalog.byId(serviceId);
    if (!spec) throw new Error('no service');
    const before = asked.forLink;
    const refused = await pool.acquire(spec, peer('bob-1', bob.id)).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(UpstreamConnectionMissing);
    const missing = refused as UpstreamConnectionMissing;
    expect(missing.perUser).toBe(true);
    expect(missing.localised('en')).toMatch(
      /^You have not connected your account for guarded yet: connect it in the console at .*\/services$/,
    );
    expect(missing.localised('zh-CN')).toMatch(/^你尚未为 guarded 连接自己的账号：请在控制台 .*\/services 中连接$/);
    expect(asked.forLink).toBe(before + 1);
    expect(pool.links(serviceId)).toEqual([]);
    expect(pool.modernLinks(serviceId)).toEqual([]);
  });

  it('an ended token that cannot be refreshed is the same refusal, and the connection is forgotten', async () => {
    expect((await connectAs(gw, alice, serviceId, { 'x-test-user': 'alice-upstream' })).searchParams.get('result')).toBe('connected');
    const mine = () =>
      gw.ctx.db
        .selectFrom('upstream_oauth_tokens')
        .selectAll()
        .where('service_id', '=', serviceId)
        .where('owner_id', '=', alice.id)
        .execute();
    expect(await mine()).toHaveLength(1);
    const spec = await gw.ctx.catalog.byId(serviceId);
    if (!spec) throw new Error('no service');
    // Its end has passed and there is nothing to refresh it with.
    await gw.ctx.db
      .updateTable('upstream_oauth_tokens')
      .set({ expires_at: Date.now() - 1_000, refresh_token_enc: null })
      .where('service_id', '=', serviceId)
      .where('owner_id', '=', alice.id)
      .execute();
    const refused = await pool.acquire(spec, peer('alice-1', alice.id)).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(UpstreamConnectionMissing);
    expect((refused as UpstreamConnectionMissing).localised('zh-CN')).toContain('你尚未为 guarded 连接自己的账号');
    expect(pool.links(serviceId)).toEqual([]);
    expect(await mine()).toEqual([]);
    expect(await statusOf(gw, alice, serviceId)).toBe('needs_authorization');
  });
});

/** A second replica's module on the same database (its own caches and refreshes). */
const replicaDeps = (ctx: AppParts) => ({
  db: ctx.db,
  secrets: ctx.secrets,
  events: new ConfigEvents(),
  options: ctx.options,
  catalog: ctx.catalog,
  logger: ctx.logger,
  fetch: ctx.remote.fetch,
  refreshScanMs: 3_600_000,
});
const otherReplica = (ctx: AppParts) => createUpstreamAuthorizationModule(replicaDeps(ctx));

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });

/** The official SDK's example: a streamable HTTP server plus a demo authorization server with dynamic registration. */
describe('the SDK example server with --oauth', () => {
  let gw: LiveGateway;
  let example: ChildProcess;
  let admin: Person;
  let mcpPort: number;

  beforeAll(async () => {
    mcpPort = await freePort();
    const authPort = await freePort();
    // The package's exports resolve to dist/cjs; the example is an ES module beside it.
    const entry = path.join(
      path.dirname(require.resolve('@modelcontextprotocol/sdk/server/mcp.js')),
      '../../esm/examples/server/simpleStreamableHttp.js',
    );
    example = spawn(process.execPath, [entry, '--oauth'], {
      env: { ...process.env, MCP_PORT: String(mcpPort), MCP_AUTH_PORT: String(authPort) },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    example.stdout?.on('data', (d) => {
      out += String(d);
    });
    example.stderr?.on('data', (d) => {
      out += String(d);
    });
    await until(
      () => out.includes('MCP Streamable HTTP Server listening') && out.includes('Authorization Server listening'),
      'the example',
    ).catch((err: Error) => {
      throw new Error(`${err.message}: ${out}`);
    });
    gw = await startGateway('sqlite');
    admin = await person(gw, 'admin2', Role.Admin);
  });
  afterAll(async () => {
    await gw?.close();
    if (example?.pid) process.kill(-example.pid, 'SIGKILL');
  });

  it('is connected by an admin (dynamic registration, PKCE) and its tools are called through the proxy', async () => {
    const id = await addService(gw.ctx, { name: 'example', type: 'streamableHttp', command: `http://localhost:${mcpPort}/mcp`, args: [] });
    const done = await connectAs(gw, admin, id);
    expect(done.searchParams.get('result')).toBe('connected');
    const state = await api(gw, admin.token, 'GET', `/mcp_services/${id}/oauth`);
    expect(state.json.data).toMatchObject({ oauth_status: 'connected', registration: 'dynamic' });
    const c = await connect(gw.url, 'example', admin.key, { sdk: 'v2', wire: 'http' });
    try {
      expect(textOf(await c.callTool('greet', { name: 'Toolport' }))).toBe('Hello, Toolport!');
    } finally {
      await c.close();
    }
  });
});
