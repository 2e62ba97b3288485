import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURE_SERVER } from '../fixtures/upstream-kit.js';
import { connect, type McpClient, textOf, until } from '../gateway/clients.js';
import { addService, addUser, type LiveGateway, liveChildren, startGateway } from '../gateway/gateway-harness.js';
import { ADMIN_PASSWORD, createPgDatabase } from '../harness.js';
import { startTcpProxy, type TcpProxy } from './tcp-proxy.js';

const CUT_MS = 4_000;
const BOB_SEES = /Service unavailable: the database cannot be reached, retry shortly|Internal error: request could not be metered/;

/**
 * PostgreSQL unreachable for a few seconds under load: a TCP proxy between the gateway and the
 * database is cut (connections destroyed, new ones refused) and restored. Proxied calls are always
 * answered (a result or a clear JSON-RPC error, never a hang), the API answers 503 with a translated
 * message, and afterwards the gateway carries on without a restart and no counted call is lost.
 */
describe('the database becoming unreachable for a while', () => {
  let gw: LiveGateway;
  let proxy: TcpProxy;
  let drop: () => Promise<void>;
  let alice: { id: number; key: string };
  let bob: { id: number; key: string };
  let serviceId: number;
  let token: string;
  const open: McpClient[] = [];
  let stop = false;

  beforeAll(async () => {
    const db = await createPgDatabase();
    drop = db.drop;
    const target = new URL(db.url);
    proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
    target.port = String(proxy.port);
    gw = await startGateway('postgres', { DATABASE_URL: target.toString() });
    alice = await addUser(gw.ctx, 'alice');
    bob = await addUser(gw.ctx, 'bob');
    serviceId = await addService(gw.ctx, { name: 'fixture', args: [FIXTURE_SERVER], env: { FIXTURE_MODE: '' } });
    const login = await fetch(`${gw.url}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'root', password: ADMIN_PASSWORD }),
    });
    token = ((await login.json()) as { data: { access_token: string } }).data.access_token;
  });
  afterAll(async () => {
    stop = true;
    await Promise.all(open.map((c) => c.close().catch(() => undefined)));
    await proxy?.restore();
    await gw?.close();
    await proxy?.close();
    await drop?.();
    expect(liveChildren(FIXTURE_SERVER)).toEqual([]);
  });

  const api = (locale: string) =>
    fetch(`${gw.url}/api/mcp_market/installed`, { headers: { authorization: `Bearer ${token}`, 'accept-language': locale } });

  it('answers every call and the API clearly during the cut, then recovers and keeps every count', { timeout: 60_000 }, async () => {
    const clients = await Promise.all([0, 1, 2].map(() => connect(gw.url, 'fixture', alice.key, { sdk: 'v1', wire: 'http' })));
    open.push(...clients);
    expect((await api('en')).status).toBe(200);

    let ok = 0;
    const failures: string[] = [];
    const load = clients.map(async (c, i) => {
      for (let n = 0; !stop; n++) {
        try {
          // Each call must settle: the SDK's timeout would turn a hang into a failure below.
          const text = textOf(await c.callTool('echo', { text: `${i}-${n}` }, { timeout: 20_000 }));
          expect(text).toBe(`echo: ${i}-${n}`);
          ok += 1;
        } catch (err) {
          failures.push((err as Error).message);
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    });
    await until(() => ok >= 30, 'calls before the cut');

    await proxy.cut();
    const cutAt = Date.now();
    const okAtCut = ok;
    // What a tool server says on stderr meanwhile is kept until the database is back.
    const logged = [1, 2, 3].map((n) => `said during the cut ${n} ${cutAt}`);
    for (const message of logged) gw.ctx.serviceLog.write({ serviceId, serviceName: 'fixture', phase: 'run', level: 'info', message });
    // The API: 503 with a translated message, no stack, no 500.
    for (const [locale, text] of [
      ['en', 'The database cannot be reached right now, please try again in a few seconds'],
      ['zh-CN', '暂时无法连接数据库，请几秒后重试'],
    ] as const) {
      const res = await api(locale);
      expect(res.status).toBe(503);
      expect(await res.json()).toEqual({ success: false, code: 'database_unavailable', message: text });
    }
    // A user the gateway has not seen yet: authentication and admission need the database, and say so.
    const bobAt = Date.now();
    const bobSaw = await connect(gw.url, 'fixture', bob.key, { sdk: 'v1', wire: 'http' })
      .then(async (c) => {
        open.push(c);
        return textOf(await c.callTool('echo', { text: 'bob' }, { timeout: 20_000 }));
      })
      .catch((err: Error) => err.message);
    expect(bobSaw).toMatch(BOB_SEES);
    expect(Date.now() - bobAt).toBeLessThan(15_000);
    // The OpenAPI face says the same in the caller's language (decision 0053): 503 with Retry-After, no 500.
    const viaOpenApi = await fetch(`${gw.url}/openapi/proxy/fixture/echo`, {
      method: 'POST',
      headers: { authorization: `Bearer ${bob.key}`, 'content-type': 'application/json', 'accept-language': 'zh-CN' },
      body: JSON.stringify({ text: 'bob' }),
    });
    expect([viaOpenApi.status, viaOpenApi.headers.get('retry-after'), await viaOpenApi.json()]).toEqual([
      503,
      '5',
      { detail: { code: 'unavailable', message: '服务不可用：暂时无法连接数据库，请稍后重试' } },
    ]);
    await until(() => Date.now() - cutAt >= CUT_MS, 'the cut to last');
    const okDuringCut = ok - okAtCut;
    await proxy.restore();

    await until(async () => (await api('en')).status === 200, 'the API to recover', 30_000);
    await until(() => ok >= okAtCut + okDuringCut + 30, 'calls after the restore', 30_000);
    stop = true;
    await Promise.all(load);
    // Every call was answered: served, or refused with the clear 503 (the key and session checks
    // need the database once their few seconds of cache are over). Nothing else, nothing hung.
    for (const message of failures) expect(message).toMatch(BOB_SEES);
    expect(okDuringCut + failures.length).toBeGreaterThan(0);
    const late = await connect(gw.url, 'fixture', bob.key, { sdk: 'v1', wire: 'http' });
    open.push(late);
    expect(textOf(await late.callTool('echo', { text: 'bob' }))).toBe('echo: bob');

    // Every admitted call reached daily_counters once the database was back.
    await gw.ctx.meter.flush();
    let lastCount = -1;
    await until(
      async () => {
        await gw.ctx.meter.flush();
        const row = await gw.ctx.db
          .selectFrom('daily_counters')
          .select((eb) => eb.fn.sum<string>('request_count').as('n'))
          .where('service_id', '=', serviceId)
          .where('user_id', '=', alice.id)
          .executeTakeFirst();
        lastCount = Number(row?.n ?? 0);
        return lastCount === ok;
      },
      'the counts written during the cut to reach the database',
      20_000,
    ).catch((err: Error) => {
      throw new Error(`${err.message}: ${ok} calls answered, ${lastCount} counted`);
    });
    // And every answered call's request record, those of the cut included: kept, then written.
    const records = await gw.ctx.db
      .selectFrom('request_records')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('service_id', '=', serviceId)
      .where('user_id', '=', alice.id)
      .where('outcome', '=', 'ok')
      .executeTakeFirst();
    expect(Number(records?.n)).toBe(ok);
    // And so did the service log lines, stamped with the time they were written, not the time they landed.
    await gw.ctx.serviceLog.flush();
    const lines = await gw.ctx.db
      .selectFrom('service_logs')
      .select(['message', 'created_at'])
      .where('message', 'like', `said during the cut % ${cutAt}`)
      .orderBy('id')
      .execute();
    expect(lines.map((l) => l.message)).toEqual(logged);
    for (const line of lines) expect(Number(line.created_at) - cutAt).toBeLessThan(CUT_MS);
  });
});
