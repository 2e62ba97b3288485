import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppParts } from '../../src/app.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { createPgDatabase, createTestApp, type TestApp } from '../harness.js';
import { connect, type McpClient, until } from './clients.js';
import { addService, addUser, type LiveGateway, startGateway } from './gateway-harness.js';
import { initializeBody, openSession, post, raw } from './raw-http.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const probeServer = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures/probe-server.mjs');

const call = (id: number, name: string, args: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});

/** The value of one sample of `toolport_abuse_refusals_total`, 0 when absent. */
async function refusals(base: string, limit: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`toolport_abuse_refusals_total{limit="${limit}"}`));
  return line ? Number(line.split(' ').pop()) : 0;
}

/** Sessions a user holds on this replica. */
function sessionsOf(ctx: AppParts, userId: number): number {
  return ctx.gateway.sessionsOf(userId).length;
}

describe('abuse limit settings', () => {
  it('has defaults, takes values, and refuses a headers timeout over half the request timeout', () => {
    expect(loadConfig({}).abuse).toEqual({
      callsInFlight: 32,
      sessionsPerUser: 100,
      newSessionsPerMinute: 120,
      newSessionsBurst: 240,
      callQueueMs: 15_000,
      callQueueLength: 1000,
      authFailuresPerMinute: 30,
      streamBufferBytes: 4 * 1024 * 1024,
      headersTimeoutMs: 20_000,
      requestTimeoutMs: 60_000,
    });
    expect(loadConfig({ PROXY_MAX_CALLS_IN_FLIGHT: '8' }).abuse.callsInFlight).toBe(8);
    expect(() => loadConfig({ PROXY_MAX_CALLS_IN_FLIGHT: '0' })).toThrow(ConfigError);
    expect(() => loadConfig({ HTTP_HEADERS_TIMEOUT_MS: '40000', HTTP_REQUEST_TIMEOUT_MS: '60000' })).toThrow(
      /HTTP_HEADERS_TIMEOUT_MS: must be at most half of HTTP_REQUEST_TIMEOUT_MS/,
    );
  });
});

describe('abuse limits of the proxy (SQLite)', () => {
  let gw: LiveGateway;

  beforeAll(async () => {
    gw = await startGateway('sqlite', {
      PROXY_MAX_CALLS_IN_FLIGHT: '2',
      PROXY_NEW_SESSIONS_PER_MINUTE: '3',
      // Refusals at once here; the burst allowance and the call queue have their own tests.
      PROXY_NEW_SESSIONS_BURST: '0',
      PROXY_CALL_QUEUE_MS: '0',
      PROXY_MAX_SESSIONS_PER_USER: '2',
      PROXY_AUTH_FAILURES_PER_MINUTE: '3',
    });
    await addService(gw.ctx, { name: 'probe', args: [probeServer], rpdLimit: 4 });
    await addService(gw.ctx, { name: 'everything' });
  }, 60_000);
  afterAll(async () => gw?.close());

  it('caps counted calls in flight per user and service with 429, not counting them against the daily limit', async () => {
    const alice = await addUser(gw.ctx, 'inflight-alice');
    const bob = await addUser(gw.ctx, 'inflight-bob');
    const mcp = `${gw.url}/proxy/probe/mcp`;
    const client: McpClient = await connect(gw.url, 'probe', alice.key, { sdk: 'v1', wire: 'http' });
    const sid = client.sessionId() as string;
    try {
      const aborts = [new AbortController(), new AbortController()];
      const waits = aborts.map((ac) => client.callTool('wait-for-cancel', {}, { signal: ac.signal, timeout: 60_000 }).catch((e) => e));
      await until(() => gw.ctx.gateway.session(sid)?.inflight === 2, 'two calls waiting upstream');

      const refused = await post(mcp, alice.key, call(7, 'probe-state'), { 'mcp-session-id': sid });
      expect(refused.status).toBe(429);
      expect(refused.json()).toEqual({
        jsonrpc: '2.0',
        id: 7,
        error: { code: -32000, message: 'too many calls in progress for this service: 2' },
      });
      const zh = await post(mcp, alice.key, call(8, 'probe-state'), { 'mcp-session-id': sid, 'accept-language': 'zh-CN,zh;q=0.9' });
      expect(zh.status).toBe(429);
      expect(zh.json()).toMatchObject({ id: 8, error: { code: -32000, message: '此服务正在进行的调用过多：2' } });
      // The cap is on counted calls: listing still works; and it is per user: bob is not refused.
      expect((await post(mcp, alice.key, { jsonrpc: '2.0', id: 9, method: 'tools/list' }, { 'mcp-session-id': sid })).status).toBe(200);
      const bobSession = await openSession(mcp, bob.key);
      const bobs = await post(mcp, bob.key, call(10, 'probe-state'), { 'mcp-session-id': bobSession });
      expect(bobs.status).toBe(200);
      expect(await refusals(gw.url, 'calls_in_flight')).toBe(2);

      for (const ac of aborts) ac.abort();
      await Promise.all(waits);
      await until(() => gw.ctx.gateway.session(sid)?.inflight === 0, 'the cancelled calls to end');
      // rpd_limit is 4: the two cancelled calls and two more are admitted; the two refusals did not count.
      for (const id of [11, 12]) {
        const ok = await post(mcp, alice.key, call(id, 'probe-state'), { 'mcp-session-id': sid });
        expect(ok.status).toBe(200);
        expect(ok.json()).toMatchObject({ id, result: { content: [{ type: 'text' }] } });
      }
      const limited = await post(mcp, alice.key, call(13, 'probe-state'), { 'mcp-session-id': sid });
      expect(limited.status).toBe(429);
      expect(limited.json()).toMatchObject({ error: { message: 'daily request limit exceeded: 4/4' } });
    } finally {
      await client.close();
    }
  }, 60_000);

  it('keeps at most the session cap per user and refuses a flood of new sessions with 429 and Retry-After', async () => {
    const carol = await addUser(gw.ctx, 'flood-carol');
    const dave = await addUser(gw.ctx, 'flood-dave');
    const mcp = `${gw.url}/proxy/everything/mcp`;
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(await openSession(mcp, carol.key));
    // Three sessions opened, two kept: the one idle longest was dropped (its id still works: it is rebuilt).
    expect(sessionsOf(gw.ctx, carol.id)).toBe(2);

    const fourth = await post(mcp, carol.key, initializeBody());
    expect(fourth.status).toBe(429);
    const retry = Number(fourth.headers.get('retry-after'));
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(60);
    expect(fourth.json()).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32000, message: `too many new sessions: at most 3 a minute, retry in ${retry} seconds` },
    });
    expect(fourth.headers.get('mcp-session-id')).toBeNull();
    const zh = await post(mcp, carol.key, initializeBody(), { 'accept-language': 'zh-CN' });
    expect(zh.status).toBe(429);
    expect((zh.json() as { error: { message: string } }).error.message).toMatch(/^新建会话过于频繁：每分钟最多 3 个，请在 \d+ 秒后重试$/);
    // The legacy transport opens sessions too.
    const sse = await raw(`${gw.url}/proxy/everything/sse`, {
      headers: { authorization: `Bearer ${carol.key}`, accept: 'text/event-stream' },
    });
    expect(sse.status).toBe(429);
    expect(sse.headers.get('retry-after')).not.toBeNull();

    // Sessions already open keep working, and another user is not refused.
    const list = await post(mcp, carol.key, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, { 'mcp-session-id': ids[2] as string });
    expect(list.status).toBe(200);
    expect(await openSession(mcp, dave.key)).toBeTruthy();
    expect(await refusals(gw.url, 'new_sessions')).toBe(3);
  }, 60_000);

  it('answers 429 to an address after too many refused authentications, without checking its key', async () => {
    const erin = await addUser(gw.ctx, 'ip-erin');
    const mcp = `${gw.url}/proxy/everything/mcp`;
    // The gateway's peer is loopback, a trusted proxy by default: X-Forwarded-For names the client.
    const from = (ip: string, extra: Record<string, string> = {}) => ({ 'x-forwarded-for': ip, ...extra });
    const attacker = '198.51.100.7';
    expect((await post(mcp, 'not-a-key', initializeBody(), from(attacker))).status).toBe(401);
    expect((await post(mcp, undefined, initializeBody(), from(attacker))).status).toBe(401);
    expect((await post(`${gw.url}/proxy/no-such-service/mcp`, erin.key, initializeBody(), from(attacker))).status).toBe(404);

    // Three refusals this minute: even a valid key is answered 429 now, on every proxy route.
    const blocked = await post(mcp, erin.key, initializeBody(), from(attacker));
    expect(blocked.status).toBe(429);
    const retry = Number(blocked.headers.get('retry-after'));
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(60);
    expect(blocked.headers.get('www-authenticate')).toBeNull();
    expect(blocked.json()).toMatchObject({
      error: { code: -32000, message: `too many refused requests from this address, retry in ${retry} seconds` },
    });
    const zh = await post(mcp, erin.key, initializeBody(), from(attacker, { 'accept-language': 'zh-CN' }));
    expect((zh.json() as { error: { message: string } }).error.message).toMatch(/^来自此地址的被拒请求过多，请在 \d+ 秒后重试$/);
    const sse = await raw(`${gw.url}/proxy/everything/sse`, {
      headers: { authorization: `Bearer ${erin.key}`, accept: 'text/event-stream', ...from(attacker) },
    });
    expect(sse.status).toBe(429);

    // Another address is not affected, with the same key.
    expect((await post(mcp, erin.key, initializeBody(), from('198.51.100.8'))).status).toBe(200);
    expect(await refusals(gw.url, 'proxy_auth_ip')).toBe(3);

    // IPv6: one /64 is one address (its owner could pick a fresh one of 2^64 for every try); the next /64 is not.
    for (const ip of ['2001:db8:7:1::1', '2001:db8:7:1:ffff::2', '2001:db8:7:1:0:0:0:3'])
      expect((await post(mcp, 'not-a-key', initializeBody(), from(ip))).status).toBe(401);
    expect((await post(mcp, erin.key, initializeBody(), from('2001:db8:7:1:abcd::9'))).status).toBe(429);
    expect((await post(mcp, erin.key, initializeBody(), from('2001:db8:7:2::1'))).status).toBe(200);
  }, 60_000);

  it('limits sign-in attempts per address (30 a minute) with a localised 429 and Retry-After', async () => {
    // A new username each time: the per-username limit (10 failures) must not be what refuses.
    let n = 0;
    const login = (ip: string, lang = 'en') =>
      raw(`${gw.url}/api/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': ip, 'accept-language': lang },
        body: JSON.stringify({ username: `nobody-${n++}`, password: 'wrong-password' }),
      });
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) statuses.push((await login('198.51.100.50')).status);
    expect(statuses.every((s) => s === 401)).toBe(true);
    const refused = await login('198.51.100.50', 'zh-CN');
    expect(refused.status).toBe(429);
    const retry = Number(refused.headers.get('retry-after'));
    expect(retry).toBeGreaterThanOrEqual(1);
    expect((refused.json() as { message: string }).message).toBe(`登录尝试次数过多，请在 ${retry} 秒后重试`);
    expect((await login('198.51.100.51')).status).toBe(401);
    expect(await refusals(gw.url, 'login_ip')).toBe(1);
  }, 60_000);
});

/**
 * Two replicas on one PostgreSQL and one Redis (the pattern of replicas.test.ts): the proxy's
 * per-address limit, the per-user new-session rate and the sign-in limit hold across both.
 */
describe('abuse limits shared by two replicas through Redis (PostgreSQL)', () => {
  const replicas: { t: TestApp; url: string }[] = [];
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const database = await createPgDatabase();
    drop = database.drop;
    const env = {
      DATABASE_URL: database.url,
      REDIS_URL,
      REDIS_PREFIX: `toolport-test:${process.pid}:${Math.random().toString(36).slice(2, 10)}:`,
      PROXY_AUTH_FAILURES_PER_MINUTE: '4',
      PROXY_NEW_SESSIONS_PER_MINUTE: '3',
      PROXY_NEW_SESSIONS_BURST: '0',
    };
    for (let i = 0; i < 2; i++) {
      const t = await createTestApp('postgres', env);
      await t.app.listen({ host: '127.0.0.1', port: 0 });
      replicas.push({ t, url: `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}` });
    }
  }, 60_000);
  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.t.close()));
    await drop?.();
  });

  it('blocks an address on both replicas once its refusals on either add up to the limit', async () => {
    const [a, b] = replicas as [{ t: TestApp; url: string }, { t: TestApp; url: string }];
    await addService(a.t.ctx, { name: 'shared' });
    const user = await addUser(a.t.ctx, 'replica-ip-user');
    const mcp = (r: { url: string }) => `${r.url}/proxy/shared/mcp`;
    const attacker = { 'x-forwarded-for': '203.0.113.70' };
    // A ping without a session: 400 once the key and the service are accepted, 429 while blocked.
    const ping = { jsonrpc: '2.0', id: 1, method: 'ping' };
    await until(async () => (await post(mcp(b), user.key, ping, { 'x-forwarded-for': '203.0.113.1' })).status === 400, 'the service on B');

    for (const r of [a, b, a, b]) expect((await post(mcp(r), 'bad-key', ping, attacker)).status).toBe(401);
    // The fourth refusal was B's: A hears of the block over Redis and refuses too, whatever the key.
    expect((await post(mcp(b), user.key, ping, attacker)).status).toBe(429);
    await until(async () => (await post(mcp(a), user.key, ping, attacker)).status === 429, 'the block to reach replica A');
    const res = await post(mcp(a), user.key, ping, attacker);
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await post(mcp(a), user.key, ping, { 'x-forwarded-for': '203.0.113.71' })).status).toBe(400);
  }, 60_000);

  it('counts new sessions of one user on both replicas together', async () => {
    const [a, b] = replicas as [{ t: TestApp; url: string }, { t: TestApp; url: string }];
    await addService(a.t.ctx, { name: 'sessions' });
    const user = await addUser(a.t.ctx, 'replica-session-user');
    const mcp = (r: { url: string }) => `${r.url}/proxy/sessions/mcp`;
    const ip = { 'x-forwarded-for': '203.0.113.90' };
    await until(
      async () => (await post(mcp(b), user.key, { jsonrpc: '2.0', id: 1, method: 'ping' }, ip)).status === 400,
      'the service on B',
    );
    for (const r of [a, b, a]) expect((await post(mcp(r), user.key, initializeBody(), ip)).status).toBe(200);
    const fourth = await post(mcp(b), user.key, initializeBody(), ip);
    expect(fourth.status).toBe(429);
    expect(fourth.headers.get('retry-after')).not.toBeNull();
  }, 60_000);

  it('shares the sign-in limit per address between replicas', async () => {
    let n = 0;
    const login = (r: { url: string }) =>
      raw(`${r.url}/api/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': '203.0.113.80' },
        body: JSON.stringify({ username: `nobody-${n++}`, password: 'wrong-password' }),
      });
    const [a, b] = replicas as [{ t: TestApp; url: string }, { t: TestApp; url: string }];
    for (let i = 0; i < 15; i++) {
      expect((await login(a)).status).toBe(401);
      expect((await login(b)).status).toBe(401);
    }
    const refused = await login(a);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).not.toBeNull();
  }, 60_000);
});
