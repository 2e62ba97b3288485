import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { environValue, isDead, listPids, type ProcStat, readStat } from './proc.js';
import { census, parseMarker, RUN_ID, RUN_MARKER_VAR, signal } from './process-census.js';

/**
 * Tool server processes left behind by a gateway that was killed (SIGKILL, OOM killer, power cut of a
 * container's init): it could not stop them, and they keep running, holding ports, files, memory and the old
 * configuration's secrets. Each gateway run writes `DATA_DIR/run/run-<run>.json` with its pid, start time and
 * run id before it starts any tool server; every process it starts carries `TOOLPORT_GATEWAY_RUN=<run>:<instance>`
 * (process-census.ts), and the file is rewritten with the pids the census counts whenever they change, so a
 * process that runs with another environment is known too once the census has seen it. At start, the files of
 * runs whose gateway is gone name the processes to reap: the marked ones, the listed ones still running (same
 * start time), their descendants and whatever shares a session or group with them are killed, in rounds until
 * /proc shows none, and only then is the file removed. A file outlives its run for as long as
 * processes of that run may live: a gateway killed twice before any clean stop leaves two files, and the
 * next start reaps both. Linux only (it reads /proc); elsewhere only the files are kept.
 */

interface RunFile {
  pid: number;
  /** Start time of the gateway process (clock ticks since boot): tells a reused pid apart. */
  startTicks: string;
  marker: string;
  /** The processes the run's census counted when it last changed: pid and start time. */
  members?: [number, string][];
}

/** Run files; `gateway-<pid>.json` is how gateways before decision 0045 named theirs. */
const RUN_FILE = /^(run-[0-9a-f-]+|gateway-\d+)\.json$/;
const REAP_ROUNDS = 40;
const ownName = `run-${RUN_ID}.json`;
const runDir = (dataDir: string) => path.join(dataDir, 'run');
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Apps of this process recorded per run directory (tests run several in one process; they share the run). */
const recorded = new Map<string, number>();

/** The gateway run that wrote the file is still running (same pid, same start time, not a zombie). */
function runAlive(run: RunFile): boolean {
  const stat = readStat(run.pid);
  return stat !== undefined && !isDead(stat) && stat.startTicks === run.startTicks;
}

/**
 * Live processes of the given runs: those whose environment carries one of the run ids, those their census
 * listed (`known`, by pid and start time), their descendants and the processes in a session or group one of
 * them is in.
 */
export function processesOfRuns(runs: ReadonlySet<string>, known: ReadonlyMap<number, string> = new Map()): number[] {
  const own = readStat('self');
  const shared = new Set([0, 1, own?.session, own?.pgrp]);
  const stats: ProcStat[] = [];
  for (const pid of listPids()) {
    const stat = pid === process.pid ? undefined : readStat(pid);
    if (stat && !isDead(stat)) stats.push(stat);
  }
  const ours = new Set<number>();
  const places = new Set<number>();
  const take = (stat: ProcStat) => {
    ours.add(stat.pid);
    for (const id of [stat.session, stat.pgrp]) if (!shared.has(id)) places.add(id);
  };
  for (const stat of stats) {
    if (known.get(stat.pid) === stat.startTicks) take(stat);
    else {
      const value = environValue(stat.pid, RUN_MARKER_VAR);
      if (value !== undefined && runs.has(parseMarker(value).run)) take(stat);
    }
  }
  for (let grew = ours.size > 0; grew; ) {
    grew = false;
    for (const stat of stats) {
      if (ours.has(stat.pid) || !(ours.has(stat.ppid) || places.has(stat.session) || places.has(stat.pgrp))) continue;
      take(stat);
      grew = true;
    }
  }
  return [...ours];
}

/** SIGKILL to the runs' processes until a scan finds none (or the rounds run out); what is left, and the killed. */
async function killRuns(
  runs: ReadonlySet<string>,
  known?: ReadonlyMap<number, string>,
  spare: (pid: number) => boolean = () => false,
): Promise<{ killed: number[]; left: number[] }> {
  const killed = new Set<number>();
  const find = () => processesOfRuns(runs, known).filter((pid) => !spare(pid));
  let left = find();
  for (let round = 0; left.length > 0 && round < REAP_ROUNDS; round++) {
    for (const pid of left) if (signal(pid, 'SIGKILL')) killed.add(pid);
    await sleep(50);
    left = find();
  }
  return { killed: [...killed], left };
}

function readRun(file: string): RunFile | undefined {
  try {
    const run = JSON.parse(readFileSync(file, 'utf8')) as RunFile;
    return typeof run.pid === 'number' ? run : undefined;
  } catch {
    return undefined;
  }
}

/** The runs of earlier gateways whose process is gone; killed, and their files removed once nothing of them lives. */
async function reapEarlier(dir: string, names: string[], logger: Logger): Promise<number> {
  const dead: { file: string; run: RunFile }[] = [];
  for (const name of names) {
    const file = path.join(dir, name);
    const run = readRun(file);
    // Unreadable (written before atomic writes): it names nothing to look for.
    if (!run) rmSync(file, { force: true });
    else if (!runAlive(run)) dead.push({ file, run });
  }
  if (dead.length === 0) return 0;
  const markers = new Set(dead.map(({ run }) => (typeof run.marker === 'string' ? run.marker : '')).filter(Boolean));
  const known = new Map(dead.flatMap(({ run }) => (Array.isArray(run.members) ? run.members : [])));
  const { killed, left } = await killRuns(markers, known);
  if (killed.length > 0) {
    logger.warn({ processes: killed }, 'killed tool server processes left running by a previous gateway run that did not stop cleanly');
  }
  if (left.length > 0) {
    logger.error({ processes: left }, 'tool server processes of a previous gateway run could not be killed; their run file is kept');
    return killed.length;
  }
  for (const { file } of dead) rmSync(file, { force: true });
  return killed.length;
}

/** Written whole or not at all: a torn file would lose the run's id, and with it its processes. */
function writeOwn(dir: string): void {
  const run: RunFile = { pid: process.pid, startTicks: readStat('self')?.startTicks ?? '', marker: RUN_ID, members: census.snapshot() };
  const partial = path.join(dir, `.${ownName}.partial`);
  writeFileSync(partial, JSON.stringify(run));
  renameSync(partial, path.join(dir, ownName));
}

let stopListing: (() => void) | undefined;

/** While this process records a run, its files follow the census's list of processes. */
function keepListed(): void {
  if (recorded.size > 0) {
    stopListing ??= census.onChange(() => {
      for (const dir of recorded.keys()) {
        try {
          writeOwn(dir);
        } catch {
          // DATA_DIR went away (a test's temporary one): nothing to keep there.
        }
      }
    });
    return;
  }
  stopListing?.();
  stopListing = undefined;
}

export interface RunRecord {
  /** A clean stop, after the tool servers were stopped: a straggler is killed, then the file removed. */
  release(): Promise<void>;
  /** Processes of earlier runs killed at start. */
  reaped: number;
}

/**
 * Records this run in DATA_DIR, then kills what earlier runs on it left behind. Called before the gateway
 * starts any tool server (boot-started ones included); the file is written before the reaping, so a gateway
 * killed while it reaps leaves both runs for the next start.
 */
export async function reapLeftoversAndRecordRun(dataDir: string, logger: Logger): Promise<RunRecord> {
  const dir = runDir(dataDir);
  mkdirSync(dir, { recursive: true });
  const earlier = readdirSync(dir).filter((name) => RUN_FILE.test(name) && name !== ownName);
  writeOwn(dir);
  recorded.set(dir, (recorded.get(dir) ?? 0) + 1);
  keepListed();
  const reaped = process.platform === 'linux' ? await reapEarlier(dir, earlier, logger) : 0;
  let released = false;
  return {
    reaped,
    async release() {
      if (released) return;
      released = true;
      const count = (recorded.get(dir) ?? 1) - 1;
      if (count > 0) return void recorded.set(dir, count);
      recorded.delete(dir);
      keepListed();
      if (process.platform === 'linux') {
        const runs = new Set([RUN_ID]);
        census.scan();
        // A process of an instance still open is not a straggler: another app of this process (tests run several) runs it.
        const { killed } = await killRuns(runs, undefined, (pid) => census.instanceOf(pid) !== undefined);
        if (killed.length > 0) logger.warn({ processes: killed }, 'killed tool server processes that outlived their stop');
        if (processesOfRuns(runs).length > 0) return;
      }
      rmSync(path.join(dir, ownName), { force: true });
    },
  };
}

/**
 * What a server does before its gateway may start a tool server (docs/decisions/0045): the process census
 * logs through `logger`, what earlier runs on DATA_DIR left behind is killed, and this run is recorded.
 */
export async function recordRun(dataDir: string, logger: Logger): Promise<RunRecord> {
  census.configure({ logger });
  return reapLeftoversAndRecordRun(dataDir, logger);
}
