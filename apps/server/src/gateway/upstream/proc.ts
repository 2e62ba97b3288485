import { closeSync, openSync, readdirSync, readFileSync, readSync } from 'node:fs';

/**
 * What Linux's /proc says of processes, read as cheaply as it can be (docs/decisions/0045): the process
 * census, the memory cap and the reaping of leftovers all read it. Small files are read with one open and
 * one read into a shared buffer: `readFileSync` stats the file and reads it in rounds, about four times
 * slower on /proc. Every reader answers undefined for a process that ended meanwhile or is not ours to read.
 */

/** The fields of /proc/<pid>/stat the census needs. */
export interface ProcStat {
  pid: number;
  /** R, S, D, T…; Z (dead, not yet reaped, which PID 1 in a container often never does) and X are dead. */
  state: string;
  ppid: number;
  pgrp: number;
  session: number;
  /** Start time in clock ticks since boot: tells a reused pid apart. */
  startTicks: string;
  /** Resident set, in pages. */
  rssPages: number;
}

const buffer = Buffer.alloc(64 * 1024);

/** The file's first 64 KiB (all of a stat, nearly always all of an environment), or undefined. */
function readStart(file: string): Buffer | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    return buffer.subarray(0, readSync(fd, buffer, 0, buffer.length, 0));
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

const readSmall = (file: string): string | undefined => readStart(file)?.toString('latin1');

export const isDead = (stat: ProcStat): boolean => stat.state === 'Z' || stat.state === 'X';

export function readStat(pid: number | 'self'): ProcStat | undefined {
  const text = readSmall(`/proc/${pid}/stat`);
  if (!text) return undefined;
  // After the command name, which may hold spaces and parentheses: state ppid pgrp session tty … starttime
  // (field 22 of the line, index 19 here) vsize rss (index 21).
  const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return {
    pid: pid === 'self' ? process.pid : pid,
    state: f[0] ?? '',
    ppid: Number(f[1]),
    pgrp: Number(f[2]),
    session: Number(f[3]),
    startTicks: f[19] ?? '',
    rssPages: Number(f[21]),
  };
}

/** The pids in /proc now. */
export function listPids(): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    // Digits only: the first character tells them from self, sys, net and the rest.
    if (entry.charCodeAt(0) <= 57) pids.push(Number(entry));
  }
  return pids;
}

/**
 * The value of `name` in the environment a process started with (/proc/<pid>/environ), or undefined.
 * A process can change what this shows: exec with another environment, or overwrite the memory it reads.
 */
export function environValue(pid: number, name: string): string | undefined {
  let env = readStart(`/proc/${pid}/environ`);
  if (env === undefined) return undefined;
  if (env.length === buffer.length) {
    try {
      env = readFileSync(`/proc/${pid}/environ`);
    } catch {
      return undefined;
    }
  }
  const needle = `${name}=`;
  let at = env.indexOf(needle, 0, 'latin1');
  while (at > 0 && env[at - 1] !== 0) at = env.indexOf(needle, at + 1, 'latin1');
  if (at < 0) return undefined;
  const end = env.indexOf(0, at);
  return env.toString('latin1', at + needle.length, end < 0 ? env.length : end);
}

let pageBytes: number | undefined;

/**
 * The kernel's page size (stat's rss is in pages): Node does not tell it, so it is worked out once from this
 * process's own VmRSS (kB) and resident pages, to the nearest power of two; 4 KiB where that fails.
 */
export function pageSize(): number {
  if (pageBytes !== undefined) return pageBytes;
  pageBytes = 4096;
  const kb = Number(/^VmRSS:\s+(\d+) kB$/m.exec(readSmall('/proc/self/status') ?? '')?.[1]);
  const pages = Number(readSmall('/proc/self/statm')?.split(' ')[1]);
  if (kb > 0 && pages > 0) pageBytes = 2 ** Math.round(Math.log2((kb * 1024) / pages));
  return pageBytes;
}
