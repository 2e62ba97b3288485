import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { census, RUN_MARKER_VAR, signal } from './process-census.js';

/**
 * A tool server runs as the leader of its own session and process group (`detached: true`), and everything
 * it starts is one instance of the process census (process-census.ts): the grandchildren `npx`, `uvx` and
 * shell wrappers start, and the children that leave the group with `setsid` or a double fork. Stopping it
 * is SIGTERM to all of them, then SIGKILL to whatever is left after a grace period, whether or not the leader
 * is still there, until a scan finds nothing.
 */

let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // The gateway process ends without having stopped them (a crash, a hard deadline): nothing may outlive it.
  process.on('exit', () => census.killAll());
}

/** Signals a process group; nothing happens when it is already empty. */
export function signalGroup(pgid: number, sig: NodeJS.Signals): void {
  signal(-pgid, sig);
}

export interface SpawnedGroup {
  child: ChildProcessWithoutNullStreams;
  pid: number;
  /** Its instance in the process census. */
  instance: number;
  /** Resolves when the leader has exited (and been reaped by Node). */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Spawns `command args` as a new session and census instance; rejects when the command cannot be started. */
export function spawnGroup(command: string, args: string[], cwd: string, env: Record<string, string>): Promise<SpawnedGroup> {
  installExitHook();
  const instance = census.open();
  return new Promise((resolve, reject) => {
    // The marker goes last: a service's own variables cannot blank it.
    const fullEnv = { ...env, [RUN_MARKER_VAR]: census.marker(instance) };
    let child: ChildProcessWithoutNullStreams;
    try {
      child = spawn(command, args, { cwd, env: fullEnv, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    } catch (err) {
      // Refused before any process existed (an argument Node will not pass on).
      census.release(instance);
      throw err;
    }
    if (child.pid !== undefined) census.setLeader(instance, child.pid);
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) => {
      child.once('exit', (code, sig) => done({ code, signal: sig }));
    });
    child.once('error', (err) => {
      if (child.pid !== undefined) return;
      census.release(instance);
      reject(err);
    });
    child.once('spawn', () => resolve({ child, pid: child.pid as number, instance, exited }));
  });
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** How long SIGKILL is repeated while a scan still finds processes (a process being killed cannot fork). */
const KILL_ROUNDS = 40;

/** SIGTERM to the whole instance, SIGKILL once `graceMs` has passed with anything left alive. */
export async function stopGroup(group: SpawnedGroup, graceMs: number): Promise<void> {
  let leaderGone = false;
  const leaderExit = group.exited.then(() => {
    leaderGone = true;
  });
  census.scan();
  census.signal(group.instance, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  await Promise.race([leaderExit, sleep(graceMs)]);
  while (Date.now() < deadline && census.alive(group.instance)) await sleep(50);
  for (let round = 0; round < KILL_ROUNDS && (!leaderGone || census.alive(group.instance)); round++) {
    census.signal(group.instance, 'SIGKILL');
    await (leaderGone ? sleep(50) : Promise.race([leaderExit, sleep(1000)]));
  }
  census.release(group.instance);
}
