// `npm start` (docs/architecture.md §1): installs what is missing, builds what is stale, then runs the server
// in the foreground. With nothing changed it only compares modification times, so it starts in seconds.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync, utimesSync } from 'node:fs';
import { constants } from 'node:os';
import path from 'node:path';
import { buildIfStale, root } from './build-if-stale.mjs';

const at = (...parts) => path.join(root, ...parts);
const mtime = (file) => (existsSync(file) ? statSync(file).mtimeMs : 0);

/** npm writes node_modules/.package-lock.json on every install: older than the lock or a manifest means stale. */
function installReason() {
  if (!existsSync(at('node_modules'))) return 'node_modules is missing';
  const installed = mtime(at('node_modules', '.package-lock.json'));
  if (!installed) return 'node_modules was not installed by npm';
  if (mtime(at('package-lock.json')) > installed) return 'package-lock.json changed';
  const { workspaces = [] } = JSON.parse(readFileSync(at('package.json'), 'utf8'));
  const manifest = ['.', ...workspaces].map((w) => path.join(w, 'package.json')).find((m) => mtime(at(m)) > installed);
  return manifest ? `${manifest} changed` : undefined;
}

function installIfNeeded() {
  const reason = installReason();
  if (!reason) return;
  const first = !existsSync(at('node_modules'));
  process.stdout.write(
    `toolport: installing dependencies (${reason})${first ? '; the first install compiles better-sqlite3 (a minute or more)' : ''}\n`,
  );
  // node-gyp must use the system's Node headers: it cannot download them on these networks.
  const env = { ...process.env, npm_config_nodedir: process.env.npm_config_nodedir || '/usr' };
  const res = spawnSync('npm', ['install'], { cwd: root, env, stdio: 'inherit' });
  if (res.status !== 0) {
    process.stderr.write('toolport: npm install failed\n');
    process.exit(res.status ?? 1);
  }
  // An install that changed nothing may leave the marker untouched; mark this moment as installed.
  const marker = at('node_modules', '.package-lock.json');
  if (existsSync(marker)) utimesSync(marker, new Date(), new Date());
}

function runServer() {
  const env = { ...process.env, WEB_DIST_DIR: process.env.WEB_DIST_DIR || at('apps', 'web', 'dist') };
  const server = spawn(process.execPath, [at('apps', 'server', 'dist', 'main.js'), 'start'], { cwd: root, env, stdio: 'inherit' });
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.on(signal, () => server.kill(signal));
  }
  // A server killed by a signal exits like a shell reports it: 128 + the signal's number.
  server.on('exit', (code, signal) => process.exit(code ?? 128 + (constants.signals[signal] ?? 0)));
}

installIfNeeded();
buildIfStale();
runServer();
