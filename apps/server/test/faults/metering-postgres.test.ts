import { afterAll, describe, expect, it } from 'vitest';
import { CALL_PATH_BOUND_MS } from '../../src/db/availability.js';
import { FIXTURE_SERVER } from '../fixtures/upstream-kit.js';
import { connect, type McpClient, until } from '../gateway/clients.js';
import { addService, addUser, type LiveGateway, liveChildren, startGateway } from '../gateway/gateway-harness.js';
import { ADMIN_PASSWORD } from '../harness.js';
import { MeteredLoad, OUTAGE_MS } from './metered-load.js';
import { type PrivatePostgres, startPrivatePostgres } from './private-servers.js';

const LONG = OUTAGE_MS > 10_000;
/** Long outages call more slowly, so that the limit is still ahead when the last one ends. */
const LIMIT = LONG ? 8_000 : 600;
const PAUSE_MS = LONG ? 200 : 20;
const CLIENTS = 3;
const MESSAGES = {
  en: 'The database cannot be reached right now, please try again in a few seconds',
  'zh-CN': '暂时无法连接数据库，请几秒后重试',
} as const;

/**
 * Issue 25, item 2 (decision 0043): the gateway's own PostgreSQL stopped (`pg_ctl stop -m fast`, then
 * `-m immediate`) and frozen (SIGSTOP to the server and its backends), each for OUTAGE_MS under load, then
 * brought back. Calls of the user and service the gateway knows are served throughout (no call fails or
 * hangs), `/api/ready` answers 503 within 2 s, the API answers a translated 503, and afterwards the
 * database has every answered call once — counts and request records — and the limit admitted exactly
 * LIMIT calls. A user disabled just before the outage is not served from that memory.
 */
describe('metering through PostgreSQL outages', () => {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const step of cleanup.reverse()) await step().catch(() => undefined);
    expect(liveChildren(FIXTURE_SERVER)).toEqual([]);
  });

  it('serves known calls through a stop, an immediate stop and a freeze, and counts each once', {
    timeout: 120_000 + 6 * OUTAGE_MS,
  }, async () => {
    const pg: PrivatePostgres = await startPrivatePostgres();
    cleanup.push(() => pg.close());
    const gw: LiveGateway = await startGateway('postgres', { DATABASE_URL: pg.url });
    cleanup.push(() => gw.close());
    const alice = await addUser(gw.ctx, 'alice');
    const serviceId = await addService(gw.ctx, { name: 'fixture', args: [FIXTURE_SERVER], env: { FIXTURE_MODE: '' }, rpdLimit: LIMIT });
    const login = await fetch(`${gw.url}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'root', password: ADMIN_PASSWORD }),
    });
    const token = ((await login.json()) as { data: { access_token: string } }).data.access_token;
    const clients: McpClient[] = [];
    for (let i = 0; i < CLIENTS; i++) clients.push(await connect(gw.url, 'fixture', alice.key, { sdk: i % 2 ? 'v2' : 'v1', wire: 'http' }));
    cleanup.push(() => Promise.all(clients.map((c) => c.close())));
    const ready = async () => {
      const at = Date.now();
      const res = await fetch(`${gw.url}/api/ready`);
      return { status: res.status, ms: Date.now() - at };
    };

    // Bob is known to the gateway (he called), then disabled through the API just before the outage: the memory
    // that serves calls during an outage must not bring him back.
    const bob = await addUser(gw.ctx, 'bob');
    const bobClient = await connect(gw.url, 'fixture', bob.key, { sdk: 'v1', wire: 'http' });
    clients.push(bobClient);
    await bobClient.callTool('echo', { text: 'bob' });

    const load = new MeteredLoad(clients.slice(0, CLIENTS), { pauseMs: PAUSE_MS });
    await until(() => load.ok >= 30, 'calls before the first outage');
    const disabled = await fetch(`${gw.url}/api/user/manage`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'bob', action: 'disable' }),
    });
    expect(disabled.status).toBe(200);
    const faults: [string, () => Promise<void> | void, () => Promise<void> | void][] = [
      ['stop -m fast', () => pg.stop('fast'), () => pg.start()],
      ['stop -m immediate', () => pg.stop('immediate'), () => pg.start()],
      ['SIGSTOP', () => pg.freeze(), () => pg.thaw()],
    ];
    for (const [what, fault, recover] of faults) {
      await fault();
      const at = load.ok;
      const probe = await ready();
      expect(probe.status, what).toBe(503);
      // Answered within the database's bound, not when the connection gives up (a frozen server never answers); the
      // margin is for a loaded machine, which may stall this process's own timers and fetch.
      expect(probe.ms, what).toBeLessThan(CALL_PATH_BOUND_MS + 3000);
      for (const [locale, message] of Object.entries(MESSAGES)) {
        const res = await fetch(`${gw.url}/api/mcp_market/installed`, {
          headers: { authorization: `Bearer ${token}`, 'accept-language': locale },
        });
        expect(res.status, what).toBe(503);
        expect(await res.json(), what).toEqual({ success: false, code: 'database_unavailable', message });
      }
      if (what === 'stop -m fast') {
        const late = await connect(gw.url, 'fixture', bob.key, { sdk: 'v1', wire: 'http' })
          .then((c) => c.close().then(() => 'connected'))
          .catch((err: Error) => err.message);
        expect(late).toMatch(/503|401|Service unavailable|Unauthorized/i);
        await expect(bobClient.callTool('echo', { text: 'bob again' })).rejects.toThrow();
      }
      await new Promise((r) => setTimeout(r, OUTAGE_MS));
      // Served all along, from what the gateway knew.
      expect(load.ok - at, `${what}: ${load.failures.slice(0, 3).join(' / ')}`).toBeGreaterThan(0);
      await recover();
      await until(async () => (await ready()).status === 200, `the database back after ${what}`, 30_000);
    }
    await load.finished();

    expect(load.failures).toEqual([]);
    expect(load.ok).toBe(LIMIT);
    expect(load.refusals).toHaveLength(CLIENTS);
    for (const refusal of load.refusals) expect(refusal).toContain(`daily request limit exceeded: ${LIMIT}/${LIMIT}`);
    await until(
      async () => {
        await gw.ctx.meter.flush();
        return (gw.ctx.meter as { pending?: readonly unknown[] }).pending?.length === 0;
      },
      'the journal to be folded',
      40_000,
    );
    const counted = await gw.ctx.db
      .selectFrom('daily_counters')
      .select((eb) => eb.fn.sum<string>('request_count').as('n'))
      .where('service_id', '=', serviceId)
      .where('user_id', '=', alice.id)
      .executeTakeFirst();
    expect(Number(counted?.n)).toBe(LIMIT);
    const records = await gw.ctx.db
      .selectFrom('request_records')
      .select('outcome')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('service_id', '=', serviceId)
      .where('user_id', '=', alice.id)
      .groupBy('outcome')
      .execute();
    expect(Object.fromEntries(records.map((r) => [r.outcome, Number(r.n)]))).toEqual({ ok: LIMIT, limited: CLIENTS });
  });
});
