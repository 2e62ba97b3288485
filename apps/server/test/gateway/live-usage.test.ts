import { Role, UserStatus } from '@toolport/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signAccessToken } from '../../src/modules/auth/tokens.js';
import { issueApiKey } from '../../src/modules/users/api-keys.js';
import { FIXTURE_SERVER } from '../fixtures/upstream-kit.js';
import { engines } from '../harness.js';
import { connect, type McpClient } from './clients.js';
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
    const key = issueApiKey(gw.ctx.secrets);
    const now = Date.now();
    const row = await gw.ctx.usersRepo.insert({
      username: 'usage_user',
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
    user = { id: row.id, key: key.plain, token };
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await gw?.close();
  });

  const get = async <T>(route: string): Promise<T> => {
    const res = await fetch(`${gw.url}/api${route}`, { headers: { authorization: `Bearer ${user.token}` } });
    const json = (await res.json()) as { data: T };
    expect(res.status, route).toBe(200);
    return json.data;
  };

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
});
