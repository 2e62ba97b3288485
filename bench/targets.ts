import { type ChildProcess, execFileSync, fork, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));

export const everythingEntry = path.join(
  path.dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')),
  'dist/index.js',
);

/** `taskset -c <core>` in front of a command when taskset exists, so target and load generator do not share a core. */
export const hasTaskset = (() => {
  try {
    execFileSync('taskset', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

export const TARGET_CORE = '1';
export const LOAD_CORE = '0';

export function pinned(command: string, args: string[]): [string, string[]] {
  return hasTaskset ? ['taskset', ['-c', TARGET_CORE, command, ...args]] : [command, args];
}

/** Pins this process (the load generator) to its own core. */
export function pinSelf(): void {
  if (hasTaskset) execFileSync('taskset', ['-cp', LOAD_CORE, String(process.pid)], { stdio: 'ignore' });
}

export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });

export interface GatewayTarget {
  url: string;
  /** API keys of distinct users. */
  keys: string[];
  pid: number;
  memory(): Promise<{ rss: number; heapUsed: number; external: number; sessions: number }>;
  /** Sends `{type}` over IPC and resolves with the target's first message of the same type (search-target.ts: `changed`). */
  ask<T = unknown>(type: string): Promise<T>;
  stop(): Promise<void>;
}

/** Toolport's gateway in its own process, pinned to the target core (its stdio upstream inherits the pinning). */
/** `script`: another copy of gateway-target.ts (metering.bench.ts runs the previous meter's tree side by side). */
/** `env`: variables added to the gateway process's environment (METER_COUNT_WRITES, say). */
export async function startGateway(
  script = path.join(here, 'gateway-target.ts'),
  env: Record<string, string> = {},
): Promise<GatewayTarget> {
  const [command, args] = pinned(process.execPath, ['--expose-gc', '--import', 'tsx', script]);
  const childEnv = { ...process.env, ...env };
  // fork() needs a Node script; with taskset in front, spawn with an IPC channel instead.
  const child: ChildProcess = hasTaskset
    ? spawn(command, args, { stdio: ['ignore', 'ignore', 'inherit', 'ipc'], cwd: path.join(here, '..'), env: childEnv })
    : fork(script, [], {
        execArgv: ['--expose-gc', '--import', 'tsx'],
        stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
        env: childEnv,
      });
  const ready = await new Promise<{ url: string; keys: string[] }>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`gateway exited early (${code})`)));
    child.on('message', (m: { type: string; url: string; keys: string[] }) => {
      if (m.type === 'ready') resolve(m);
    });
  });
  const ask = <T>(type: string) =>
    new Promise<T>((resolve) => {
      const onMessage = (m: { type: string } & T) => {
        if (m.type !== type) return;
        child.off('message', onMessage);
        resolve(m);
      };
      child.on('message', onMessage);
      child.send({ type });
    });
  return {
    ...ready,
    pid: child.pid ?? 0,
    memory: () => ask('memory'),
    ask,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.send({ type: 'stop' });
      }),
  };
}

/** supergateway 4, installed on first use into bench/.cache (outside the workspace's dependencies). */
export function supergatewayEntry(): string | undefined {
  const dir = path.join(here, '.cache', 'supergateway');
  const entry = path.join(dir, 'node_modules', 'supergateway', 'dist', 'index.js');
  if (existsSync(entry)) return entry;
  try {
    execFileSync('npm', ['view', 'supergateway@4', 'version'], { stdio: 'ignore' });
  } catch {
    return undefined;
  }
  mkdirSync(dir, { recursive: true });
  execFileSync('npm', ['install', '--prefix', dir, '--no-save', '--no-audit', '--no-fund', 'supergateway@4'], { stdio: 'inherit' });
  return existsSync(entry) ? entry : undefined;
}

export interface PeerTarget {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/** supergateway in front of server-everything over stdio, stateful streamable HTTP, pinned like the gateway. */
export async function startSupergateway(entry: string): Promise<PeerTarget> {
  const port = await freePort();
  const stdioCommand = `${process.execPath} ${everythingEntry} stdio`;
  const [command, args] = pinned(process.execPath, [
    entry,
    '--stdio',
    stdioCommand,
    '--outputTransport',
    'streamableHttp',
    '--stateful',
    '--port',
    String(port),
    '--logLevel',
    'none',
  ]);
  const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'ignore'], detached: true });
  const url = `http://127.0.0.1:${port}/mcp`;
  for (let i = 0; i < 200; i += 1) {
    const up = await fetch(url, { method: 'GET' }).then(
      () => true,
      () => false,
    );
    if (up) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url,
    pid: child.pid ?? 0,
    stop: async () => {
      if (child.pid) process.kill(-child.pid, 'SIGKILL');
    },
  };
}

/** Resident memory of a process and all its descendants, from /proc (bytes). */
export function treeRss(root: number): number {
  const children = new Map<number, number[]>();
  const rss = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const raw = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Fields after the parenthesised command: state, ppid, … rss (in pages) is the 22nd of them.
      const stat = raw.slice(raw.lastIndexOf(')') + 2).split(' ');
      const ppid = Number(stat[1]);
      rss.set(Number(entry), Number(stat[21]) * 4096);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // Gone while reading.
    }
  }
  let total = 0;
  const stack = [root];
  while (stack.length > 0) {
    const pid = stack.pop() as number;
    total += rss.get(pid) ?? 0;
    stack.push(...(children.get(pid) ?? []));
  }
  return total;
}

/** The bare relay of floor-relay.ts, pinned like the other targets. */
export async function startFloorRelay(): Promise<PeerTarget> {
  const port = await freePort();
  const [command, args] = pinned(process.execPath, ['--import', 'tsx', path.join(here, 'floor-relay.ts'), String(port), everythingEntry]);
  const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'inherit', 'ipc'], cwd: path.join(here, '..'), detached: true });
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`relay exited early (${code})`)));
    child.once('message', () => resolve());
  });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    pid: child.pid ?? 0,
    stop: async () => {
      if (child.pid) process.kill(-child.pid, 'SIGKILL');
    },
  };
}

/**
 * The gateway at an older commit, for a before/after comparison in one run: its `apps/server/src` extracted into
 * a temporary directory outside the repository (so that neither the type check nor the linter reads the old copy),
 * with its packages resolved through a link to this checkout's node_modules. The bench harness itself is this
 * tree's (`bench/`, and the test kits bench-app.ts seeds with), so that both sides are measured the same way.
 * Returns the target script to start (`target`, a script of bench/: gateway-target.ts unless told).
 */
export function beforeTree(commit: string, label: string, target = 'gateway-target.ts'): string {
  const root = path.resolve(here, '..');
  const dir = path.join(tmpdir(), `toolport-${label}-before-${commit}`);
  const script = path.join(dir, 'bench', target);
  if (existsSync(script)) return script;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  execFileSync('sh', ['-c', `git archive ${commit} apps/server/src apps/server/package.json | tar -x -C "$0"`, dir], {
    cwd: root,
    stdio: 'inherit',
  });
  cpSync(path.join(root, 'bench'), path.join(dir, 'bench'), { recursive: true, filter: (src) => !src.includes('node_modules') });
  // bench-app.ts seeds users and services with the gateway suites' kit: this tree's copy too, like bench/.
  for (const kit of [
    'apps/server/test/harness.ts',
    'apps/server/test/gateway/gateway-harness.ts',
    'apps/server/test/kits/service-row.ts',
  ]) {
    mkdirSync(path.dirname(path.join(dir, kit)), { recursive: true });
    cpSync(path.join(root, kit), path.join(dir, kit));
  }
  symlinkSync(path.join(root, 'node_modules'), path.join(dir, 'node_modules'));
  return script;
}
