import { Role, UserStatus } from '@toolport/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signAccessToken } from '../../src/http/access-tokens.js';
import { issueApiKey } from '../../src/modules/users/api-keys.js';
import { FIXTURE_SERVER } from '../fixtures/upstream-kit.js';
import { engines } from '../harness.js';
import { connect, type McpClient, textOf } from './clients.js';
import { addService, type LiveGateway, startGateway } from './gateway-harness.js';

const LIMIT = 5;

/**
 * Issue 14, item 2: what the console shows is what the meter enforces, read at once. A role-1
 * user makes rpd_limit calls through the real gateway, the next is refused, and the installed list,
 * the dashboard overview and the utilization read right after the refusal say so (no flush waited for).
 */
describe.each(engines)('usage shown is usage enforced on %s', (engine) => {
  let gw: LiveGateway;
  let serviceId: number;
  let user: { id: number; key: string; token: string };
  const clients: McpClient[] = [];

  beforeAll(async () => {
    gw = await startGateway(engine);
    serviceId = await addService(gw.ctx, { name: 'metered', args: [FIXTURE_SERVER], rpdLimit: LIMIT });
    user = await newUser('usage_user');
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await gw?.close();
  });

  const newUser = async (username: string) => {
    const key = issueApiKey(gw.ctx.secrets);
    const now = Date.now();
    const row = await gw.ctx.usersRepo.insert({
      username,
      display_name: '',
      email: '',
      password_hash: null,
      role: Role.User,
      status: UserStatus.Enabled,
      api_key_hash: key.hash,
      api_key_enc: key.encrypted,
      created_at: now,
      updated_at: now,
    });
    const token = await signAccessToken(gw.ctx.secrets.jwtKey, { userId: row.id, authVersion: row.auth_version });
    return { id: row.id, key: key.plain, token };
  };
  const api = async <T>(method: string, route: string, token = user.token): Promise<T> => {
    const res = await fetch(`${gw.url}/api${route}`, { method, headers: { authorization: `Bearer ${token}` } });
    const json = (await res.json()) as { data: T; message?: string };
    expect(res.status, `${route}: ${json.message}`).toBe(200);
    return json.data;
  };
  const get = <T>(route: string, token = user.token) => api<T>('GET', route, token);

  it('shows 5 used and 0 remaining right after the refused 6th call', async () => {
    const client = await connect(gw.url, 'metered', user.key, { sdk: 'v1', wire: 'http' });
    clients.push(client);
    for (let i = 0; i < LIMIT; i++) await client.callTool('echo', { text: String(i) });
    await expect(client.callTool('echo', { text: 'sixth' })).rejects.toThrow(`daily request limit exceeded: ${LIMIT}/${LIMIT}`);

    const installed = await get<{ id: number; user_daily_request_count: number; remaining_requests: number }[]>('/mcp_market/installed');
    expect(installed.find((s) => s.id === serviceId)).toMatchObject({ user_daily_request_count: LIMIT, remaining_requests: 0 });
    const overview = await get<{ today_total_requests: number }>('/analytics/system/overview');
    expect(overview.today_total_requests).toBe(LIMIT);
    const utilization = await get<{ service_id: number; today_request_count: number }[]>('/analytics/services/utilization');
    expect(utilization.find((u) => u.service_id === serviceId)?.today_request_count).toBe(LIMIT);
  });

  it('switches a service off for one role-1 user alone: their session ends and calls are refused, others go on', async () => {
    const switched = await addService(gw.ctx, { name: 'switched', args: [FIXTURE_SERVER] });
    const alice = await newUser('switch_alice');
    const bob = await newUser('switch_bob');
    const aliceClient = await connect(gw.url, 'switched', alice.key, { sdk: 'v2', wire: 'http' });
    const bobClient = await connect(gw.url, 'switched', bob.key, { sdk: 'v1', wire: 'http' });
    clients.push(aliceClient, bobClient);
    expect(await aliceClient.callTool('echo', { text: 'before' })).toBeTruthy();

    const off = await api<{ enabled: boolean; scope: string }>('POST', `/mcp_services/${switched}/toggle`, alice.token);
    expect(off).toMatchObject({ enabled: false, scope: 'personal' });
    // Alice's open session is ended and a new one is refused with a clear reason; Bob is unaffected.
    await expect(aliceClient.callTool('echo', { text: 'after' })).rejects.toThrow();
    await expect(connect(gw.url, 'switched', alice.key, { sdk: 'v1', wire: 'http' })).rejects.toThrow(/switched off for you/);
    expect(await bobClient.callTool('echo', { text: 'bob' })).toBeTruthy();
    const listed = (token: string) =>
      get<{ id: number; enabled: boolean }[]>('/mcp_market/installed', token).then((l) => l.find((s) => s.id === switched)?.enabled);
    expect(await listed(alice.token)).toBe(false);
    expect(await listed(bob.token)).toBe(true);

    // Switched on again: Alice connects and calls as before.
    expect(await api('POST', `/mcp_services/${switched}/toggle`, alice.token)).toMatchObject({ enabled: true, scope: 'personal' });
    const again = await connect(gw.url, 'switched', alice.key, { sdk: 'v1', wire: 'http' });
    clients.push(again);
    expect(await again.callTool('echo', { text: 'again' })).toBeTruthy();
    expect(await listed(alice.token)).toBe(true);
  });

  it('sets isolation through PUT /api/mcp_services/{id}: each client session then gets a process of its own', async () => {
    const id = await addService(gw.ctx, { name: 'isolatable', args: [FIXTURE_SERVER] });
    const admin = await newUser('isolation_admin');
    await gw.ctx.usersRepo.update(admin.id, { role: Role.Admin, updated_at: Date.now() });
    const put = async (body: unknown) => {
      const res = await fetch(`${gw.url}/api/mcp_services/${id}`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${admin.token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: res.status, json: (await res.json()) as { message?: string } };
    };
    const pidOf = async (c: McpClient) => (JSON.parse(textOf(await c.callTool('pids', {}))) as { pid: number }).pid;
    const twoClients = async () => {
      const pair = await Promise.all([
        connect(gw.url, 'isolatable', user.key, { sdk: 'v1', wire: 'http' }),
        connect(gw.url, 'isolatable', user.key, { sdk: 'v2', wire: 'http' }),
      ]);
      clients.push(...pair);
      return Promise.all(pair.map(pidOf));
    };
    const [a, b] = await twoClients();
    expect(a).toBe(b);

    expect((await put({ isolation: 'per-user' })).status).toBe(400);
    expect((await put({ isolation: 'session' })).status).toBe(200);
    const listed = await get<{ id: number; isolation: string }[]>('/mcp_market/installed');
    expect(listed.find((s) => s.id === id)?.isolation).toBe('session');
    const [c, d] = await twoClients();
    expect(c).not.toBe(d);
  });
});
