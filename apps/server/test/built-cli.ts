import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The shipped server, `apps/server/dist/main.js`, run as a child process: what operators and the
 * README start. Tests that need it call `ensureBuiltCli()` in a beforeAll.
 */
const serverDir = fileURLToPath(new URL('..', import.meta.url));
const repoRoot = path.resolve(serverDir, '../..');
export const cliBundle = path.join(serverDir, 'dist', 'main.js');

/** A guard against a child that hangs, not a performance limit: a start took 25 s on a loaded 2-core machine. */
const EXIT_GUARD_MS = 60_000;
const STALE_LOCK_MS = 60_000;

/** Newest mtime of a file or a tree; a directory's own counts too, so a deleted file is noticed. Tests do not count. */
function newestMtime(entry: string): number {
  const stat = statSync(entry);
  if (!stat.isDirectory()) return stat.mtimeMs;
  const children = readdirSync(entry).filter((name) => !/\.test\.ts$/.test(name));
  return Math.max(stat.mtimeMs, ...children.map((name) => newestMtime(path.join(entry, name))));
}

const isStale = () =>
  !existsSync(cliBundle) ||
  statSync(cliBundle).mtimeMs <
    Math.max(
      ...[
        path.join(serverDir, 'src'),
        path.join(serverDir, 'build.mjs'),
        path.join(serverDir, 'package.json'),
        path.join(repoRoot, 'packages/contract/src'),
        // The bundle's version comes from the root package.json.
        path.join(repoRoot, 'package.json'),
      ].map(newestMtime),
    );

/** Builds the bundle when it is missing or older than its sources. Test files running in parallel take turns. */
export async function ensureBuiltCli(): Promise<void> {
  const lock = path.join(serverDir, 'dist', '.test-build-lock');
  mkdirSync(path.dirname(lock), { recursive: true });
  for (;;) {
    if (!isStale()) return;
    try {
      mkdirSync(lock);
    } catch {
      // A build takes about a second: an older lock was left by a run that died while building.
      const lockedAt = statSync(lock, { throwIfNoEntry: false })?.mtimeMs;
      if (lockedAt !== undefined && Date.now() - lockedAt > STALE_LOCK_MS) rmSync(lock, { recursive: true, force: true });
      await new Promise((r) => setTimeout(r, 100));
      continue;
    }
    try {
      if (isStale()) execFileSync(process.execPath, [path.join(serverDir, 'build.mjs')], { stdio: 'pipe' });
      return;
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
  }
}

export interface CliRun {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** Resolves with the exit code (or signal name) once the process has exited. */
  exited: Promise<number | string>;
}

/** Starts `node dist/main.js <args>` with only PATH and HOME inherited, plus `env`. */
export function runCli(args: string[], env: Record<string, string>): CliRun {
  const child = spawn(process.execPath, [cliBundle, ...args], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout?.on('data', (d) => {
    out += d;
  });
  child.stderr?.on('data', (d) => {
    err += d;
  });
  const exited = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  return { child, stdout: () => out, stderr: () => err, exited };
}

/** The exit code, or a failure when the process is still running after the guard. */
export async function exitOf(run: CliRun): Promise<number | string> {
  let timer: NodeJS.Timeout | undefined;
  const guard = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      run.child.kill('SIGKILL');
      reject(new Error(`process did not exit; stderr: ${run.stderr()}`));
    }, EXIT_GUARD_MS);
  });
  try {
    return await Promise.race([run.exited, guard]);
  } finally {
    clearTimeout(timer);
  }
}

/** Polls GET /api/ready until it answers 200; fails when the process exits first or the guard passes. */
export async function waitUntilReady(run: CliRun, port: number): Promise<void> {
  let exited = false;
  void run.exited.then(() => {
    exited = true;
  });
  const deadline = Date.now() + EXIT_GUARD_MS;
  while (Date.now() < deadline) {
    if (exited) throw new Error(`server exited before it was ready; stderr: ${run.stderr()}`);
    const status = await fetch(`http://127.0.0.1:${port}/api/ready`).then(
      (r) => r.status,
      () => 0,
    );
    if (status === 200) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`server on port ${port} was not ready; stderr: ${run.stderr()}`);
}

/** A TCP port that was free a moment ago. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (!address || typeof address === 'string') throw new Error('no port');
  return address.port;
}
