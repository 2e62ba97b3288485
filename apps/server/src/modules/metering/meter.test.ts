import { copyFileSync, mkdtempSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../../../test/gateway/clients.js';
import { createTestApp, engines, type TestApp } from '../../../test/harness.js';
import { openDatabase } from '../../db/db.js';
import type { Database } from '../../db/schema.js';
import type { ServiceSpec } from '../../gateway/catalog.js';
import { dayIn } from '../../infra/day.js';
import { Folder } from './fold.js';
import { readSegments } from './journal-read.js';
import { DbMeter } from './meter.js';
import { counterKey, emptySegment } from './segment.js';
import { SharedCounts } from './shared-count.js';

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
  const dirs: string[] = [];
  const freshDir = () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'toolport-meter-'));
    dirs.push(dir);
    return dir;
  };
  const meterOf = (redis?: SharedCounts, dataDir = freshDir(), extra: Partial<ConstructorParameters<typeof DbMeter>[0]> = {}) =>
    new DbMeter({ db: t.ctx.db, logger: t.ctx.logger, dataDir, timeZone: () => 'UTC', ...(redis ? { redis } : {}), ...extra });
  const stored = async (serviceId: number, userId: number) =>
    t.ctx.db
      .selectFrom('daily_counters')
      .selectAll()
      .where('service_id', '=', serviceId)
      .where('user_id', '=', userId)
      .where('day', '=', dayIn('UTC'))
      .executeTakeFirst();
  const records = async (serviceId: number) =>
    Number(
      (
        await t.ctx.db
          .selectFrom('request_records')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .where('service_id', '=', serviceId)
          .executeTakeFirst()
      )?.n,
    );
  const admitMany = async (meter: DbMeter, service: ServiceSpec, userId: number, n: number) =>
    (await Promise.all(Array.from({ length: n }, () => meter.admit(service, userId)))).filter((a) => a.allowed).length;
  const outcome = (serviceId: number, userId: number, n: number) => ({
    serviceId,
    userId,
    method: 'tools/call',
    target: `t${n}`,
    latencyMs: 10,
    outcome: n % 2 ? ('error' as const) : ('ok' as const),
    bytesIn: 1,
    bytesOut: 2,
  });

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

  it('has each admission in the journal file when admit returns; the bench-only deferred mode writes it at the end of the turn', async () => {
    const service = serviceWith(0);
    const line = (userId: number) => `a\t${dayIn('UTC')}|${service.id}|${userId}\t1\n`;
    const durable = meterOf();
    await durable.admit(service, 21);
    expect(readFileSync(durable.journal.current.file, 'utf8')).toContain(line(21));
    // It holds what callers asked for: readable by the server's user alone.
    expect(statSync(durable.journal.current.file).mode & 0o777).toBe(0o600);
    // Not in the database yet: the fold is the background's.
    expect(await stored(service.id, 21)).toBeUndefined();
    const deferred = meterOf(undefined, freshDir(), { deferCountWrites: true });
    await deferred.admit(service, 22);
    expect(readFileSync(deferred.journal.current.file, 'utf8')).not.toContain(line(22));
    await new Promise((resolve) => setImmediate(resolve));
    expect(readFileSync(deferred.journal.current.file, 'utf8')).toContain(line(22));
    await Promise.all([durable.flush(), deferred.flush()]);
    expect((await stored(service.id, 21))?.request_count).toBe(1);
    expect((await stored(service.id, 22))?.request_count).toBe(1);
  });

  it('folds counts, statistics and records once, however often a segment is folded', async () => {
    const service = serviceWith(0);
    const meter = meterOf();
    expect(await admitMany(meter, service, 31, 4)).toBe(4);
    for (let n = 0; n < 4; n++) meter.record(outcome(service.id, 31, n));
    meter.journal.write();
    const [segment] = readSegments(meter.journal.dir, meter.journal.run);
    if (!segment) throw new Error('no segment written');
    // A commit whose answer was lost is folded again: nothing is added twice.
    await new Folder(t.ctx.db).fold(segment);
    await new Folder(t.ctx.db).fold(segment);
    await meter.flush();
    expect(await stored(service.id, 31)).toMatchObject({ request_count: 4, error_count: 2, total_latency_ms: 40 });
    expect(await records(service.id)).toBe(4);
    // Folded segments leave the journal.
    expect(readdirSync(meter.journal.dir).filter((f) => f.endsWith('.log'))).toEqual([path.basename(meter.journal.current.file)]);
  });

  it('splits a count by run from one snapshot: a fold committed while Redis is seeded is no legacy count', async () => {
    const service = serviceWith(0);
    const parts = { day: dayIn('UTC'), serviceId: service.id, userId: 32 };
    const key = counterKey(parts.day, parts.serviceId, parts.userId);
    const segmentOf = (seq: number, count: number) => {
      const segment = emptySegment(freshDir(), 'run-a', seq);
      segment.counts.set(key, count);
      return segment;
    };
    await new Folder(t.ctx.db).fold(segmentOf(1, 10));
    // Another replica (its own connection) folds 60 more of run-a's admissions right after the seed's first query.
    const other = openDatabase(t.config);
    let folded = false;
    const seeding = t.ctx.db.withPlugin({
      transformQuery: (args) => args.node,
      transformResult: async (args) => {
        if (!folded) {
          folded = true;
          await new Folder(other.db).fold(segmentOf(2, 70));
        }
        return args.result;
      },
    });
    try {
      const runs = await new Folder(seeding).contributions(parts);
      expect(folded).toBe(true);
      // Before or after the fold, never half of each (the increase read as a legacy count Redis then kept).
      expect([...runs]).toEqual([['run-a', 10]]);
      expect([...(await new Folder(t.ctx.db).contributions(parts))]).toEqual([['run-a', 70]]);
    } finally {
      await other.db.destroy();
    }
  });

  it('folds the journal a killed run left in DATA_DIR before admitting: the limit carries on', async () => {
    const service = serviceWith(10);
    const dataDir = freshDir();
    const killed = meterOf(undefined, dataDir);
    expect(await admitMany(killed, service, 41, 6)).toBe(6);
    killed.record(outcome(service.id, 41, 0));
    killed.journal.write();
    // What a SIGKILL leaves: the run's files, its owner naming a process that is gone (here: a copy under another run).
    const dir = killed.journal.dir;
    for (const name of readdirSync(dir).filter((f) => f.startsWith(killed.journal.run))) {
      copyFileSync(path.join(dir, name), path.join(dir, name.replace(killed.journal.run, 'deadrun')));
    }
    writeFileSync(path.join(dir, 'deadrun.owner'), JSON.stringify({ host: 'elsewhere', pid: 1 }));
    const old = new Date(Date.now() - 120_000);
    utimesSync(path.join(dir, 'deadrun.owner'), old, old);
    const next = meterOf(undefined, dataDir);
    await next.start();
    expect((await stored(service.id, 41))?.request_count).toBe(6);
    expect(await records(service.id)).toBe(1);
    expect(readdirSync(dir).some((f) => f.startsWith('deadrun'))).toBe(false);
    expect(await admitMany(next, service, 41, 10)).toBe(4);
    await next.flush();
    expect((await stored(service.id, 41))?.request_count).toBe(10);
  });

  it('keeps counting while the database is away, caps the waiting records (oldest dropped, counted), and a later start folds them', async () => {
    // A meter whose database refuses connections: every fold fails, everything waits in the journal.
    const away = new Kysely<Database>({
      dialect: new PostgresDialect({
        pool: new pg.Pool({ connectionString: 'postgres://x@127.0.0.1:1/none', connectionTimeoutMillis: 500 }),
      }),
    });
    const dataDir = freshDir();
    let dropped = 0;
    const service = serviceWith(0);
    const meter = new DbMeter({
      db: away,
      logger: t.ctx.logger,
      dataDir,
      timeZone: () => 'UTC',
      maxPendingRecords: 5,
      onRecordsDropped: (n) => {
        dropped += n;
      },
    });
    for (let round = 0; round < 3; round++) {
      expect(await admitMany(meter, service, 51, 4)).toBe(4);
      for (let n = 0; n < 4; n++) meter.record({ ...outcome(service.id, 51, n), target: `round${round}` });
      await meter.flush();
    }
    expect(meter.pending.length).toBe(3);
    // 12 records waited for a cap of 5: the two oldest segments lost theirs (8), the newest kept its 4.
    expect(dropped).toBe(8);
    // A limited service never counted here cannot be admitted blind.
    await expect(meter.admit(serviceWith(3), 51)).rejects.toThrow(/not known while the database is away/);
    await meter.close();
    await away.destroy();

    const next = meterOf(undefined, dataDir);
    await next.start();
    expect(await stored(service.id, 51)).toMatchObject({ request_count: 12, error_count: 6, total_latency_ms: 120 });
    const kept = await t.ctx.db.selectFrom('request_records').select('target').where('service_id', '=', service.id).execute();
    expect(kept.map((r) => r.target)).toEqual(['round2', 'round2', 'round2', 'round2']);
  });

  it('drops request records the database refuses (counted), so that the counts and later segments still get through', async () => {
    const service = serviceWith(0);
    let dropped = 0;
    const meter = meterOf(undefined, freshDir(), {
      onRecordsDropped: (n) => {
        dropped += n;
      },
    });
    expect(await admitMany(meter, service, 61, 3)).toBe(3);
    const good = outcome(service.id, 61, 0);
    meter.record(good);
    // A row no database takes (NOT NULL): as a corrupted journal line would be.
    meter.journal.record(`${dayIn('UTC')}|${service.id}|61`, { ...meter.journal.current.records[0], method: null } as never);
    await meter.flush();
    expect(dropped).toBe(2);
    expect((await stored(service.id, 61))?.request_count).toBe(3);
    expect(meter.pending).toHaveLength(0);
    expect(await admitMany(meter, service, 61, 2)).toBe(2);
    meter.record(good);
    await meter.flush();
    expect((await stored(service.id, 61))?.request_count).toBe(5);
    expect(await records(service.id)).toBe(1);
  });

  it('with Redis, two meters (two replicas) share one exact limit, also after Redis lost the key', async () => {
    const prefix = testPrefix();
    const [r1, r2] = await Promise.all([SharedCounts.connect(REDIS_URL, prefix), SharedCounts.connect(REDIS_URL, prefix)]);
    try {
      const service = serviceWith(37);
      const a = meterOf(r1);
      const b = meterOf(r2);
      const results = await Promise.all(Array.from({ length: 200 }, (_, i) => (i % 2 ? a : b).admit(service, 11)));
      expect(results.filter((r) => r.allowed)).toHaveLength(37);
      expect(results.find((r) => !r.allowed)).toEqual({ allowed: false, count: 37, limit: 37 });
      await Promise.all([a.flush(), b.flush()]);
      expect((await stored(service.id, 11))?.request_count).toBe(37);

      // An emptied Redis is seeded from the per-run counts in the database: the count is not lost, nor doubled.
      await dropKeys(prefix);
      expect(await a.admit(service, 11)).toEqual({ allowed: false, count: 37, limit: 37 });
      expect(await b.admit(service, 11)).toEqual({ allowed: false, count: 37, limit: 37 });
    } finally {
      await dropKeys(prefix);
      await Promise.all([r1.close(), r2.close()]);
    }
  });

  it('with Redis restarted empty while the database is away, seeds the key again once the database answers', async () => {
    const prefix = testPrefix();
    const redis = await SharedCounts.connect(REDIS_URL, prefix);
    try {
      const service = serviceWith(8);
      const parts = { day: dayIn('UTC'), serviceId: service.id, userId: 33 };
      // An earlier start of the gateway counted 5 today; only the database remembers them.
      const earlier = emptySegment(freshDir(), 'earlier-run', 1);
      earlier.counts.set(counterKey(parts.day, parts.serviceId, parts.userId), 5);
      await new Folder(t.ctx.db).fold(earlier);
      // This replica's database refuses every query while `down`.
      let down = true;
      const flaky = t.ctx.db.withPlugin({
        transformQuery: (args) => {
          if (down) throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
          return args.node;
        },
        transformResult: async (args) => args.result,
      });
      const meter = new DbMeter({ db: flaky, logger: t.ctx.logger, dataDir: freshDir(), timeZone: () => 'UTC', redis });
      // Redis has no key: seeded from this run's own count alone, the earlier start's 5 unknown for now.
      expect(await admitMany(meter, service, 33, 3)).toBe(3);
      down = false;
      await meter.flush();
      // Seeded again from the database: 5 + 3 is the limit of 8.
      expect(await meter.admit(service, 33)).toEqual({ allowed: false, count: 8, limit: 8 });
      await meter.flush();
      expect((await stored(service.id, 33))?.request_count).toBe(8);
      await meter.close();
    } finally {
      await dropKeys(prefix);
      await redis.close();
    }
  });

  it('with Redis, a restart on a killed run’s DATA_DIR takes back what Redis admitted after its last journal line', async () => {
    const prefix = testPrefix();
    const [r1, r2] = await Promise.all([SharedCounts.connect(REDIS_URL, prefix), SharedCounts.connect(REDIS_URL, prefix)]);
    try {
      const service = serviceWith(10);
      const dataDir = freshDir();
      const killed = meterOf(undefined, dataDir);
      expect(await admitMany(killed, service, 42, 6)).toBe(6);
      killed.journal.write();
      const dir = killed.journal.dir;
      for (const name of readdirSync(dir).filter((f) => f.startsWith(killed.journal.run))) {
        copyFileSync(path.join(dir, name), path.join(dir, name.replace(killed.journal.run, 'deadrun2')));
      }
      writeFileSync(path.join(dir, 'deadrun2.owner'), JSON.stringify({ host: 'elsewhere', pid: 1 }));
      const old = new Date(Date.now() - 120_000);
      utimesSync(path.join(dir, 'deadrun2.owner'), old, old);
      // Redis admitted that run eight calls: the six of its journal, and two it was killed before writing down
      // (the journal comes before the call goes on, so those two never reached a tool server).
      const key = `${dayIn('UTC')}|${service.id}|42`;
      await r1.raise(key, new Map([['deadrun2', 0]]), true);
      for (let mine = 0; mine < 8; mine++) expect((await r1.admit(key, 'deadrun2', mine, 10)).status).toBe('admitted');
      expect(await r1.countsOf('deadrun2')).toEqual(new Map([[key, 8]]));

      const next = meterOf(r2, dataDir);
      await next.start();
      expect((await stored(service.id, 42))?.request_count).toBe(6);
      // The limit carries on from the six that happened, in Redis as in the database, and the run is forgotten.
      expect(await r2.countsOf('deadrun2')).toEqual(new Map());
      expect(await admitMany(next, service, 42, 10)).toBe(4);
      await next.flush();
      expect((await stored(service.id, 42))?.request_count).toBe(10);
    } finally {
      await dropKeys(prefix);
      await Promise.all([r1.close(), r2.close()]);
    }
  });

  it('with Redis, writes the counts of a replica that died without folding them through a survivor, once', async () => {
    const prefix = testPrefix();
    const [r1, r2] = await Promise.all([SharedCounts.connect(REDIS_URL, prefix), SharedCounts.connect(REDIS_URL, prefix)]);
    const cleaner = createClient({ url: REDIS_URL });
    await cleaner.connect();
    try {
      const service = serviceWith(0);
      const killed = meterOf(r1);
      const survivor = meterOf(r2);
      await r1.heartbeat(killed.journal.run);
      expect(await admitMany(killed, service, 21, 10)).toBe(10);
      expect(await admitMany(killed, service, 22, 4)).toBe(4);
      expect(await admitMany(survivor, service, 21, 5)).toBe(5);
      await survivor.flush();
      // The killed run is still alive for Redis: the survivor leaves its counts alone.
      expect((await stored(service.id, 21))?.request_count).toBe(5);
      expect(await stored(service.id, 22)).toBeUndefined();
      // Its heartbeat stops (what 15 s without one would do).
      await cleaner.del(`${prefix}alive:${killed.journal.run}`);
      await survivor.flush();
      expect((await stored(service.id, 21))?.request_count).toBe(15);
      expect((await stored(service.id, 22))?.request_count).toBe(4);
      // Its own journal folded later (a restart on its DATA_DIR) adds nothing: counts are raised, not added.
      await killed.flush();
      await survivor.flush();
      expect((await stored(service.id, 21))?.request_count).toBe(15);
      expect((await stored(service.id, 22))?.request_count).toBe(4);
    } finally {
      await cleaner.close();
      await dropKeys(prefix);
      await Promise.all([r1.close(), r2.close()]);
    }
  });

  it('with Redis away from one replica, counts its calls once, in Redis and in the database', async () => {
    const prefix = testPrefix();
    const relay = new CuttableRelay(new URL(REDIS_URL));
    await relay.listen();
    const [cut, direct] = await Promise.all([
      SharedCounts.connect(`redis://127.0.0.1:${relay.port}`, prefix),
      SharedCounts.connect(REDIS_URL, prefix),
    ]);
    try {
      const service = serviceWith(0);
      const limited = { ...serviceWith(0), id: service.id, rpdLimit: 10 };
      const a = meterOf(cut);
      const b = meterOf(direct);
      expect(await admitMany(a, service, 24, 3)).toBe(3);
      await relay.cut();
      // A counts on from the shared count it saw; B still reaches Redis.
      expect(await admitMany(a, service, 24, 4)).toBe(4);
      expect(await admitMany(b, service, 24, 2)).toBe(2);
      await Promise.all([a.flush(), b.flush()]);
      expect((await stored(service.id, 24))?.request_count).toBe(9);
      await relay.listen();
      // Back: A's next round raises its field to everything it counted, once: 3 + 4 + 2 = 9, and one more is the 10th.
      await until(() => cut.ready, 'Redis to be back');
      await a.flush();
      expect(await b.admit(limited, 24)).toEqual({ allowed: true });
      expect(await b.admit(limited, 24)).toEqual({ allowed: false, count: 10, limit: 10 });
      expect(await a.admit(limited, 24)).toEqual({ allowed: false, count: 10, limit: 10 });
      await Promise.all([a.flush(), b.flush()]);
      expect((await stored(service.id, 24))?.request_count).toBe(10);
    } finally {
      await dropKeys(prefix);
      await Promise.all([cut.close(), direct.close()]);
      await relay.cut();
    }
  });

  it('refuses to start with an unreachable Redis, and counts locally from the shared count when Redis goes away', async () => {
    await expect(SharedCounts.connect('redis://127.0.0.1:1')).rejects.toThrow();

    const prefix = testPrefix();
    const redis = await SharedCounts.connect(REDIS_URL, prefix);
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
