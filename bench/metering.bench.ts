/**
 * Cost of crash-durable metering (issue 14, item 3; decisions 0021 and 0043); not part of `npm test`. From the
 * repository root:
 *
 *   npx tsx bench/metering.bench.ts                       # deferred vs durable count writes, this tree
 *   BENCH_ROUNDS=5 BENCH_SECONDS=10 npx tsx bench/metering.bench.ts
 *   BENCH_BEFORE=<commit> npx tsx bench/metering.bench.ts # this tree against the gateway at <commit>
 *
 * By default both sides are this tree's gateway (the real app on SQLite, server-everything over stdio,
 * every call metered, bench/gateway-target.ts): `before` with METER_COUNT_WRITES=deferred (an admission's
 * journal line written at the end of the event-loop turn), `after` with the default durable writes (the
 * line appended before the call goes upstream, decision 0043); both fold into the database once a second
 * in the background. With BENCH_BEFORE the
 * `before` side is the gateway at that commit instead, extracted into the temporary directory (`git
 * archive`; it resolves its dependencies through a link to this checkout's node_modules). Before and after
 * alternate in the same run so that both meet the same machine load: sequential `tools/call echo` p50 over
 * one keep-alive socket, the gateway's CPU time per call with one session calling as fast as it can, and
 * calls per second at 10 and 50 sessions. The report gives the median over the rounds, the after/before
 * ratio, every round's figures, and the load average at the start and the end.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { Journal } from '../apps/server/src/modules/metering/journal.js';
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

async function callsPerSecond(endpoint: string, keys: string[], n: number): Promise<{ rate: number; calls: number }> {
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
  return { rate: calls / ((end - started) / 1000), calls };
}

interface Figures {
  p50: number;
  /** Gateway CPU milliseconds per call, one session. */
  cpu1: number;
  c10: number;
  c50: number;
}

/** User and system CPU time of a process so far, in milliseconds (clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are the 14th and 15th fields of the line: the 12th and 13th after the command.
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Calls per second of `n` sessions, and the gateway's CPU time per call meanwhile. */
async function loadStep(endpoint: string, keys: string[], n: number, pid: number): Promise<{ rate: number; cpuPerCall: number }> {
  const cpu = cpuMs(pid);
  const { rate, calls } = await callsPerSecond(endpoint, keys, n);
  return { rate, cpuPerCall: (cpuMs(pid) - cpu) / calls };
}

async function measure(script: string | undefined, env: Record<string, string> = {}): Promise<Figures> {
  const gateway = await startGateway(script, env);
  try {
    const endpoint = `${gateway.url}/proxy/everything/mcp`;
    const p50 = await sequentialP50(endpoint, gateway.keys[0] as string);
    // Warm-up calls and sessions opened are in the CPU count of both sides alike; one session: the turn is one call.
    const one = await loadStep(endpoint, gateway.keys, 1, gateway.pid);
    const c10 = (await callsPerSecond(endpoint, gateway.keys, 10)).rate;
    const c50 = (await callsPerSecond(endpoint, gateway.keys, 50)).rate;
    return { p50, cpu1: one.cpuPerCall, c10, c50 };
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
    ['gateway CPU per call, 1 session (ms)', pick('cpu1'), 4],
    ['calls/s, 10 sessions', pick('c10'), 0],
    ['calls/s, 50 sessions', pick('c50'), 0],
  ] as const;
  const lines = [
    `Metering before (${BEFORE || 'deferred count writes'}) and after (durable journal appends), median of ${ROUNDS} alternating rounds, ${SECONDS} s per load step; load average ${loadAtStart} at the start, ${load()} at the end:`,
    '',
    '| measure | before | after | after / before |',
    '| --- | ---: | ---: | ---: |',
    ...rows.map(
      ([name, v, digits]) => `| ${name} | ${v.before.toFixed(digits)} | ${v.after.toFixed(digits)} | ${(v.after / v.before).toFixed(3)} |`,
    ),
    '',
    'Per round (before → after):',
    ...runs.before.map((b, i) => {
      const a = runs.after[i] as Figures;
      return `- p50 ${b.p50.toFixed(3)} → ${a.p50.toFixed(3)} ms; CPU/call ${b.cpu1.toFixed(4)} → ${a.cpu1.toFixed(4)} ms; 10 sessions ${b.c10.toFixed(0)} → ${a.c10.toFixed(0)}; 50 sessions ${b.c50.toFixed(0)} → ${a.c50.toFixed(0)}`;
    }),
  ];
  lines.push('', `The durable step alone (this process, ${APPENDS} admissions): ${appendMicros().toFixed(2)} µs per journal append.`);
  process.stdout.write(`${lines.join('\n')}\n`);
}

const APPENDS = 50_000;

/** What the durable step itself costs: one admission line written to a journal file before returning (median of 5). */
function appendMicros(): number {
  const dir = mkdtempSync(path.join(tmpdir(), 'toolport-journal-bench-'));
  try {
    const journal = new Journal(dir);
    const runs: number[] = [];
    for (let r = 0; r < 5; r += 1) {
      const started = performance.now();
      for (let i = 0; i < APPENDS; i += 1) journal.admit(`2026-01-01|1|${i % 20}`, r * APPENDS + i + 1, true);
      runs.push(((performance.now() - started) * 1000) / APPENDS);
      journal.rotate();
    }
    journal.close();
    return median(runs);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
