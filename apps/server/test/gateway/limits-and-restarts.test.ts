import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { engines } from '../harness.js';
import { connect, type McpClient, textOf } from './clients.js';
import { addService, addUser, type LiveGateway, startGateway } from './gateway-harness.js';
import { openSession, post } from './raw-http.js';

const LIMIT = 5;
const limitText = `daily request limit exceeded: ${LIMIT}/${LIMIT}`;
const errorText = (r: PromiseSettledResult<unknown>) => (r.status === 'rejected' ? String((r.reason as Error).message) : '');

/** rpd_limit enforced exactly under concurrency and durable across restarts; sessions survive restarts too. */
describe.each(engines)('daily limits and gateway restarts on %s', (engine) => {
  let gw: LiveGateway;
  let alice: { id: number; key: string };
  let bob: { id: number; key: string };
  let limitedId: number;
  const open: McpClient[] = [];
  const client = async (...args: Parameters<typeof connect>) => {
    const c = await connect(...args);
    open.push(c);
    return c;
  };

  beforeAll(async () => {
    gw = await startGateway(engine);
    alice = await addUser(gw.ctx, 'alice');
    bob = await addUser(gw.ctx, 'bob');
    limitedId = await addService(gw.ctx, { name: 'limited', rpdLimit: LIMIT });
    await addService(gw.ctx, { name: 'everything' });
  });
  afterAll(async () => {
    await Promise.all(open.map((c) => c.close().catch(() => undefined)));
    await gw?.close();
  });

  it('lets exactly rpd_limit counted calls through under concurrency; the rest get the limit message', async () => {
    const sessions = await Promise.all([
      client(gw.url, 'limited', alice.key, { sdk: 'v1', wire: 'http' }),
      client(gw.url, 'limited', alice.key, { sdk: 'v2', wire: 'http' }),
      client(gw.url, 'limited', alice.key, { sdk: 'v1', wire: 'sse' }),
    ]);
    const results = await Promise.allSettled(
      Array.from({ length: 12 }, (_, i) => (sessions[i % sessions.length] as McpClient).callTool('echo', { message: `call ${i}` })),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(LIMIT);
    const refused = results.filter((r) => r.status === 'rejected');
    expect(refused).toHaveLength(12 - LIMIT);
    for (const r of refused) expect(errorText(r)).toContain(limitText);
    // Listing is free, and another user has a budget of their own.
    expect((await (sessions[0] as McpClient).listTools()).tools.length).toBeGreaterThan(0);
    const other = await client(gw.url, 'limited', bob.key, { sdk: 'v2', wire: 'http' });
    expect(textOf(await other.callTool('echo', { message: 'bob' }))).toBe('Echo: bob');
  });

  it('answers 429 with the JSON-RPC error when the POST held only the refused request', async () => {
    const url = `${gw.url}/proxy/limited/mcp`;
    const id = await openSession(url, alice.key);
    const res = await post(
      url,
      alice.key,
      { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'echo', arguments: { message: 'x' } } },
      { 'mcp-session-id': id },
    );
    expect(res.status).toBe(429);
    expect(res.json()).toMatchObject({ jsonrpc: '2.0', id: 9, error: { message: limitText } });
  });

  it('answers 503, not 429, when the meter itself fails: the client did nothing wrong', async () => {
    const url = `${gw.url}/proxy/everything/mcp`;
    const id = await openSession(url, bob.key);
    const admit = vi.spyOn(gw.ctx.meter, 'admit').mockRejectedValueOnce(new Error('database unavailable'));
    try {
      const res = await post(
        url,
        bob.key,
        { jsonrpc: '2.0', id: 10, method: 'tools/call', params: { name: 'echo', arguments: { message: 'x' } } },
        { 'mcp-session-id': id },
      );
      expect(res.status).toBe(503);
      expect(res.json()).toMatchObject({ jsonrpc: '2.0', id: 10, error: { message: 'Internal error: request could not be metered' } });
    } finally {
      admit.mockRestore();
    }
  });

  it('keeps the day’s counts across a restart on the same database', async () => {
    await gw.restart();
    const after = await client(gw.url, 'limited', alice.key, { sdk: 'v1', wire: 'http' });
    await expect(after.callTool('echo', { message: 'after restart' })).rejects.toThrow(limitText);
    const counters = await gw.ctx.db
      .selectFrom('daily_counters')
      .selectAll()
      .where('service_id', '=', limitedId)
      .where('user_id', '=', alice.id)
      .execute();
    expect(counters.reduce((n, c) => n + c.request_count, 0)).toBe(LIMIT);
  });

  it('keeps a session id working when the gateway restarts mid-session', async () => {
    const before = await client(gw.url, 'everything', alice.key, { sdk: 'v1', wire: 'http' });
    expect(textOf(await before.callTool('echo', { message: 'before' }))).toBe('Echo: before');
    const sessionId = before.sessionId();
    expect(sessionId).toBeTruthy();
    await gw.restart();
    expect(textOf(await before.callTool('echo', { message: 'after' }))).toBe('Echo: after');
    expect(before.sessionId()).toBe(sessionId);
    // A client of the other SDK major resuming the same id works as well.
    const resumed = await client(gw.url, 'everything', alice.key, { sdk: 'v2', wire: 'http', sessionId: sessionId as string });
    expect(textOf(await resumed.callTool('get-sum', { a: 2, b: 3 }))).toContain('is 5');
  });
});
