import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/**
 * A tool server runs as the leader of its own process group (`detached: true`), so stopping it
 * reaches the grandchildren that `npx`, `uvx` and shell wrappers start: SIGTERM to the group, then
 * SIGKILL to the group after a grace period, whether or not the leader is still there.
 */

/** Groups still running: killed synchronously if the gateway process exits without stopping them. */
const liveGroups = new Set<number>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const pgid of liveGroups) signalGroup(pgid, 'SIGKILL');
  });
}

export function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: the group is already empty.
  }
}

/**
 * Whether any process of the group is still alive. On Linux /proc is read, because a zombie
 * (state Z: dead, not yet reaped, which PID 1 here never does) answers kill(0) like a live process.
 */
export function groupAlive(pgid: number): boolean {
  if (process.platform !== 'linux') {
    try {
      process.kill(-pgid, 0);
      return true;
    } catch {
      return false;
    }
  }
  for (const entry of readdirSync('/proc')) {
    if (entry.charCodeAt(0) > 57) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    // Fields after the command name (which may hold spaces and parentheses): state ppid pgrp …
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) === pgid && fields[0] !== 'Z' && fields[0] !== 'X') return true;
  }
  return false;
}

export interface SpawnedGroup {
  child: ChildProcessWithoutNullStreams;
  pid: number;
  /** Resolves when the leader has exited (and been reaped by Node). */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * The environment variable that marks every process this gateway run starts (and, inherited, their
 * children): after a SIGKILL of the gateway the next start finds them by it (leftovers.ts).
 */
export const RUN_MARKER_VAR = 'TOOLPORT_GATEWAY_RUN';
let runMarker: string | undefined;

/** Set once at start (leftovers.ts): later spawns carry it in their environment. */
export function setRunMarker(marker: string | undefined): void {
  runMarker = marker;
}

/** Spawns `command args` as a new process group; rejects when the command cannot be started. */
export function spawnGroup(command: string, args: string[], cwd: string, env: Record<string, string>): Promise<SpawnedGroup> {
  installExitHook();
  return new Promise((resolve, reject) => {
    const fullEnv = runMarker ? { ...env, [RUN_MARKER_VAR]: runMarker } : env;
    const child = spawn(command, args, { cwd, env: fullEnv, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) => {
      child.once('exit', (code, signal) => done({ code, signal }));
    });
    child.once('error', (err) => {
      if (child.pid === undefined) reject(err);
    });
    child.once('spawn', () => {
      const pid = child.pid as number;
      liveGroups.add(pid);
      resolve({ child, pid, exited });
    });
  });
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** SIGTERM to the group, SIGKILL to the group once `graceMs` has passed with anything left alive. */
export async function stopGroup(group: SpawnedGroup, graceMs: number): Promise<void> {
  let leaderGone = false;
  const leaderExit = group.exited.then(() => {
    leaderGone = true;
  });
  signalGroup(group.pid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  await Promise.race([leaderExit, sleep(graceMs)]);
  while (Date.now() < deadline && groupAlive(group.pid)) await sleep(50);
  if (!leaderGone || groupAlive(group.pid)) {
    signalGroup(group.pid, 'SIGKILL');
    await Promise.race([leaderExit, sleep(1000)]);
  }
  liveGroups.delete(group.pid);
}
