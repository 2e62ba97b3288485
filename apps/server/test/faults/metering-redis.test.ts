import { createClient } from 'redis';
import { afterAll, describe, expect, it } from 'vitest';
import { dayIn } from '../../src/infra/day.js';
import { FIXTURE_SERVER } from '../fixtures/upstream-kit.js';
import { connect, type McpClient, until } from '../gateway/clients.js';
import { addService, addUser, type LiveGateway, liveChildren, startGateway } from '../gateway/gateway-harness.js';
import { createPgDatabase } from '../harness.js';
import { MeteredLoad, OUTAGE_MS } from './metered-load.js';
import { startPrivateRedis } from './private-servers.js';

/** Far enough above the calls made before and during the outage that the limit is crossed with Redis back. */
const LIMIT = OUTAGE_MS > 10_000 ? 40_000 : 600;
const FAULT_AT = 100;
const CLIENTS = 4;

/**
 * Issue 25, item 1 (decision 0043): a private Redis SIGKILLed under load and started again — empty, or
 * with its data (append-only file) — with one and with two replicas. No call fails, every answered call
 * is counted once in the database and in Redis (the calls each replica admitted while Redis was away
 * included, never twice), and the daily limit admits exactly `LIMIT` calls, then refuses them all.
 */
describe.each([
  { replicas: 1, persist: false, what: 'one replica, Redis restarted empty' },
  { replicas: 2, persist: false, what: 'two replicas, Redis restarted empty' },
  { replicas: 2, persist: true, what: 'two replicas, Redis restarted with its data' },
])('metering through a Redis restart: $what', ({ replicas, persist }) => {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const step of cleanup.reverse()) await step().catch(() => undefined);
    expect(liveChildren(FIXTURE_SERVER)).toEqual([]);
  });

  it('counts every answered call once and keeps the limit exact', { timeout: 60_000 + 3 * OUTAGE_MS }, async () => {
    const redis = await startPrivateRedis({ persist });
    cleanup.push(() => redis.close());
    const db = await createPgDatabase();
    cleanup.push(() => db.drop());
    const prefix = `toolport-redis-fault:${process.pid}:${Math.random().toString(36).slice(2, 8)}:`;
    const gateways: LiveGateway[] = [];
    for (let i = 0; i < replicas; i++) {
      const gw = await startGateway('postgres', { DATABASE_URL: db.url, REDIS_URL: redis.url, REDIS_PREFIX: prefix });
      gateways.push(gw);
      cleanup.push(() => gw.close());
    }
    const first = gateways[0] as LiveGateway;
    const alice = await addUser(first.ctx, 'alice');
    const serviceId = await addService(first.ctx, { name: 'fixture', args: [FIXTURE_SERVER], env: { FIXTURE_MODE: '' }, rpdLimit: LIMIT });
    const clients: McpClient[] = [];
    for (let i = 0; i < CLIENTS; i++) {
      const gw = gateways[i % replicas] as LiveGateway;
      clients.push(await connect(gw.url, 'fixture', alice.key, { sdk: i % 2 ? 'v2' : 'v1', wire: 'http' }));
    }
    cleanup.push(() => Promise.all(clients.map((c) => c.close())));

    const load = new MeteredLoad(clients, { pauseMs: 20 });
    await until(() => load.ok >= FAULT_AT, 'calls before the fault');
    await redis.kill();
    const atKill = load.ok;
    await new Promise((r) => setTimeout(r, OUTAGE_MS));
    const duringOutage = load.ok - atKill;
    await redis.start();
    await load.finished();

    // Nothing failed: without Redis each replica counted on its own, and calls went on.
    expect(load.failures).toEqual([]);
    expect(duringOutage).toBeGreaterThan(0);
    expect(load.ok).toBe(LIMIT);
    expect(load.refusals).toHaveLength(CLIENTS);
    for (const refusal of load.refusals) expect(refusal).toContain(`daily request limit exceeded: ${LIMIT}/${LIMIT}`);

    // The database has every answered call once, and so does Redis (the sum of the replicas' fields).
    for (const gw of gateways) await gw.ctx.meter.flush();
    const row = await first.ctx.db
      .selectFrom('daily_counters')
      .select((eb) => eb.fn.sum<string>('request_count').as('n'))
      .where('service_id', '=', serviceId)
      .where('user_id', '=', alice.id)
      .executeTakeFirst();
    expect(Number(row?.n)).toBe(LIMIT);
    const records = await first.ctx.db
      .selectFrom('request_records')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('service_id', '=', serviceId)
      .where('outcome', '=', 'ok')
      .executeTakeFirst();
    expect(Number(records?.n)).toBe(LIMIT);
    const reader = createClient({ url: redis.url });
    await reader.connect();
    const fields = await reader.hVals(`${prefix}rpd:${dayIn('UTC')}|${serviceId}|${alice.id}`);
    await reader.close();
    expect(fields.reduce((sum, v) => sum + Number(v), 0)).toBe(LIMIT);
  });
});
