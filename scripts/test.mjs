// `npm test`: every suite, in order of speed, stopping at the first failure (its exit code is ours).
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

const steps = [
  ['lint and format', 'npx', ['biome', 'check', '.']],
  ['module boundaries and import cycles (server)', 'node', ['scripts/check-boundaries.mjs']],
  ['type check (server, web, e2e)', 'npm', ['run', 'typecheck']],
  ['unit, component and API tests (vitest: server on SQLite and PostgreSQL, contract, web)', 'npx', ['vitest', 'run']],
  ['build (console and server bundle)', 'npm', ['run', 'build']],
  ['browser tests (Playwright, Chromium, against the built server)', 'npm', ['run', 'test:e2e']],
];

const allStarted = Date.now();
for (const [name, cmd, args] of steps) {
  process.stdout.write(`\n=== ${name} ===\n`);
  const started = Date.now();
  const res = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', env: process.env });
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  if (res.status !== 0) {
    process.stdout.write(`\n=== ${name}: FAILED after ${seconds}s ===\n`);
    process.exit(res.status ?? 1);
  }
  process.stdout.write(`=== ${name}: ok in ${seconds}s ===\n`);
}
process.stdout.write(`\nAll ${steps.length} steps passed in ${((Date.now() - allStarted) / 1000).toFixed(0)}s\n`);
