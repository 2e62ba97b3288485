import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The state letter of a process (R, S, Z …), or '' when it is gone. */
function stateOf(pid: string): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] ?? '';
  } catch {
    return '';
  }
}

/**
 * Live processes whose working directory lies in `dir` (Linux: /proc; elsewhere none are found).
 * Tool servers started from an install directory run there. Zombies (state Z) count as gone:
 * PID 1 here never reaps them.
 */
export function processesIn(dir: string): number[] {
  if (process.platform !== 'linux') return [];
  const root = path.resolve(dir);
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    let cwd: string;
    try {
      cwd = readlinkSync(`/proc/${entry}/cwd`).replace(/ \(deleted\)$/, '');
    } catch {
      continue;
    }
    if (cwd !== root && !cwd.startsWith(`${root}${path.sep}`)) continue;
    const state = stateOf(entry);
    if (state && state !== 'Z' && state !== 'X') found.push(Number(entry));
  }
  return found;
}

/**
 * Waits until no process runs in `dir`: the gateway stops the ones it started on its own schedule
 * (SIGTERM, then SIGKILL after a grace period). Whatever is still there at the deadline is killed.
 */
export async function drainProcessesIn(dir: string, deadlineMs: number): Promise<void> {
  const until = Date.now() + deadlineMs;
  while (processesIn(dir).length > 0 && Date.now() < until) await sleep(100);
  for (const pid of processesIn(dir)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  const last = Date.now() + 2000;
  while (processesIn(dir).length > 0 && Date.now() < last) await sleep(50);
}
