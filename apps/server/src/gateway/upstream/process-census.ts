import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { environValue, isDead, listPids, type ProcStat, pageSize, readStat } from './proc.js';

/**
 * Which live processes belong to which tool server instance (docs/decisions/0045): every process a stdio
 * tool server starts, however it detaches, so that the memory cap sums all of them and a stop ends all of them.
 *
 * An instance is one start of one tool server. Its leader is registered when it is spawned; every other process
 * is found by one scan of /proc per second for the whole gateway, whatever the number of services, and stays a
 * member for as long as it lives (pid and start time). A process newly seen belongs to an instance when
 *  1. its parent is a member (a child, whatever its environment and session);
 *  2. it is in a session or process group a live member is in: nothing outside can join those, so it was started
 *     inside them (same-group children, the descendants of a `setsid` child);
 *  3. its environment carries the instance's marker, `TOOLPORT_GATEWAY_RUN=<run>:<instance>`, which every
 *     process inherits unless it is started with another environment: a double-forked daemon whose middle
 *     process is gone before the next scan.
 * Only a process that is all three at once escapes: started with a scrubbed environment, in a new session, by a
 * process that ended within the second. Known processes cost one read of their stat per scan; /proc/<pid>/environ
 * is read once per new process that the first two rules do not place and that is younger than the gateway. Linux
 * only; elsewhere an instance is its leader's process group.
 */

export const RUN_MARKER_VAR = 'TOOLPORT_GATEWAY_RUN';
/** This gateway process's run, never empty: the run files (leftovers.ts) name it. */
export const RUN_ID = randomUUID();

/** `<run>` and `<instance>` of a marker's value; gateways before decision 0045 wrote the run alone. */
export function parseMarker(value: string): { run: string; instance: number | undefined } {
  const colon = value.indexOf(':');
  if (colon < 0) return { run: value, instance: undefined };
  return { run: value.slice(0, colon), instance: Number(value.slice(colon + 1)) };
}

const SCAN_MS = 1_000;
/** Every so many scans the processes known not to be ours are read again, in case a pid was reused in between. */
const RECHECK_FOREIGN_EVERY = 10;

interface Member {
  instance: number;
  stat: ProcStat;
}

export class ProcessCensus {
  private readonly linux = process.platform === 'linux';
  /** Live instances: their leader (0 until spawned) and member pids. */
  private readonly instances = new Map<number, { leader: number; pids: Set<number> }>();
  private readonly members = new Map<number, Member>();
  /** Processes seen and found not ours, with their start time. */
  private readonly foreign = new Map<number, string>();
  private readonly listeners = new Set<() => void>();
  private readonly watchers = new Set<() => void>();
  /** A scan adopted or dropped a process. */
  private changed = false;
  private lastInstance = 0;
  private scans = 0;
  /** The scans stopped for a while: the processes known not to be ours are checked again at the next one. */
  private recheckForeign = false;
  private timer: NodeJS.Timeout | undefined;
  private logger: Logger | undefined;
  /** This process's start time: a process started before it cannot have been started by a tool server of it. */
  private ownStart: number | undefined;

  configure(settings: { logger?: Logger }): void {
    this.logger = settings.logger ?? this.logger;
  }

  /** A new instance, before its leader is spawned: its marker goes into the leader's environment. */
  open(): number {
    this.lastInstance += 1;
    this.instances.set(this.lastInstance, { leader: 0, pids: new Set() });
    this.schedule();
    return this.lastInstance;
  }

  marker(instance: number): string {
    return `${RUN_ID}:${instance}`;
  }

  /** The spawned leader; registered before any scan can run, so the moment between its fork and exec is covered. */
  setLeader(instance: number, pid: number): void {
    const entry = this.instances.get(instance);
    if (!entry) return;
    entry.leader = pid;
    const stat = this.linux ? readStat(pid) : undefined;
    if (stat && !isDead(stat)) this.adopt(instance, stat);
    else if (!this.linux) entry.pids.add(pid);
  }

  /** Forgets an instance whose processes have all ended (or were killed); a straggler found later is killed. */
  release(instance: number): void {
    const entry = this.instances.get(instance);
    if (!entry) return;
    for (const pid of entry.pids) this.members.delete(pid);
    this.instances.delete(instance);
    this.schedule();
  }

  /** The live members of an instance, as of the last scan. */
  pids(instance: number): number[] {
    return [...(this.instances.get(instance)?.pids ?? [])];
  }

  /** Whether anything of the instance is alive, by a scan made now. */
  alive(instance: number): boolean {
    if (!this.linux) {
      const leader = this.instances.get(instance)?.leader ?? 0;
      return leader > 0 && signal(-leader, 0);
    }
    this.scan();
    return (this.instances.get(instance)?.pids.size ?? 0) > 0;
  }

  /** Resident memory of all the instance's processes, as of the last scan. */
  rssBytes(instance: number): number {
    let pages = 0;
    for (const pid of this.pids(instance)) pages += this.members.get(pid)?.stat.rssPages ?? 0;
    return pages * pageSize();
  }

  /** Sends `sig` to every member and to the leader's process group (which holds the children not scanned yet). */
  signal(instance: number, sig: NodeJS.Signals): void {
    const entry = this.instances.get(instance);
    if (!entry) return;
    if (entry.leader > 0) signal(-entry.leader, sig);
    for (const pid of entry.pids) signal(pid, sig);
  }

  /** Kills every process of every instance, synchronously: the gateway process is exiting. */
  killAll(): void {
    this.scan();
    for (const instance of this.instances.keys()) this.signal(instance, 'SIGKILL');
  }

  /** Called after every timed scan (the memory cap). */
  onScan(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Called after a scan that found new processes or lost some (the run files keep the list: leftovers.ts). */
  onChange(listener: () => void): () => void {
    this.watchers.add(listener);
    return () => this.watchers.delete(listener);
  }

  /** Every member of every instance, with its start time. */
  snapshot(): [pid: number, startTicks: string][] {
    return [...this.members].map(([pid, member]) => [pid, member.stat.startTicks]);
  }

  /** The instance a live process belongs to, as of the last scan. */
  instanceOf(pid: number): number | undefined {
    return this.members.get(pid)?.instance;
  }

  /** One pass over /proc: members still alive, new processes placed. */
  scan(): void {
    if (!this.linux || this.instances.size === 0) return;
    this.scans += 1;
    const present = listPids();
    const seen = new Set(present);
    for (const [pid, member] of this.members) {
      const stat = seen.has(pid) ? readStat(pid) : undefined;
      if (stat && !isDead(stat) && stat.startTicks === member.stat.startTicks) member.stat = stat;
      else this.drop(pid);
    }
    const recheck = this.recheckForeign || this.scans % RECHECK_FOREIGN_EVERY === 0;
    this.recheckForeign = false;
    for (const [pid, start] of this.foreign) {
      if (!seen.has(pid) || (recheck && readStat(pid)?.startTicks !== start)) this.foreign.delete(pid);
    }
    const fresh = new Map<number, ProcStat>();
    for (const pid of present) {
      if (pid === process.pid || this.members.has(pid) || this.foreign.has(pid)) continue;
      const stat = readStat(pid);
      if (stat && !isDead(stat)) fresh.set(pid, stat);
    }
    if (fresh.size > 0) this.place(fresh);
    if (!this.changed) return;
    this.changed = false;
    for (const watcher of this.watchers) watcher();
  }

  /** Sorts new processes into instances, parents first, or remembers them as not ours. */
  private place(fresh: Map<number, ProcStat>): void {
    const own = readStat('self');
    const shared = new Set([0, 1, own?.session, own?.pgrp]);
    // Sessions and groups with a live member, and whose they are.
    const places = new Map<number, number>();
    const claim = (stat: ProcStat, instance: number) => {
      for (const id of [stat.session, stat.pgrp]) if (!shared.has(id)) places.set(id, instance);
    };
    for (const member of this.members.values()) claim(member.stat, member.instance);
    const visiting = new Set<number>();
    const resolve = (stat: ProcStat): number | undefined => {
      const known = this.members.get(stat.pid);
      if (known || this.foreign.has(stat.pid)) return known?.instance;
      visiting.add(stat.pid);
      const parent = fresh.get(stat.ppid);
      const instance =
        this.members.get(stat.ppid)?.instance ??
        (parent && !visiting.has(parent.pid) ? resolve(parent) : undefined) ??
        places.get(stat.session) ??
        places.get(stat.pgrp) ??
        (Number(stat.startTicks) >= this.startFloor() ? this.markedFor(stat.pid) : undefined);
      if (instance === undefined) this.foreign.set(stat.pid, stat.startTicks);
      else {
        this.adopt(instance, stat);
        claim(stat, instance);
      }
      return instance;
    };
    for (const stat of fresh.values()) resolve(stat);
  }

  /** The live instance the process's marker names; a process of this run whose instance has ended is killed. */
  private markedFor(pid: number): number | undefined {
    const value = environValue(pid, RUN_MARKER_VAR);
    if (value === undefined) return undefined;
    const { run, instance } = parseMarker(value);
    if (run !== RUN_ID || instance === undefined || instance > this.lastInstance) return undefined;
    if (this.instances.has(instance)) return instance;
    // Its instance was stopped while this process was on its way out of it (a fork during the stop).
    if (signal(pid, 'SIGKILL')) this.logger?.warn({ pid, instance }, 'killed a tool server process left by a stopped instance');
    return undefined;
  }

  private startFloor(): number {
    this.ownStart ??= Number(readStat('self')?.startTicks ?? 0);
    return this.ownStart;
  }

  private adopt(instance: number, stat: ProcStat): void {
    this.changed = true;
    this.members.set(stat.pid, { instance, stat });
    this.instances.get(instance)?.pids.add(stat.pid);
  }

  private drop(pid: number): void {
    const member = this.members.get(pid);
    this.changed = true;
    this.members.delete(pid);
    if (member) this.instances.get(member.instance)?.pids.delete(pid);
  }

  /** One timer for the gateway while any instance lives. */
  private schedule(): void {
    if (this.instances.size > 0) {
      this.timer ??= setInterval(() => {
        this.scan();
        for (const listener of this.listeners) listener();
      }, SCAN_MS).unref();
      return;
    }
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.recheckForeign = true;
  }
}

/** kill(2) that answers whether the signal was delivered (false: no such process, or not ours). */
export function signal(pid: number, sig: NodeJS.Signals | 0): boolean {
  try {
    process.kill(pid, sig);
    return true;
  } catch {
    return false;
  }
}

/** The gateway's one census: stdio channels register here, the memory watch reads it. */
export const census = new ProcessCensus();
