import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_LEADER_TTL_MS, Leader } from '../src/infra/leader.js';
import { createLogger } from '../src/infra/logger.js';
import { RedisHub } from '../src/infra/redis.js';
import { Secrets } from '../src/infra/secrets.js';
import { HistoryRetention } from '../src/modules/history/retention.js';
import { freePort, startEverythingHttp } from './fixtures/upstream-kit.js';
import { addService } from './gateway/gateway-harness.js';
import { bearer, createPgDatabase, createTestApp, type TestApp } from './harness.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const logger = createLogger('silent');
const SIGNING_KEY = new Secrets('leader-test-secret-key-0123456789abcdef').replicaKey;
const prefix = () => `toolport-test:${process.pid}:${Math.random().toString(36).slice(2, 10)}:`;

async function until(check: () => boolean | Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A TCP relay to Redis that can be cut, as a network failure would. */
async function cuttableRedis(): Promise<{ url: string; cut: () => void; close: () => Promise<void> }> {
  const target = new URL(REDIS_URL);
  const sockets = new Set<net.Socket>();
  let open = true;
  const server = net.createServer((client) => {
    if (!open) return client.destroy();
    const upstream = net.connect(Number(target.port || 6379), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => sockets.delete(s));
    }
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `redis://127.0.0.1:${(server.address() as AddressInfo).port}`,
    cut() {
      open = false;
      for (const s of sockets) s.destroy();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

describe('leader election over Redis', () => {
  const hubs: RedisHub[] = [];
  const leaders: Leader[] = [];
  const hub = async (namespace: string, url = REDIS_URL) => {
    const h = await RedisHub.connect({ url, namespace, logger, signingKey: SIGNING_KEY });
    hubs.push(h);
    return h;
  };
  const candidates = async (n: number, ttlMs: number, namespace = prefix()) => {
    const started: Leader[] = [];
    for (let i = 0; i < n; i++) started.push(await Leader.start(await hub(namespace), { logger, ttlMs }));
    leaders.push(...started);
    return started;
  };
  const leading = (ls: Leader[]) => ls.filter((l) => l.isLeader());

  afterEach(async () => {
    await Promise.all(leaders.splice(0).map((l) => l.close()));
    await Promise.all(hubs.splice(0).map((h) => h.close()));
  });

  it('elects exactly one of three, which holds the lease under its replica id', async () => {
    const three = await candidates(3, 3000);
    expect(leading(three)).toHaveLength(1);
    const [leader] = leading(three);
    const h = hubs[three.indexOf(leader as Leader)] as RedisHub;
    expect(await h.client.get(h.key('leader'))).toBe(h.replicaId);
    // Renewals keep it where it is: several rounds later, still the same one and only one.
    await new Promise((r) => setTimeout(r, 3500));
    expect(leading(three)).toEqual([leader]);
    expect(three.every((l) => !l.uncertain)).toBe(true);
  });

  it('hands over at once when the leader stops cleanly, well before the lease would expire', async () => {
    // A one-minute lease: a takeover within seconds can only come from the release.
    const three = await candidates(3, 60_000);
    const [first] = leading(three);
    const changes: boolean[] = [];
    first?.onChange((now) => changes.push(now));
    await first?.close();
    expect(first?.isLeader()).toBe(false);
    expect(changes).toEqual([false]);
    const rest = three.filter((l) => l !== first);
    await until(() => leading(rest).length === 1, 'another replica to take over', 10_000);
    await new Promise((r) => setTimeout(r, 200));
    expect(leading(rest)).toHaveLength(1);
  });

  it('takes over after the lease expires when the leader dies without giving it up', async () => {
    const ttlMs = 900;
    const three = await candidates(3, ttlMs);
    const [dead] = leading(three);
    const rest = three.filter((l) => l !== dead);
    const taken = new Promise<boolean>((resolve) => {
      for (const l of rest) l.onChange((now) => now && resolve(true));
    });
    dead?.abandon();
    // The lease is still held by the dead one: nobody else may lead yet.
    expect(leading(rest)).toHaveLength(0);
    const h = hubs[three.indexOf(dead as Leader)] as RedisHub;
    expect(await h.client.get(h.key('leader'))).toBe(h.replicaId);
    expect(await taken).toBe(true);
    expect(leading(rest)).toHaveLength(1);
    expect(await h.client.get(h.key('leader'))).not.toBe(h.replicaId);
  });

  it('steps down at once when Redis becomes unreachable; the others take over once the lease expires', async () => {
    const namespace = prefix();
    const relay = await cuttableRedis();
    try {
      const cutOff = await Leader.start(await hub(namespace, relay.url), { logger, ttlMs: 900 });
      leaders.push(cutOff);
      const [other] = await candidates(1, 900, namespace);
      expect(cutOff.isLeader()).toBe(true);
      expect(other?.isLeader()).toBe(false);
      expect(cutOff.runs('exclusive')).toBe(true);

      relay.cut();
      await until(() => !cutOff.isLeader(), 'the cut-off leader to step down', 5000);
      // Nobody can tell who leads from there: only jobs guarded by their own locks run.
      expect(cutOff.uncertain).toBe(true);
      expect(cutOff.runs('exclusive')).toBe(false);
      expect(cutOff.runs('guarded')).toBe(true);
      await until(() => other?.isLeader() === true, 'the reachable replica to take over');
      expect(other?.uncertain).toBe(false);
      expect(cutOff.isLeader()).toBe(false);
    } finally {
      await relay.close();
    }
  });

  it('leads alone without Redis', () => {
    const solo = Leader.solo({ logger });
    expect(solo.isLeader()).toBe(true);
    expect(solo.runs('exclusive')).toBe(true);
    expect(solo.uncertain).toBe(false);
    expect(DEFAULT_LEADER_TTL_MS).toBe(15_000);
  });
});

/**
 * Three in-process replicas on one PostgreSQL database and one Redis: the remote service is
 * health-checked by the leader only, and the retention purge runs on the leader only.
 */
describe('periodic jobs on three replicas', () => {
  let database: { url: string; drop: () => Promise<void> };
  const apps: TestApp[] = [];
  let everything: { stop: () => Promise<void> };
  let counter: Server;
  /** initialize requests that reached the remote MCP server. */
  let initializes = 0;
  let token: string;

  beforeAll(async () => {
    database = await createPgDatabase();
    const env = { DATABASE_URL: database.url, REDIS_URL, REDIS_PREFIX: prefix() };
    for (let i = 0; i < 3; i++) apps.push(await createTestApp('postgres', env));
    token = await (apps[0] as TestApp).rootToken();
    const port = await freePort();
    everything = await startEverythingHttp('streamableHttp', port);
    // A counting relay in front of the real server: every request that arrives is seen here.
    counter = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        if (body.includes('"method":"initialize"')) initializes += 1;
        const up = request({ host: '127.0.0.1', port, path: req.url, method: req.method, headers: req.headers }, (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        });
        up.on('error', () => res.destroy());
        up.end(body);
      });
    });
    await new Promise<void>((resolve) => counter.listen(0, '127.0.0.1', resolve));
  }, 60_000);

  afterAll(async () => {
    await Promise.all(apps.map((t) => t.close()));
    await new Promise<void>((resolve) => counter?.close(() => resolve()));
    await everything?.stop();
    await database?.drop();
  });

  const leaderOf = () => apps.filter((t) => t.ctx.leader.isLeader());

  it('has exactly one leader, shown by the toolport_leader gauge', async () => {
    expect(leaderOf()).toHaveLength(1);
    expect(leaderOf()[0]).toBe(apps[0]);
    const gauges = await Promise.all(apps.map(async (t) => /^toolport_leader (\d)$/m.exec(await t.ctx.metrics.render())?.[1]));
    expect(gauges).toEqual(['1', '0', '0']);
  });

  it('health-checks a remote service on the leader only, and on the next leader when it stops', async () => {
    const url = `http://127.0.0.1:${(counter.address() as AddressInfo).port}/mcp`;
    const serviceId = await addService((apps[0] as TestApp).ctx, {
      name: 'remote-checked',
      type: 'streamableHttp',
      command: url,
      args: [],
    });
    const checks = apps.map(() => 0);
    apps.forEach((t, i) => {
      const record = t.ctx.catalog.recordHealth.bind(t.ctx.catalog);
      t.ctx.catalog.recordHealth = (id, ...rest) => {
        if (id === serviceId) checks[i] = (checks[i] ?? 0) + 1;
        return record(id, ...rest);
      };
    });
    const put = await (apps[1] as TestApp).app.inject({
      method: 'PUT',
      url: '/api/option/',
      headers: bearer(token),
      payload: { key: 'HealthCheckIntervalSeconds', value: 1 },
    });
    expect(put.statusCode).toBe(200);
    await until(() => initializes >= 3 && checks.some((n) => n >= 2), 'three health checks at the remote server');
    // Every round of every replica has looked at the service by now; only the leader's reached it.
    expect(checks[1]).toBe(0);
    expect(checks[2]).toBe(0);
    expect(checks[0]).toBeGreaterThanOrEqual(initializes - 1);
    const row = await (apps[0] as TestApp).ctx.db.selectFrom('services').selectAll().where('id', '=', serviceId).executeTakeFirstOrThrow();
    expect(row.health_status).toBe('healthy');

    // The leader stops: another replica leads at once and checks from then on.
    const first = apps.shift() as TestApp;
    await first.close();
    await until(() => leaderOf().length === 1, 'a new leader', 10_000);
    const next = apps.indexOf(leaderOf()[0] as TestApp) + 1;
    const other = next === 1 ? 2 : 1;
    const before = initializes;
    await until(() => initializes >= before + 2, 'health checks by the new leader');
    expect(checks[next]).toBeGreaterThan(0);
    expect(checks[other]).toBe(0);

    for (const t of apps) {
      await t.app.inject({
        method: 'PUT',
        url: '/api/option/',
        headers: bearer(token),
        payload: { key: 'HealthCheckIntervalSeconds', value: 0 },
      });
    }
  });

  it('runs the scheduled retention purge on the leader only', async () => {
    const [one] = apps as [TestApp];
    const old = Date.now() - 30 * 86_400_000;
    await one.ctx.db
      .insertInto('service_logs')
      .values(
        Array.from({ length: 50 }, (_, i) => ({
          created_at: old + i,
          service_id: null,
          service_name: 'x',
          phase: 'run',
          level: 'info',
          message: `old ${i}`,
        })),
      )
      .execute();
    const options = { get: (key: string) => (key === 'ServiceLogRetentionDays' ? '7' : key === 'TimeZone' ? 'UTC' : '0') };
    const batches = apps.map(() => 0);
    const jobs = apps.map(
      (t, i) =>
        new HistoryRetention(t.ctx.db, options as never, t.ctx.logger, {
          firstRunMs: 0,
          intervalMs: 50,
          pauseMs: 0,
          leader: t.ctx.leader,
          onBatch: () => {
            batches[i] = (batches[i] ?? 0) + 1;
          },
        }),
    );
    try {
      for (const job of jobs) job.start();
      const leaderIndex = apps.findIndex((t) => t.ctx.leader.isLeader());
      expect(leaderIndex).toBeGreaterThanOrEqual(0);
      // Several runs of the leader: each replica's timer has fired as often meanwhile.
      await until(() => (batches[leaderIndex] ?? 0) >= 5, 'several purge runs');
      expect(batches.filter((n, i) => i !== leaderIndex && n > 0)).toEqual([]);
      const left = await one.ctx.db
        .selectFrom('service_logs')
        .select('id')
        .where('created_at', '<', Date.now() - 7 * 86_400_000)
        .execute();
      expect(left).toEqual([]);
    } finally {
      await Promise.all(jobs.map((j) => j.close()));
    }
  });
});
