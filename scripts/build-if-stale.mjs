// Rebuilds the console and the server bundle when any of their sources is newer than the build output.
// Modification times decide (directories count too, so a deleted file is noticed): no build tool needed,
// and with nothing changed the check takes milliseconds. `npm start` and the e2e setup call it;
// `node scripts/build-if-stale.mjs` runs it alone.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const root = fileURLToPath(new URL('..', import.meta.url));

const targets = [
  {
    workspace: '@toolport/web',
    output: 'apps/web/dist/index.html',
    inputs: [
      'apps/web/src',
      'apps/web/public',
      'apps/web/index.html',
      'apps/web/vite.config.ts',
      'apps/web/package.json',
      'packages/contract/src',
    ],
  },
  {
    workspace: '@toolport/server',
    output: 'apps/server/dist/main.js',
    // The root package.json gives the bundle its version; the server's lists what stays external.
    inputs: ['apps/server/src', 'apps/server/build.mjs', 'apps/server/package.json', 'packages/contract/src', 'package.json'],
  },
];

const isTest = (name) => /\.test\.tsx?$/.test(name);

/** Newest mtime (ms) of a file, or of a directory and everything under it; 0 when it does not exist. */
export function newestMtime(target) {
  let stat;
  try {
    stat = statSync(target);
  } catch {
    return 0;
  }
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of readdirSync(target, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || isTest(entry.name)) continue;
    newest = Math.max(newest, newestMtime(path.join(target, entry.name)));
  }
  return newest;
}

/** Why a target must be built, or undefined when its output is newer than every input. */
function staleReason(target) {
  const built = newestMtime(path.join(root, target.output));
  if (!built) return `${target.output} is missing`;
  const changed = target.inputs.find((input) => newestMtime(path.join(root, input)) > built);
  return changed ? `${changed} changed since the last build` : undefined;
}

/** Builds every stale target in order; exits the process when a build fails. Returns what it built. */
export function buildIfStale() {
  const built = [];
  for (const target of targets) {
    const reason = staleReason(target);
    if (!reason) continue;
    process.stdout.write(`toolport: building ${target.workspace} (${reason})\n`);
    const started = Date.now();
    const res = spawnSync('npm', ['run', 'build', '-w', target.workspace], { cwd: root, stdio: 'inherit' });
    if (res.status !== 0) {
      process.stderr.write(`toolport: building ${target.workspace} failed\n`);
      process.exit(res.status ?? 1);
    }
    process.stdout.write(`toolport: built ${target.workspace} in ${((Date.now() - started) / 1000).toFixed(1)}s\n`);
    built.push(target.workspace);
  }
  return built;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) buildIfStale();
