/**
 * Cluster benchmark (issue 9, "Several replicas"); not part of `npm test`. Run from the repository root:
 *
 *   npx tsx bench/cluster.bench.ts             # or: npm run cluster -w @toolport/bench
 *   BENCH_SECONDS=3 npx tsx bench/cluster.bench.ts
 *
 * In one run, with the built server (`node apps/server/dist/main.js start`, rebuilt when older than
 * its sources) on a fresh PostgreSQL database, started by the cluster suite's kit
 * (apps/server/test/cluster/cluster-kit.ts):
 *
 * 1. Throughput of `tools/call echo` through the kit's round-robin balancer in front of three replicas
 *    (PostgreSQL + Redis) versus the same balancer in front of one replica (PostgreSQL + Redis): the
 *    same closed-loop load of lean sessions (bench/lean-client.ts) for each.
 * 2. The latency a counted call gains from Redis-backed metering: sequential calls straight to one
 *    replica with REDIS_URL versus one without (in-process counters), both on PostgreSQL.
 *
 * Nothing is pinned: the load generator, the balancer, the replicas, their server-everything processes,
 * PostgreSQL and Redis share this machine's cores, as they would on one host. See docs/performance.md.
 */
import http from 'node:http';
import { cpus, loadavg } from 'node:os';
import { SharedCounts } from '../apps/server/src/modules/metering/shared-count.js';
import { type Cluster, dropRedisKeys, REDIS_URL, startCluster, upstreamsOf } from '../apps/server/test/cluster/cluster-kit.js';
import { everythingEntry } from '../apps/server/test/gateway/gateway-harness.js';
import { type LeanSession, openLeanSession } from './lean-client.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const SESSIONS = (process.env.BENCH_SESSIONS ?? '10,50').split(',').map(Number);
const SEQUENTIAL_CALLS = Number(process.env.BENCH_SEQUENTIAL ?? 2000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const WARMUP_SECONDS = 3;
const WARMUP_CALLS = 500;

const log = (line: string) => process.stderr.write(`${line}\n`);
const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;

/** The cluster with server-everything installed as a stdio service (running on every replica) and an API key. */
/** Every cluster started, so a failed run still stops its replicas and drops its databases. */
const started = new Set<Cluster>();

async function prepared(replicas: number, redis: boolean): Promise<{ cluster: Cluster; key: string }> {
  // The abuse limits (new sessions a minute, calls in flight per service) are for clients, not for a load generator.
  const cluster = await startCluster({
    replicas,
    redis,
    env: { LOG_LEVEL: 'warn', PROXY_NEW_SESSIONS_PER_MINUTE: '100000', PROXY_MAX_CALLS_IN_FLIGHT: '10000' },
  });
  started.add(cluster);
  const token = await cluster.rootToken();
  const created = await cluster.call<{ service_id: number; task_id: string }>('POST', '/api/mcp_market/custom_service', {
    token,
    body: { name: 'everything', type: 'stdio', command: `${process.execPath} ${everythingEntry} stdio` },
  });
  for (let i = 0; ; i += 1) {
    const status = await cluster.call<{ status: string; error_message: string }>(
      'GET',
      `/api/mcp_market/install_status/${created.task_id}`,
      {
        token,
      },
    );
    if (status.status === 'completed') break;
    if (status.status === 'failed' || i > 600) throw new Error(`install failed: ${status.error_message}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  while (!cluster.replicas.every((r) => upstreamsOf(r, created.service_id).length > 0)) await new Promise((r) => setTimeout(r, 50));
  const key = await cluster.call<string>('GET', '/api/user/token', { token });
  cluster.balancer.track = false;
  return { cluster, key };
}

interface Throughput {
  sessions: number;
  callsPerSecond: number;
  errors: number;
  mismatches: number;
  perReplica: number[];
}

/** Closed loop: each session makes one call after another for SECONDS after 0.5 s of warm-up. */
async function throughput(cluster: Cluster, key: string, n: number, seconds = SECONDS): Promise<Throughput> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: n });
  const endpoint = `${cluster.url}/proxy/everything/mcp`;
  const sessions: LeanSession[] = await Promise.all(Array.from({ length: n }, () => openLeanSession(endpoint, key, agent)));
  let calls = 0;
  let errors = 0;
  let mismatches = 0;
  const warmupEnd = Date.now() + 500;
  let started = 0;
  let end = 0;
  let before: number[] = [];
  await Promise.all(
    sessions.map(async (s, k) => {
      for (let i = 0; ; i += 1) {
        const now = Date.now();
        if (end !== 0 && now >= end) return;
        if (end === 0 && now >= warmupEnd) {
          started = now;
          end = now + seconds * 1000;
          before = [...cluster.balancer.served];
        }
        try {
          const outcome = await s.call(`s${k}-c${i}`);
          if (end !== 0) {
            calls += 1;
            if (outcome === 'mismatch') mismatches += 1;
          }
        } catch (err) {
          if (end !== 0) {
            errors += 1;
            if (errors === 1) log(`first error: ${err instanceof Error ? err.message : String(err)}`);
          }
        }
      }
    }),
  );
  const perReplica = cluster.balancer.since(before);
  await Promise.all(sessions.map((s) => s.close()));
  agent.destroy();
  return { sessions: n, callsPerSecond: calls / ((end - started) / 1000), errors, mismatches, perReplica };
}

/** A session straight to the first replica, for sequential counted calls, warmed up. */
async function sequentialSession(
  cluster: Cluster,
  key: string,
): Promise<{ call: (m: string) => Promise<number>; close: () => Promise<void> }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const session = await openLeanSession(`${cluster.replicas[0]?.url}/proxy/everything/mcp`, key, agent);
  for (let i = 0; i < WARMUP_CALLS; i += 1) await session.call(`warm ${i}`);
  return {
    async call(message) {
      const t0 = performance.now();
      if ((await session.call(message)) !== 'ok') throw new Error(`mismatched answer to ${message}`);
      return performance.now() - t0;
    },
    async close() {
      await session.close();
      agent.destroy();
    },
  };
}

interface Latency {
  p50: number;
  p90: number;
  p99: number;
  mean: number;
}

function latencyOf(times: number[]): Latency {
  const mean = times.reduce((x, y) => x + y, 0) / times.length;
  const sorted = [...times].sort((x, y) => x - y);
  return { p50: percentile(sorted, 50), p90: percentile(sorted, 90), p99: percentile(sorted, 99), mean };
}

/** The run with the median throughput (errors and spread of that run shown with it). */
const pickMedian = (runs: Throughput[]) =>
  [...runs].sort((x, y) => x.callsPerSecond - y.callsPerSecond)[Math.floor(runs.length / 2)] as Throughput;

const row = (cells: (string | number)[]) => `| ${cells.join(' | ')} |`;
const f2 = (v: number) => v.toFixed(2);
const f3 = (v: number) => v.toFixed(3);

async function main(): Promise<void> {
  const report: string[] = [];

  // All three up at once, measured in alternation, so a change in the machine's load hits each alike.
  log('starting: one replica (PostgreSQL + Redis), three replicas (PostgreSQL + Redis), one replica without Redis …');
  const single = await prepared(1, true);
  const triple = await prepared(3, true);
  const local = await prepared(1, false);

  log('throughput …');
  // Every target warmed alike (JIT, pools, upstream processes) before anything is timed.
  for (const target of [single, triple, local]) await throughput(target.cluster, target.key, Math.max(...SESSIONS), WARMUP_SECONDS);
  const oneRuns = new Map<number, Throughput[]>();
  const threeRuns = new Map<number, Throughput[]>();
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const n of SESSIONS) {
      const o = await throughput(single.cluster, single.key, n);
      const t = await throughput(triple.cluster, triple.key, n);
      oneRuns.set(n, [...(oneRuns.get(n) ?? []), o]);
      threeRuns.set(n, [...(threeRuns.get(n) ?? []), t]);
      log(`  round ${round + 1}, ${n} sessions: ${Math.round(o.callsPerSecond)} vs ${Math.round(t.callsPerSecond)} calls/s`);
    }
  }

  log('sequential counted calls …');
  const redisSession = await sequentialSession(single.cluster, single.key);
  const localSession = await sequentialSession(local.cluster, local.key);
  const withRedisTimes: number[] = [];
  const withoutRedisTimes: number[] = [];
  const block = Math.max(1, Math.floor(SEQUENTIAL_CALLS / 10));
  // Blocks in alternation, each side going first every other time.
  for (let done = 0, k = 0; done < SEQUENTIAL_CALLS; done += block, k += 1) {
    const sides: [typeof localSession, number[], string][] = [
      [localSession, withoutRedisTimes, 'local'],
      [redisSession, withRedisTimes, 'redis'],
    ];
    for (const [session, times, name] of k % 2 ? sides.reverse() : sides) {
      for (let i = 0; i < block; i += 1) times.push(await session.call(`${name} ${done + i}`));
    }
  }
  await redisSession.close();
  await localSession.close();
  const withRedis = latencyOf(withRedisTimes);
  const withoutRedis = latencyOf(withoutRedisTimes);

  await Promise.all([single, triple, local].map(({ cluster }) => started.delete(cluster) && cluster.close()));

  // The admission round trip by itself: what each counted call waits for in Redis (the per-run count script).
  log('admission round trips …');
  const prefix = `toolport-bench:${process.pid}:`;
  const admission = await SharedCounts.connect(REDIS_URL, prefix);
  const roundTrips: number[] = [];
  for (let i = 0; i < WARMUP_CALLS + SEQUENTIAL_CALLS; i += 1) {
    const t0 = performance.now();
    const key = `2026-01-01|1|${i % 50}`;
    if ((await admission.admit(key, 'bench', 0, 0)).status === 'missing') await admission.raise(key, new Map([['bench', 0]]), true);
    if (i >= WARMUP_CALLS) roundTrips.push(performance.now() - t0);
  }
  await admission.close();
  await dropRedisKeys(prefix);
  const roundTrip = latencyOf(roundTrips);
  const one = SESSIONS.map((n) => pickMedian(oneRuns.get(n) ?? []));
  const three = SESSIONS.map((n) => pickMedian(threeRuns.get(n) ?? []));
  const ratios = SESSIONS.map((n) => {
    const runs = oneRuns.get(n) ?? [];
    return (threeRuns.get(n) ?? []).map((t, i) => t.callsPerSecond / (runs[i]?.callsPerSecond ?? Number.NaN));
  });

  report.push(
    `Run: ${new Date().toISOString()}, Node ${process.version}, ${cpus().length} cores, nothing pinned, ${SECONDS} s per load step, ${ROUNDS} rounds (median shown), lean sessions, one API key; 1-minute load ${loadavg()[0]?.toFixed(1)} at the end.`,
  );
  report.push('');
  report.push(
    row([
      'Concurrent sessions',
      '1 replica calls/s',
      'errors',
      '3 replicas calls/s',
      'errors',
      'mismatches',
      'per replica (3)',
      'ratio',
      'ratio per round',
    ]),
  );
  report.push(row(['---:', '---:', '---:', '---:', '---:', '---:', '---', '---:', '---']));
  for (const [i, o] of one.entries()) {
    const t = three[i] as Throughput;
    report.push(
      row([
        o.sessions,
        Math.round(o.callsPerSecond),
        o.errors,
        Math.round(t.callsPerSecond),
        t.errors,
        o.mismatches + t.mismatches,
        t.perReplica.join(' / '),
        `${f2(t.callsPerSecond / o.callsPerSecond)}x`,
        (ratios[i] ?? []).map((r) => `${f2(r)}x`).join(', '),
      ]),
    );
  }
  report.push('');
  report.push(row(['Sequential counted call, one replica, PostgreSQL', 'p50 ms', 'p90 ms', 'p99 ms', 'mean ms']));
  report.push(row(['---', '---:', '---:', '---:', '---:']));
  report.push(
    row(['in-process metering (no REDIS_URL)', f3(withoutRedis.p50), f3(withoutRedis.p90), f3(withoutRedis.p99), f3(withoutRedis.mean)]),
  );
  report.push(row(['Redis-backed metering (REDIS_URL)', f3(withRedis.p50), f3(withRedis.p90), f3(withRedis.p99), f3(withRedis.mean)]));
  report.push(
    row([
      'added by Redis',
      f3(withRedis.p50 - withoutRedis.p50),
      f3(withRedis.p90 - withoutRedis.p90),
      f3(withRedis.p99 - withoutRedis.p99),
      f3(withRedis.mean - withoutRedis.mean),
    ]),
  );
  report.push(
    row([
      'the admission script alone (bench process to Redis)',
      f3(roundTrip.p50),
      f3(roundTrip.p90),
      f3(roundTrip.p99),
      f3(roundTrip.mean),
    ]),
  );
  process.stdout.write(`${report.join('\n')}\n`);
}

try {
  await main();
} finally {
  await Promise.all([...started].map((cluster) => cluster.close().catch(() => undefined)));
}
process.exit(0);
