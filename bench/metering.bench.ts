/**
 * Cost of crash-durable metering (issue 14, item 3; decision 0021); not part of `npm test`. From the
 * repository root:
 *
 *   npx tsx bench/metering.bench.ts                       # deferred vs durable count writes, this tree
 *   BENCH_ROUNDS=5 BENCH_SECONDS=10 npx tsx bench/metering.bench.ts
 *   BENCH_BEFORE=<commit> npx tsx bench/metering.bench.ts # this tree against the gateway at <commit>
 *
 * By default both sides are this tree's gateway (the real app on SQLite, server-everything over stdio,
 * every call metered, bench/gateway-target.ts): `before` with METER_COUNT_WRITES=deferred (counts written
 * by the once-a-second flush, as before decision 0021), `after` with the default durable writes (each
 * event-loop turn's counts in one transaction before the calls go upstream). With BENCH_BEFORE the
 * `before` side is the gateway at that commit instead, extracted into the temporary directory (`git
 * archive`; it resolves its dependencies through a link to this checkout's node_modules). Before and after
 * alternate in the same run so that both meet the same machine load: sequential `tools/call echo` p50 over
 * one keep-alive socket, and calls per second at 10 and 50 sessions. The report gives the median over the
 * rounds, the after/before ratio, and the load average at the start and the end.
 */
import http from 'node:http';
import { loadavg } from 'node:os';
import { type LeanSession, openLeanSession } from './lean-client.js';
import { beforeTree, pinSelf, startGateway } from './targets.js';

/** A commit to compare with; unset: this tree with deferred count writes. */
const BEFORE = process.env.BENCH_BEFORE ?? '';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const SEQUENTIAL_CALLS = Number(process.env.BENCH_SEQUENTIAL ?? 2000);
const WARMUP_CALLS = 300;

async function sequentialP50(endpoint: string, key: string): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const session = await openLeanSession(endpoint, key, agent);
  for (let i = 0; i < WARMUP_CALLS; i += 1) await session.call(`warm ${i}`);
  const times: number[] = [];
  for (let i = 0; i < SEQUENTIAL_CALLS; i += 1) {
    const started = performance.now();
    if ((await session.call(`seq ${i}`)) !== 'ok') throw new Error(`mismatched answer to call ${i}`);
    times.push(performance.now() - started);
  }
  await session.close();
  agent.destroy();
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)] ?? Number.NaN;
}

async function callsPerSecond(endpoint: string, keys: string[], n: number): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: n });
  const sessions: LeanSession[] = await Promise.all(
    Array.from({ length: n }, (_, i) => openLeanSession(endpoint, keys[i % keys.length], agent)),
  );
  let calls = 0;
  const warmupEnd = Date.now() + 500;
  let started = 0;
  let end = 0;
  await Promise.all(
    sessions.map(async (s, k) => {
      for (let i = 0; ; i += 1) {
        const now = Date.now();
        if (end !== 0 && now >= end) return;
        if (end === 0 && now >= warmupEnd) {
          started = now;
          end = now + SECONDS * 1000;
        }
        if ((await s.call(`s${k}-c${i}`)) !== 'ok') throw new Error('mismatched answer');
        if (end !== 0) calls += 1;
      }
    }),
  );
  await Promise.all(sessions.map((s) => s.close()));
  agent.destroy();
  return calls / ((end - started) / 1000);
}

interface Figures {
  p50: number;
  c10: number;
  c50: number;
}

async function measure(script: string | undefined, env: Record<string, string> = {}): Promise<Figures> {
  const gateway = await startGateway(script, env);
  try {
    const endpoint = `${gateway.url}/proxy/everything/mcp`;
    const p50 = await sequentialP50(endpoint, gateway.keys[0] as string);
    const c10 = await callsPerSecond(endpoint, gateway.keys, 10);
    const c50 = await callsPerSecond(endpoint, gateway.keys, 50);
    return { p50, c10, c50 };
  } finally {
    await gateway.stop();
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;

async function main(): Promise<void> {
  pinSelf();
  const load = () =>
    loadavg()
      .map((l) => l.toFixed(1))
      .join(' ');
  const loadAtStart = load();
  const beforeScript = BEFORE ? beforeTree(BEFORE, 'meter') : undefined;
  const beforeEnv: Record<string, string> = BEFORE ? {} : { METER_COUNT_WRITES: 'deferred' };
  const runs: { before: Figures[]; after: Figures[] } = { before: [], after: [] };
  for (let round = 1; round <= ROUNDS; round += 1) {
    runs.before.push(await measure(beforeScript, beforeEnv));
    runs.after.push(await measure(undefined, { METER_COUNT_WRITES: 'durable' }));
    process.stderr.write(`round ${round}: before ${JSON.stringify(runs.before.at(-1))} after ${JSON.stringify(runs.after.at(-1))}\n`);
  }
  const pick = (k: keyof Figures) => ({ before: median(runs.before.map((f) => f[k])), after: median(runs.after.map((f) => f[k])) });
  const rows = [
    ['sequential p50 (ms)', pick('p50'), 3],
    ['calls/s, 10 sessions', pick('c10'), 0],
    ['calls/s, 50 sessions', pick('c50'), 0],
  ] as const;
  const lines = [
    `Metering before (${BEFORE || 'deferred count writes'}) and after (durable count writes), median of ${ROUNDS} alternating rounds, ${SECONDS} s per load step; load average ${loadAtStart} at the start, ${load()} at the end:`,
    '',
    '| measure | before | after | after / before |',
    '| --- | ---: | ---: | ---: |',
    ...rows.map(
      ([name, v, digits]) => `| ${name} | ${v.before.toFixed(digits)} | ${v.after.toFixed(digits)} | ${(v.after / v.before).toFixed(3)} |`,
    ),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

await main();
