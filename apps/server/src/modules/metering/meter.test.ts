import net from 'node:net';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../../../test/gateway/clients.js';
import { createTestApp, engines, type TestApp } from '../../../test/harness.js';
import type { ServiceSpec } from '../../gateway/catalog.js';
import { dayIn } from '../../infra/day.js';
import { DbMeter, RedisAdmission } from './meter.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Removes what a test stored in Redis under its own prefix. */
async function dropKeys(prefix: string): Promise<void> {
  const cleaner = createClient({ url: REDIS_URL });
  await cleaner.connect();
  const keys = await cleaner.keys(`${prefix}*`);
  if (keys.length > 0) await cleaner.del(keys);
  await cleaner.close();
}
const testPrefix = () => `toolport-test:${process.pid}:${Math.random().toString(36).slice(2)}:`;

/** A TCP relay to Redis that can be cut (connections dropped, new ones refused) and restored on the same port. */
class CuttableRelay {
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();
  port = 0;

  constructor(private readonly target: URL) {}

  async listen(): Promise<void> {
    const server = net.createServer((client) => {
      const upstream = net.connect({ host: this.target.hostname, port: Number(this.target.port || 6379) });
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
  }

  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  }
}

let serial = 0;
/** A service as the gateway would pass it; only id and limit matter to the meter. */
const serviceWith = (rpdLimit: number): ServiceSpec => {
  serial += 1;
  return {
    id: 1000 + serial,
    name: `metered-${serial}`,
    displayName: '',
    type: 'stdio',
    command: '/bin/true',
    args: [],
    env: {},
    headers: {},
    secretEnvNames: [],
    installDir: '',
    enabled: true,
    isolation: 'shared',
    rpdLimit,
    updatedAt: 0,
  };
};

describe('dayIn', () => {
  it('names the day in the given time zone', () => {
    const at = Date.UTC(2026, 0, 1, 20, 30); // 2026-01-01 20:30 UTC
    expect(dayIn('UTC', at)).toBe('2026-01-01');
    expect(dayIn('Asia/Shanghai', at)).toBe('2026-01-02');
    expect(dayIn('America/Los_Angeles', Date.UTC(2026, 0, 1, 5))).toBe('2025-12-31');
  });
});

describe.each(engines)('metering on %s', (engine) => {
  let t: TestApp;
  const meterOf = (redis?: RedisAdmission) =>
    new DbMeter({ db: t.ctx.db, logger: t.ctx.logger, timeZone: () => 'UTC', ...(redis ? { redis } : {}) });
  const stored = async (serviceId: number, userId: number) =>
    t.ctx.db
      .selectFrom('daily_counters')
      .selectAll()
      .where('service_id', '=', serviceId)
      .where('user_id', '=', userId)
      .where('day', '=', dayIn('UTC'))
      .executeTakeFirst();
  const admitMany = async (meter: DbMeter, service: ServiceSpec, userId: number, n: number) =>
    (await Promise.all(Array.from({ length: n }, () => meter.admit(service, userId)))).filter((a) => a.allowed).length;

  beforeAll(async () => {
    t = await createTestApp(engine);
  });
  afterAll(async () => t?.close());

  it('lets exactly rpd_limit of 200 concurrent requests through and refuses the rest with the count', async () => {
    const meter = meterOf();
    const service = serviceWith(37);
    const results = await Promise.all(Array.from({ length: 200 }, () => meter.admit(service, 7)));
    expect(results.filter((r) => r.allowed)).toHaveLength(37);
    expect(results.filter((r) => !r.allowed)).toContainEqual({ allowed: false, count: 37, limit: 37 });
    await meter.flush();
    expect((await stored(service.id, 7))?.request_count).toBe(37);
    // Another user of the same service has a count of their own.
    expect(await admitMany(meter, service, 8, 40)).toBe(37);
  });

  it('writes a count before admit returns; the bench-only deferred mode leaves it to the flush', async () => {
    const service = serviceWith(0);
    await meterOf().admit(service, 21);
    expect((await stored(service.id, 21))?.request_count).toBe(1);
    const deferred = new DbMeter({ db: t.ctx.db, logger: t.ctx.logger, timeZone: () => 'UTC', deferCountWrites: true });
    await deferred.admit(service, 22);
    expect(await stored(service.id, 22)).toBeUndefined();
    await deferred.flush();
    expect((await stored(service.id, 22))?.request_count).toBe(1);
  });

  it('counts a batch once when the answer to its commit is lost, and again when it never committed', async () => {
    // What a connection cut does to a write: PostgreSQL may have committed it (the answer never came
    // back) or not (the commit never arrived). Both throw the same error at the meter.
    let fault: 'lost answer' | 'never arrived' | undefined;
    const db = new Proxy(t.ctx.db, {
      get(target, prop) {
        if (prop === 'transaction' && fault) {
          const happened = fault;
          fault = undefined;
          return () => ({
            execute: async (work: Parameters<ReturnType<typeof target.transaction>['execute']>[0]) => {
              if (happened === 'lost answer') await target.transaction().execute(work);
              throw new Error(`Connection terminated unexpectedly (${happened})`);
            },
          });
        }
        const value = Reflect.get(target, prop, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const meter = new DbMeter({ db, logger: t.ctx.logger, timeZone: () => 'UTC' });
    const service = serviceWith(0);
    fault = 'lost answer';
    expect(await admitMany(meter, service, 7, 5)).toBe(5);
    await meter.flush();
    expect((await stored(service.id, 7))?.request_count).toBe(5);
    fault = 'never arrived';
    expect(await admitMany(meter, service, 7, 3)).toBe(3);
    await meter.flush();
    expect((await stored(service.id, 7))?.request_count).toBe(8);
  });

  it('always admits with rpd_limit 0 but still counts', async () => {
    const meter = meterOf();
    const service = serviceWith(0);
    expect(await admitMany(meter, service, 7, 25)).toBe(25);
    await meter.flush();
    expect((await stored(service.id, 7))?.request_count).toBe(25);
  });

  it('adds to the stored counters instead of overwriting them, so replicas can share a row', async () => {
    const service = serviceWith(0);
    const a = meterOf();
    const b = meterOf();
    await admitMany(a, service, 7, 3);
    await admitMany(b, service, 7, 4);
    await a.flush();
    await b.flush();
    await admitMany(a, service, 7, 2);
    await a.flush();
    expect((await stored(service.id, 7))?.request_count).toBe(9);
  });

  it('records outcomes: latency and errors in the counters, every request in request_records, refusals uncounted', async () => {
    const meter = meterOf();
    const service = serviceWith(2);
    await admitMany(meter, service, 9, 2);
    const base = { serviceId: service.id, userId: 9, method: 'tools/call', target: 'echo', bytesIn: 10, bytesOut: 20 };
    meter.record({ ...base, latencyMs: 12, outcome: 'ok' });
    meter.record({ ...base, latencyMs: 30, outcome: 'error', errorMessage: 'boom' });
    const refused = await meter.admit(service, 9);
    expect(refused).toEqual({ allowed: false, count: 2, limit: 2 });
    meter.record({ ...base, latencyMs: 0, outcome: 'limited', errorMessage: 'daily request limit exceeded: 2/2' });
    await meter.flush();
    expect(await stored(service.id, 9)).toMatchObject({ request_count: 2, error_count: 1, total_latency_ms: 42 });
    const records = await t.ctx.db.selectFrom('request_records').selectAll().where('service_id', '=', service.id).orderBy('id').execute();
    expect(records.map((r) => [r.outcome, r.latency_ms, r.target, r.day])).toEqual([
      ['ok', 12, 'echo', dayIn('UTC')],
      ['error', 30, 'echo', dayIn('UTC')],
      ['limited', 0, 'echo', dayIn('UTC')],
    ]);
    expect(records[1]?.error_message).toBe('boom');
  });

  it('has every admitted count in the database by the time admit resolves, without a flush (a killed process loses none)', async () => {
    const service = serviceWith(7);
    const meter = meterOf();
    // Concurrent admissions share one write; each waits for it.
    expect(await admitMany(meter, service, 13, 5)).toBe(5);
    expect((await stored(service.id, 13))?.request_count).toBe(5);
    expect((await meter.admit(service, 13)).allowed).toBe(true);
    expect((await stored(service.id, 13))?.request_count).toBe(6);
    // A fresh meter (the restarted process) carries the limit on from the table: one left of 7.
    const restarted = meterOf();
    expect(await admitMany(restarted, service, 13, 3)).toBe(1);
    expect((await stored(service.id, 13))?.request_count).toBe(7);
  });

  it('loses no count across an app close and a fresh meter: the limit carries on from the stored count', async () => {
    const local = await createTestApp(engine);
    try {
      const service = serviceWith(12);
      expect(await admitMany(local.ctx.meter as DbMeter, service, 5, 10)).toBe(10);
      // Closing the app flushes the meter (its onClose hook); nothing was written before that.
      await local.app.close();
      const restarted = new DbMeter({ db: local.ctx.db, logger: local.ctx.logger, timeZone: () => 'UTC' });
      expect(await admitMany(restarted, service, 5, 10)).toBe(2);
      await restarted.flush();
      const row = await local.ctx.db.selectFrom('daily_counters').selectAll().where('service_id', '=', service.id).executeTakeFirst();
      expect(row?.request_count).toBe(12);
    } finally {
      await local.close();
    }
  });

  it('with Redis, two meters (two replicas) share one exact limit', async () => {
    const prefix = testPrefix();
    const [r1, r2] = await Promise.all([RedisAdmission.connect(REDIS_URL, prefix), RedisAdmission.connect(REDIS_URL, prefix)]);
    try {
      const service = serviceWith(37);
      const a = meterOf(r1);
      const b = meterOf(r2);
      const results = await Promise.all(Array.from({ length: 200 }, (_, i) => (i % 2 ? a : b).admit(service, 11)));
      expect(results.filter((r) => r.allowed)).toHaveLength(37);
      expect(results.find((r) => !r.allowed)).toEqual({ allowed: false, count: 37, limit: 37 });
      await Promise.all([a.flush(), b.flush()]);
      expect((await stored(service.id, 11))?.request_count).toBe(37);

      // An emptied Redis is seeded from the table: the count is not lost.
      await dropKeys(prefix);
      const fresh = meterOf(r1);
      expect(await fresh.admit(service, 11)).toEqual({ allowed: false, count: 37, limit: 37 });
    } finally {
      await dropKeys(prefix);
      await Promise.all([r1.close(), r2.close()]);
    }
  });

  it('with Redis, writes the counts of a replica killed before its flush through the flush of another', async () => {
    const prefix = testPrefix();
    const [r1, r2] = await Promise.all([RedisAdmission.connect(REDIS_URL, prefix), RedisAdmission.connect(REDIS_URL, prefix)]);
    try {
      const service = serviceWith(0);
      const killed = meterOf(r1);
      const survivor = meterOf(r2);
      // The killed replica admits calls for two users and never flushes; the survivor serves only one of them.
      expect(await admitMany(killed, service, 21, 10)).toBe(10);
      expect(await admitMany(killed, service, 22, 4)).toBe(4);
      expect(await admitMany(survivor, service, 21, 5)).toBe(5);
      await survivor.flush();
      expect((await stored(service.id, 21))?.request_count).toBe(15);
      // A user the survivor never saw is written too: the dirty keys are shared, not per replica.
      expect((await stored(service.id, 22))?.request_count).toBe(4);
      // Flushing again, from any replica, adds nothing: the counts are written, not added.
      await survivor.flush();
      await killed.flush();
      expect((await stored(service.id, 21))?.request_count).toBe(15);
      expect((await stored(service.id, 22))?.request_count).toBe(4);
    } finally {
      await dropKeys(prefix);
      await Promise.all([r1.close(), r2.close()]);
    }
  });

  it('with Redis, takes over the dirty counters a replica took for writing and died holding, once its claim ends', async () => {
    const prefix = testPrefix();
    const claimMs = 300;
    const [r1, r2] = await Promise.all([
      RedisAdmission.connect(REDIS_URL, prefix, claimMs),
      RedisAdmission.connect(REDIS_URL, prefix, claimMs),
    ]);
    try {
      const service = serviceWith(0);
      // Admitted in Redis by a replica that died before writing them through (its meter never ran on).
      const key = `${dayIn('UTC')}|${service.id}|23`;
      for (let i = 1; i <= 6; i++) expect(await r1.incrementWithin(key, 0, 0)).toBe(i);
      // The first replica takes the dirty counter to write it, and dies before writing.
      const taken = await r1.sweep();
      expect([...taken.taken]).toEqual([[`${dayIn('UTC')}|${service.id}|23`, 6]]);
      const survivor = meterOf(r2);
      await survivor.flush();
      // Claimed by the dead replica: not written yet, but still dirty, so the survivor looks again by itself.
      expect(await stored(service.id, 23)).toBeUndefined();
      await until(async () => (await stored(service.id, 23))?.request_count === 6, 'the survivor to write the counter');
      expect((await r2.sweep()).remaining).toBe(0);
    } finally {
      await dropKeys(prefix);
      await Promise.all([r1.close(), r2.close()]);
    }
  });

  it('with Redis away from one replica, counts its calls once: added to the row meanwhile, added to Redis once it is back', async () => {
    const prefix = testPrefix();
    const relay = new CuttableRelay(new URL(REDIS_URL));
    await relay.listen();
    const [cut, direct] = await Promise.all([
      RedisAdmission.connect(`redis://127.0.0.1:${relay.port}`, prefix),
      RedisAdmission.connect(REDIS_URL, prefix),
    ]);
    try {
      const service = serviceWith(0);
      const a = meterOf(cut);
      const b = meterOf(direct);
      expect(await admitMany(a, service, 24, 3)).toBe(3);
      await relay.cut();
      // A counts on from the shared count it saw; B still reaches Redis.
      expect(await admitMany(a, service, 24, 4)).toBe(4);
      await a.flush();
      expect((await stored(service.id, 24))?.request_count).toBe(7);
      expect(await admitMany(b, service, 24, 2)).toBe(2);
      await b.flush();
      // Redis knows 5, the row 7: the larger stays, nothing is counted twice.
      expect((await stored(service.id, 24))?.request_count).toBe(7);
      await relay.listen();
      expect(await admitMany(a, service, 24, 1)).toBe(1);
      // Back: A's four calls made without Redis are added to it, and the row gets every call once.
      await until(async () => {
        await a.flush();
        return (await stored(service.id, 24))?.request_count === 10;
      }, 'the calls counted without Redis to reach it');
      await b.flush();
      expect((await stored(service.id, 24))?.request_count).toBe(10);
    } finally {
      await dropKeys(prefix);
      await Promise.all([cut.close(), direct.close()]);
      await relay.cut();
    }
  });

  it('refuses to start with an unreachable Redis, and counts locally from the shared count when Redis goes away', async () => {
    await expect(RedisAdmission.connect('redis://127.0.0.1:1')).rejects.toThrow();

    const prefix = testPrefix();
    const redis = await RedisAdmission.connect(REDIS_URL, prefix);
    const meter = meterOf(redis);
    const service = serviceWith(5);
    expect(await admitMany(meter, service, 12, 3)).toBe(3);
    await redis.close();
    await dropKeys(prefix);
    expect(await admitMany(meter, service, 12, 10)).toBe(2);
    await meter.flush();
    expect((await stored(service.id, 12))?.request_count).toBe(5);
  });
});
