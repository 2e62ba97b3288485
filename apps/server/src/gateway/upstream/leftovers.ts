import { randomUUID } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { RUN_MARKER_VAR, setRunMarker, signalGroup } from './process-group.js';

/**
 * Tool server processes left behind by a gateway that was killed (SIGKILL, OOM killer, power cut
 * of a container's init): the gateway could not stop their process groups, and they keep running,
 * holding ports, files and memory. Each gateway run writes `DATA_DIR/run/gateway-<pid>.json` with
 * its pid, start time and a random marker that every process it spawns inherits in its environment
 * (process-group.ts). At start, a file whose gateway is gone names a run whose processes are found by
 * that marker in /proc and killed with their groups; the file is removed on a clean stop.
 * Linux only (it reads /proc); elsewhere only the file is kept.
 */

interface RunFile {
  pid: number;
  /** Start time of the gateway process (clock ticks since boot, /proc/<pid>/stat field 22): tells a reused pid apart. */
  startTicks: string;
  marker: string;
}

const runDir = (dataDir: string) => path.join(dataDir, 'run');

function statFields(pid: number | 'self'): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name: state (index 0), ppid, pgrp … starttime is field 22 of the line, index 19 here.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** The gateway run that wrote the file is still running (same pid, same start time, not a zombie). */
function runAlive(run: RunFile): boolean {
  const fields = statFields(run.pid);
  return fields !== undefined && fields[0] !== 'Z' && fields[19] === run.startTicks;
}

/** Live processes whose environment carries `marker`, with their process group. */
function marked(marker: string): { pid: number; pgid: number }[] {
  const needle = `${RUN_MARKER_VAR}=${marker}\0`;
  const found: { pid: number; pgid: number }[] = [];
  for (const entry of readdirSync('/proc')) {
    if (entry.charCodeAt(0) > 57) continue;
    const pid = Number(entry);
    if (pid === process.pid) continue;
    try {
      const fields = statFields(pid);
      if (!fields || fields[0] === 'Z') continue;
      if (`${readFileSync(`/proc/${entry}/environ`, 'latin1')}\0`.includes(needle)) found.push({ pid, pgid: Number(fields[2]) });
    } catch {
      // Ended meanwhile, or not ours to read.
    }
  }
  return found;
}

export interface RunRecord {
  /** Removes this run's file (a clean stop). */
  release(): void;
}

/**
 * Kills what earlier runs on this DATA_DIR left behind, then records this run and marks the
 * processes it will spawn. Returns the number of processes killed through `reaped`.
 */
export function reapLeftoversAndRecordRun(dataDir: string, logger: Logger): RunRecord & { reaped: number } {
  const dir = runDir(dataDir);
  mkdirSync(dir, { recursive: true });
  let reaped = 0;
  if (process.platform === 'linux') {
    for (const name of readdirSync(dir)) {
      if (!/^gateway-\d+\.json$/.test(name)) continue;
      const file = path.join(dir, name);
      let run: RunFile;
      try {
        run = JSON.parse(readFileSync(file, 'utf8')) as RunFile;
      } catch {
        rmSync(file, { force: true });
        continue;
      }
      // A file naming this very pid with another start time is an earlier run (a container restarts with the same pid).
      if (runAlive(run)) continue;
      const left = typeof run.marker === 'string' && run.marker.length > 0 ? marked(run.marker) : [];
      const pids = new Set(left.map((p) => p.pid));
      for (const { pid, pgid } of left) {
        // The whole group where it belongs to a group one of the old run's processes leads, else the process alone.
        if (pgid > 1 && pids.has(pgid)) signalGroup(pgid, 'SIGKILL');
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Gone already.
        }
      }
      if (left.length > 0) {
        reaped += left.length;
        logger.warn(
          { previousPid: run.pid, processes: left.map((p) => p.pid) },
          'killed tool server processes left running by a previous gateway run that did not stop cleanly',
        );
      }
      rmSync(file, { force: true });
    }
  }
  const marker = randomUUID();
  const file = path.join(dir, `gateway-${process.pid}.json`);
  const startTicks = statFields('self')?.[19] ?? '';
  writeFileSync(file, JSON.stringify({ pid: process.pid, startTicks, marker } satisfies RunFile));
  setRunMarker(marker);
  return {
    reaped,
    release() {
      rmSync(file, { force: true });
    },
  };
}
