// `npm test`: every suite, stopping at the first failure (its exit code is ours). The checks and the build run in
// order; then the vitest suites and the browser tests run side by side: both spend much of their time waiting for
// processes and timeouts, and they share nothing (the browser tests run the built server on SQLite in a temp
// DATA_DIR on a free port, without Redis; the vitest suites make their own databases, directories and ports).
// docs/performance.md ("Test suite time") has the measurement. The first of the pair streams its output; the
// other's is held back and printed in one piece when it ends (or streamed from then on if it is still running).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { FailureLines } from './failure-lines.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));

/** Each stage's steps run side by side; the next stage starts when all of them passed. */
const stages = [
  [['lint and format', 'npx', ['biome', 'check', '.']]],
  [['module boundaries and import cycles (server and console)', 'node', ['scripts/check-boundaries.mjs']]],
  [['type check (server, web, e2e)', 'npm', ['run', 'typecheck']]],
  // Before the tests: the e2e setup and the CLI tests (apps/server/test/built-cli.ts) find the build current.
  [['build (console and server bundle)', 'npm', ['run', 'build']]],
  [
    ['unit, component and API tests (vitest: server on SQLite and PostgreSQL, contract, web)', 'npx', ['vitest', 'run']],
    ['browser tests (Playwright, Chromium, against the built server)', 'npm', ['run', 'test:e2e']],
  ],
];

const seconds = (ms) => (ms / 1000).toFixed(1);
const children = new Set();
const summary = [];

/** Runs one step; `stream` prints its output as it comes, else it is kept until the step ends or becomes the one streaming. */
function run([name, cmd, args], stream) {
  const started = Date.now();
  const held = [];
  const failures = new FailureLines();
  const step = { name, streaming: stream, flush: () => undefined };
  const out = (chunk, to) => {
    failures.push(chunk);
    return step.streaming ? to.write(chunk) : held.push([chunk, to]);
  };
  step.flush = () => {
    for (const [chunk, to] of held.splice(0)) to.write(chunk);
    step.streaming = true;
  };
  process.stdout.write(`\n=== ${name}: started${stream ? '' : ' (its output follows when the other step ends)'} ===\n`);
  const child = spawn(cmd, args, { cwd: root, env: process.env, stdio: ['inherit', 'pipe', 'pipe'] });
  children.add(child);
  child.stdout.on('data', (chunk) => out(chunk, process.stdout));
  child.stderr.on('data', (chunk) => out(chunk, process.stderr));
  step.done = new Promise((resolve) => {
    const end = (status) => {
      children.delete(child);
      resolve({ name, status, ms: Date.now() - started, failures: failures.end() });
    };
    child.on('error', (err) => {
      process.stderr.write(`${name}: ${err.message}\n`);
      end(1);
    });
    child.on('close', (code, signal) => end(code ?? (signal ? 1 : 0)));
  });
  return step;
}

/** Stops the steps still running when we are stopped (Ctrl-C, a CI timeout). */
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    for (const child of children) child.kill(signal);
    process.exit(signal === 'SIGINT' ? 130 : 143);
  });
}

const verdict = (r) => `=== ${r.name}: ${r.status === 0 ? 'ok' : `FAILED (exit ${r.status})`} in ${seconds(r.ms)}s ===\n`;

const allStarted = Date.now();
let failure;
for (const stage of stages) {
  const steps = stage.map((s, i) => run(s, i === 0));
  const pending = new Map(steps.map((s) => [s, s.done.then((result) => ({ s, result }))]));
  /** Steps that ended while another one was streaming: printed, in one piece each, when that one ends. */
  const endedHeld = [];
  while (pending.size > 0) {
    const { s, result } = await Promise.race(pending.values());
    pending.delete(s);
    summary.push(result);
    // The first failure in time decides the exit code, whichever output is printed first.
    if (result.status !== 0 && !failure) failure = result;
    if (!s.streaming) {
      endedHeld.push({ s, result });
      continue;
    }
    process.stdout.write(verdict(result));
    for (const held of endedHeld.splice(0)) {
      process.stdout.write(`\n=== ${held.result.name}: its output ===\n`);
      held.s.flush();
      process.stdout.write(verdict(held.result));
    }
    // The next step still running streams from now on, after what it printed so far.
    const next = [...pending.keys()][0];
    if (next) {
      process.stdout.write(`\n=== ${next.name}: its output so far ===\n`);
      next.flush();
    }
  }
  if (failure) break;
}

process.stdout.write('\n=== Summary ===\n');
const order = stages.flat().map(([name]) => name);
summary.sort((a, b) => order.indexOf(a.name) - order.indexOf(b.name));
for (const r of summary) process.stdout.write(`${r.status === 0 ? 'ok    ' : 'FAILED'} ${seconds(r.ms).padStart(7)}s  ${r.name}\n`);
const total = seconds(Date.now() - allStarted);
// The tail of a long log is what gets read: the failed tests are named again here.
for (const r of summary.filter((r) => r.status !== 0 && r.failures.length > 0)) {
  process.stdout.write(`\nFailed in ${r.name}:\n${r.failures.map((line) => `  ${line}\n`).join('')}`);
}
if (failure) {
  process.stdout.write(`\n${failure.name} failed first (exit ${failure.status}); ${summary.length} steps ran in ${total}s\n`);
  process.exit(failure.status);
}
process.stdout.write(`\nAll ${summary.length} steps passed in ${total}s\n`);
