import { Role } from '@toolport/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, connectUrl, type McpClient } from './clients.js';
import { addService, addUser, addUserWithToken, apiCall, type LiveGateway, startGateway } from './gateway-harness.js';

describe('experiment', () => {
  let gw: LiveGateway;
  let id: number;
  beforeAll(async () => {
    gw = await startGateway('sqlite');
    id = await addService(gw.ctx, { name: 'everything' });
  });
  afterAll(async () => { await gw?.close(); });
  it('counts', async () => {
    const alice = await addUser(gw.ctx, 'alice');
    const admin = await addUserWithToken(gw.ctx, 'adm', Role.Admin);
    const created = await apiCall(gw.url, admin.token, 'POST', '/groups', { name: 'team', members: [{ service_id: id }] });
    expect(created.status).toBe(201);
    const clients: [string, McpClient][] = [];
    clients.push(['proxy-http-v1', await connect(gw.url, 'everything', alice.key, { sdk: 'v1', wire: 'http' })]);
    clients.push(['proxy-sse-v1', await connect(gw.url, 'everything', alice.key, { sdk: 'v1', wire: 'sse' })]);
    clients.push(['proxy-http-v2', await connect(gw.url, 'everything', alice.key, { sdk: 'v2', wire: 'http' })]);
    clients.push(['group-http-v1', await connectUrl(new URL(`${gw.url}/group/team/mcp`), alice.key, { sdk: 'v1', wire: 'http' })]);
    clients.push(['group-sse-v1', await connectUrl(new URL(`${gw.url}/group/team/sse`), alice.key, { sdk: 'v1', wire: 'sse' })]);
    for (const [, c] of clients) await c.listTools();
    await new Promise((r) => setTimeout(r, 1500));
    for (const [, c] of clients) c.notifications.length = 0;
    const link = gw.ctx.gateway.pool.links(id)[0] as unknown as { channel: { pid: number } };
    const mode = process.env.MODE ?? 'kill';
    if (mode === 'kill') process.kill(-link.channel.pid, 'SIGKILL');
    else await gw.ctx.gateway.reconnect(id);
    await new Promise((r) => setTimeout(r, 6000));
    for (const [name, c] of clients) console.log(mode, name, JSON.stringify(c.notifications.map((n) => n.method)));
    for (const [, c] of clients) await c.close();
  }, 60000);
});
