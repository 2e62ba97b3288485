/**
 * What the process census costs (decision 0045): one scan of /proc a second for the whole gateway, with 1, 10
 * and 50 stdio services of three processes each (a leader, a same-group child and a `setsid` child), among the
 * machine's own processes plus 300 more that are not ours. Measured in the same run: the pass the memory watch
 * made before (every process's stat and every group member's status read whole, every 2 s), as the baseline.
 * Linux only; not part of `npm test`.
 *
 *   npx tsx bench/census.bench.ts
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { listPids } from '../apps/server/src/gateway/upstream/proc.js';
import { census } from '../apps/server/src/gateway/upstream/process-census.js';
import { type SpawnedGroup, spawnGroup, stopGroup } from '../apps/server/src/gateway/upstream/process-group.js';

const SCANS = Number(process.env.BENCH_SCANS ?? 50);
const FOREIGN = Number(process.env.BENCH_FOREIGN ?? 300);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The memory watch's pass before decision 0045 (memory-watch.ts `rssByGroup`), for the baseline. */
function rssByGroupBefore(groups: ReadonlySet<number>): Map<number, number> {
  const sums = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (entry.charCodeAt(0) > 57) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const pgid = Number(fields[2]);
      if (!groups.has(pgid) || fields[0] === 'Z') continue;
      const kb = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${entry}/status`, 'utf8'))?.[1];
      if (kb) sums.set(pgid, (sums.get(pgid) ?? 0) + Number(kb) * 1024);
    } catch {
      // Ended meanwhile.
    }
  }
  return sums;
}

/** Milliseconds per call of `fn`, the median of `SCANS` calls. */
function median(fn: () => void): number {
  const times: number[] = [];
  for (let i = 0; i < SCANS; i++) {
    const start = process.hrtime.bigint();
    fn();
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)] as number;
}

async function main(): Promise<void> {
  const foreign: ChildProcess[] = [];
  for (let i = 0; i < FOREIGN; i++) foreign.push(spawn('sleep', ['1000'], { stdio: 'ignore' }));
  const groups: SpawnedGroup[] = [];
  const family = 'sleep 1000 & setsid sleep 1000 & exec sleep 1000';
  console.log(`processes on the machine at the start: ${listPids().length}`);
  let cold: number | undefined;
  console.log('services  processes  counted  cold scan (ms)  scan (ms)  before (ms)  scan CPU at 1/s  before CPU at 1/2s');
  try {
    for (const services of [1, 10, 50]) {
      while (groups.length < services) groups.push(await spawnGroup('/bin/sh', ['-c', family], '/tmp', { PATH: process.env.PATH ?? '' }));
      if (cold === undefined) await sleep(100);
      else await sleep(500);
      // The first scan knows no process yet and reads the environment of every one: what the first service's start costs.
      if (cold === undefined) cold = time(() => census.scan());
      const scan = median(() => census.scan());
      const counted = groups.reduce((n, g) => n + census.pids(g.instance).length, 0);
      const before = median(() => rssByGroupBefore(new Set(groups.map((g) => g.pid))));
      console.log(
        [
          String(services).padStart(8),
          String(listPids().length).padStart(10),
          String(counted).padStart(8),
          (services === 1 ? (cold ?? 0).toFixed(2) : '').padStart(16),
          scan.toFixed(2).padStart(10),
          before.toFixed(2).padStart(12),
          `${(scan / 10).toFixed(2)} %`.padStart(16),
          `${(before / 20).toFixed(2)} %`.padStart(19),
        ].join(' '),
      );
    }
  } finally {
    await Promise.all(groups.map((g) => stopGroup(g, 500)));
    for (const child of foreign) child.kill('SIGKILL');
  }
}

function time(fn: () => void): number {
  const start = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

await main();
