import { readdirSync, readFileSync } from 'node:fs';

/**
 * Resident memory of stdio tool servers (STDIO_MAX_RSS_MB). One timer for the whole gateway reads
 * /proc once per interval, sums VmRSS over each watched process group (the leader, the `npx`/`uvx`
 * children and whatever they started) and tells the owner of a group that went over the limit; the
 * owner stops it, which answers its calls and lets the supervisor restart it with backoff.
 * Linux only: elsewhere nothing is measured.
 */

export interface MemoryWatchSettings {
  /** 0 turns the watch off. */
  maxRssMb: number;
  intervalMs: number;
}

type OverLimit = (rssBytes: number, limitBytes: number) => void;

const DEFAULT_SETTINGS: MemoryWatchSettings = { maxRssMb: 1024, intervalMs: 2_000 };

/** VmRSS of every live process, by process group, from one pass over /proc. */
export function rssByGroup(groups: ReadonlySet<number>): Map<number, number> {
  const sums = new Map<number, number>();
  if (groups.size === 0 || process.platform !== 'linux') return sums;
  for (const entry of readdirSync('/proc')) {
    if (entry.charCodeAt(0) > 57) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Fields after the command name (which may hold spaces and parentheses): state ppid pgrp …
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const pgid = Number(fields[2]);
      if (!groups.has(pgid) || fields[0] === 'Z') continue;
      const kb = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${entry}/status`, 'utf8'))?.[1];
      if (kb) sums.set(pgid, (sums.get(pgid) ?? 0) + Number(kb) * 1024);
    } catch {
      // The process ended while /proc was read.
    }
  }
  return sums;
}

export class MemoryWatch {
  private settings: MemoryWatchSettings = { ...DEFAULT_SETTINGS };
  private readonly watched = new Map<number, OverLimit>();
  private timer: NodeJS.Timeout | undefined;
  private timerMs = 0;

  /** Applied from the configuration at app start; a running watch picks the new values up. */
  configure(settings: Partial<MemoryWatchSettings>): void {
    this.settings = { ...this.settings, ...settings };
    this.reschedule();
  }

  get limitBytes(): number {
    return this.settings.maxRssMb * 1024 * 1024;
  }

  /** Watches a process group until the returned function is called. */
  watch(pgid: number, onOverLimit: OverLimit): () => void {
    this.watched.set(pgid, onOverLimit);
    this.reschedule();
    return () => {
      if (this.watched.get(pgid) === onOverLimit) this.watched.delete(pgid);
      if (this.watched.size === 0) this.reschedule();
    };
  }

  /** One measurement now (the timer calls it; tests may too). */
  check(): void {
    const limit = this.limitBytes;
    if (limit <= 0 || this.watched.size === 0) return;
    const sums = rssByGroup(new Set(this.watched.keys()));
    for (const [pgid, rss] of sums) {
      if (rss <= limit) continue;
      const onOverLimit = this.watched.get(pgid);
      // Told once: the owner stops the group, and a restarted process is a new group.
      this.watched.delete(pgid);
      onOverLimit?.(rss, limit);
    }
    if (this.watched.size === 0) this.reschedule();
  }

  private reschedule(): void {
    const wanted = this.settings.maxRssMb > 0 && this.watched.size > 0;
    if (this.timer && (!wanted || this.timerMs !== this.settings.intervalMs)) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
    if (wanted && !this.timer) {
      this.timerMs = this.settings.intervalMs;
      this.timer = setInterval(() => this.check(), this.timerMs);
      this.timer.unref();
    }
  }
}

/** The gateway's one watch: stdio channels register here, app start configures it. */
export const memoryWatch = new MemoryWatch();
