import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

const READY_TIMEOUT_MS = 30_000;
const STOP_GRACE_MS = 10_000;

export interface RunningServer {
  url: string;
  dataDir: string;
  stop(): Promise<void>;
}

/** A port nobody listens on right now (the OS picks it). */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

const exited = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null;

async function waitForExit(child: ChildProcess, ms: number): Promise<boolean> {
  if (exited(child)) return true;
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

async function waitUntilReady(url: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (exited(child)) throw new Error(`the server exited with ${child.exitCode ?? child.signalCode} before it was ready:\n${output()}`);
    const ready = await fetch(`${url}/api/ready`).then(
      (res) => res.ok,
      () => false,
    );
    if (ready) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the server was not ready within ${READY_TIMEOUT_MS / 1000}s:\n${output()}`);
}

/**
 * Runs the built server (`node apps/server/dist/main.js start`) on SQLite in a temp DATA_DIR, on a free
 * port, and resolves once /api/ready answers. `stop` ends it and removes the directory.
 */
export async function startServer(adminPassword: string, extraEnv: Record<string, string> = {}): Promise<RunningServer> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'toolport-e2e-'));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    ADMIN_PASSWORD: adminPassword,
    WEB_DIST_DIR: path.join(repoRoot, 'apps/web/dist'),
    LOG_LEVEL: 'warn',
  };
  // The suite runs on the defaults an operator gets from `npm start`: SQLite, one replica, a generated key.
  for (const name of ['DATABASE_URL', 'REDIS_URL', 'SECRET_KEY']) delete env[name];
  // A spec that needs its own server (pointed at local fake registries or providers) adds its environment.
  Object.assign(env, extraEnv);

  const child = spawn(process.execPath, [path.join(repoRoot, 'apps/server/dist/main.js'), 'start'], {
    cwd: repoRoot,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  const keep = (chunk: Buffer) => {
    log = (log + chunk.toString()).slice(-20_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);

  const stop = async () => {
    if (!exited(child)) {
      child.kill('SIGTERM');
      if (!(await waitForExit(child, STOP_GRACE_MS))) {
        child.kill('SIGKILL');
        await waitForExit(child, STOP_GRACE_MS);
      }
    }
    rmSync(dataDir, { recursive: true, force: true });
  };

  try {
    await waitUntilReady(url, child, () => log);
  } catch (err) {
    await stop();
    throw err;
  }
  return { url, dataDir, stop };
}
