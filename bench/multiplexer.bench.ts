/**
 * One client request through a shared link's multiplexer, in process: what every call on the legacy link pays for
 * its id rewriting, bookkeeping and answer routing, without HTTP or a tool server. Not part of `npm test`. From the
 * repository root:
 *
 *   BENCH_BEFORE=<commit> npx tsx bench/multiplexer.bench.ts
 *
 * The multiplexer at <commit> is copied beside the current one (its relative imports then resolve to this tree's
 * log-levels.ts and subscriptions.ts) and both are timed in alternating rounds: 100,000 `tools/call` request and
 * answer pairs of two sessions of two users per round, BENCH_ROUNDS rounds (default 30), the median ns per call of
 * each and after/before. BENCH_BEFORE=HEAD measures the tree against itself: the noise of the machine.
 * The current side goes through `forSharedUpstream` as a link several users share does (decision 0042).
 * See docs/performance.md.
 */

import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { forSharedUpstream } from '../apps/server/src/gateway/upstream/handshake.js';
import { Multiplexer } from '../apps/server/src/gateway/upstream/multiplexer.js';

const BEFORE = process.env.BENCH_BEFORE ?? '';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 30);
const CALLS = 100_000;
const root = path.resolve(import.meta.dirname, '..');
const MUX = 'apps/server/src/gateway/upstream/multiplexer.ts';

if (!BEFORE) throw new Error('set BENCH_BEFORE to the commit to compare with');

type Mux = Pick<Multiplexer, 'request' | 'receive'>;
type MuxClass = new (host: ConstructorParameters<typeof Multiplexer>[0]) => Mux;

/** A loop of `n` calls through a multiplexer whose upstream answers each at once. */
function loop(Kind: MuxClass, shape: boolean): (n: number) => void {
  const mux: Mux = new Kind({
    mode: 'shared',
    transmit: (pending) => mux.receive({ jsonrpc: '2.0', id: pending.upstreamId, result: { content: [] } }),
    post: () => undefined,
    serverRequest: () => undefined,
    serverCancelled: () => undefined,
    callTimeoutMs: () => 300_000,
    logUnrouted: () => undefined,
    touch: () => undefined,
  });
  const sessions = [1, 2].map((userId) => ({ id: `s${userId}`, userId, protocolVersion: '2025-11-25', notify: () => undefined }));
  let answered = 0;
  const sink = {
    notification: () => undefined,
    response: () => {
      answered += 1;
    },
  };
  return (n) => {
    for (let i = 0; i < n; i++) {
      const request = { jsonrpc: '2.0' as const, id: i, method: 'tools/call', params: { name: 'echo', arguments: { message: 'x' } } };
      mux.request(sessions[i & 1] as (typeof sessions)[0], (shape ? forSharedUpstream(request) : request) ?? request, sink);
    }
    if (answered !== n) throw new Error(`answered ${answered} of ${n}`);
    answered = 0;
  };
}

const copy = path.join(root, MUX.replace(/\.ts$/, `.before-${process.pid}.ts`));
writeFileSync(copy, execFileSync('git', ['show', `${BEFORE}:${MUX}`], { cwd: root }));
try {
  const before = (await import(copy)) as { Multiplexer: MuxClass };
  const sides = { before: loop(before.Multiplexer, false), after: loop(Multiplexer, true) };
  const times: Record<keyof typeof sides, number[]> = { before: [], after: [] };
  for (const run of Object.values(sides)) run(20_000);
  const load = loadavg().map((l) => l.toFixed(1));
  for (let round = 0; round < ROUNDS; round++) {
    const order = (round % 2 ? ['after', 'before'] : ['before', 'after']) as (keyof typeof sides)[];
    for (const side of order) {
      const started = process.hrtime.bigint();
      sides[side](CALLS);
      times[side].push(Number(process.hrtime.bigint() - started) / CALLS);
    }
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1] as number;
  const [b, a] = [median(times.before), median(times.after)];
  console.log(
    `load average ${load.join(' ')} at the start, ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')} at the end`,
  );
  console.log(`| before (${BEFORE}) ns/call | after ns/call | after / before |`);
  console.log(`| ${b.toFixed(0)} | ${a.toFixed(0)} | ${(a / b).toFixed(3)} |`);
} finally {
  rmSync(copy, { force: true });
}
