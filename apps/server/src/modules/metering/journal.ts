import { randomBytes } from 'node:crypto';
import { closeSync, fdatasync, mkdirSync, openSync, readdirSync, renameSync, rmSync, utimesSync, writeFileSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import type { NewRequestRecord } from '../history/index.js';
import { isOrphan, readSegments, segmentFiles } from './journal-read.js';
import { addStats, emptySegment, recordStats, type Segment } from './segment.js';

/** Runs of this process (several apps in one test process share the pid): never orphans. */
const liveRuns = new Set<string>();

/**
 * The meter's local journal (decision 0043): every admission and request record is appended to a file
 * under DATA_DIR/journal before it is folded into the database in the background. Each process start is
 * a *run* with its own files (`<run>.<seq>.log`, and `<run>.owner` naming the host and pid), so
 * replicas sharing DATA_DIR never write one file, and a run left behind by a killed process is found
 * and folded by the next start (or, on another host, by any replica once its owner file is a minute old).
 *
 * Appends are `write(2)` calls without `fsync`: in the page cache they survive a killed process; `sync()`
 * (once a second, off the event loop) bounds what a power loss can take to about a second.
 */
export class Journal {
  readonly run = randomBytes(8).toString('base64url');
  private seq = 0;
  private fd: number;
  private buffered = '';
  private dirty = false;
  current: Segment;

  constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    liveRuns.add(this.run);
    writeFileSync(this.ownerFile(this.run), JSON.stringify({ host: hostname(), pid: process.pid }));
    this.current = emptySegment(dir, this.run, this.seq);
    this.fd = this.open(this.current);
  }

  private ownerFile(run: string): string {
    return path.join(this.dir, `${run}.owner`);
  }

  private open(segment: Segment): number {
    // Request records name tools, resources and error texts: readable by this user alone.
    const fd = openSync(segment.file, 'a', 0o600);
    writeSync(fd, `h\t${segment.run}\t${segment.seq}\t${segment.batchId}\n`);
    return fd;
  }

  /** An admission: the run's count of `key` is now `count`. `now`: written before returning (else with the next write). */
  admit(key: string, count: number, now: boolean): void {
    this.current.counts.set(key, count);
    this.current.lines += 1;
    this.buffered += `a\t${key}\t${count}\n`;
    if (now) this.write();
  }

  /** A request record; written with the next admission or at the end of the event-loop turn (`write()`). */
  record(key: string, record: NewRequestRecord): void {
    const stats = recordStats(record);
    if (stats) addStats(this.current.stats, key, stats.errors, stats.latencyMs);
    this.current.records.push(record);
    this.current.lines += 1;
    this.buffered += `r\t${JSON.stringify(record)}\n`;
  }

  /** Writes what is buffered. */
  write(): void {
    if (this.buffered === '') return;
    const text = this.buffered;
    this.buffered = '';
    writeSync(this.fd, text);
    this.dirty = true;
  }

  /** Closes the current segment and starts the next; the closed one is returned when it holds anything. */
  rotate(): Segment | undefined {
    this.write();
    if (this.current.lines === 0) return undefined;
    const closed = this.current;
    closeSync(this.fd);
    this.seq += 1;
    this.current = emptySegment(this.dir, this.run, this.seq);
    this.fd = this.open(this.current);
    return closed;
  }

  /** Flushes the current file to the disk, off the event loop, when anything was written since the last time. */
  sync(): Promise<void> {
    if (!this.dirty) return Promise.resolve();
    this.dirty = false;
    const fd = this.fd;
    return new Promise((resolve) => fdatasync(fd, () => resolve()));
  }

  /** Tells other replicas sharing the directory that this run is alive. */
  heartbeat(): void {
    const now = new Date();
    try {
      utimesSync(this.ownerFile(this.run), now, now);
    } catch {
      // Removed by hand: written again so that the run is not taken for an orphan.
      writeFileSync(this.ownerFile(this.run), JSON.stringify({ host: hostname(), pid: process.pid }));
    }
  }

  /** Rewrites a segment without its request records (the oldest are dropped first when too many wait). */
  compact(segment: Segment): number {
    const dropped = segment.records.length;
    segment.records = [];
    const lines = [`h\t${segment.run}\t${segment.seq}\t${segment.batchId}`];
    for (const [key, count] of segment.counts) lines.push(`a\t${key}\t${count}`);
    for (const [key, s] of segment.stats) lines.push(`s\t${key}\t${s.errors}\t${s.latencyMs}`);
    const tmp = `${segment.file}.tmp`;
    writeFileSync(tmp, `${lines.join('\n')}\n`, { mode: 0o600 });
    renameSync(tmp, segment.file);
    return dropped;
  }

  /** A segment is in the database: its file goes. */
  remove(segment: Segment): void {
    rmSync(segment.file, { force: true });
  }

  /** On a clean stop: the owner file goes when no segment of this run is left to fold. */
  close(): void {
    this.write();
    closeSync(this.fd);
    liveRuns.delete(this.run);
    if (this.current.lines === 0) rmSync(this.current.file, { force: true });
    if (segmentFiles(this.dir, this.run).length === 0) rmSync(this.ownerFile(this.run), { force: true });
  }

  /**
   * Runs in the directory whose process is gone (same host: its pid is dead; another host: its owner
   * file is a minute old), each claimed for this run by rewriting its owner file, with their segments.
   */
  adoptOrphans(): Segment[][] {
    const adopted: Segment[][] = [];
    for (const name of readdirSync(this.dir)) {
      const run = name.endsWith('.owner') ? name.slice(0, -'.owner'.length) : undefined;
      if (!run || run === this.run || liveRuns.has(run)) continue;
      if (!this.claim(run)) continue;
      adopted.push(readSegments(this.dir, run));
    }
    return adopted;
  }

  /** Takes an orphaned run over: its owner file is moved aside (one replica wins the rename), then names this process. */
  private claim(run: string): boolean {
    const owner = this.ownerFile(run);
    if (!isOrphan(owner)) return false;
    const aside = `${owner}.${this.run}`;
    try {
      renameSync(owner, aside);
    } catch {
      return false;
    }
    writeFileSync(aside, JSON.stringify({ host: hostname(), pid: process.pid, from: this.run }));
    renameSync(aside, owner);
    return true;
  }

  /** An adopted run is folded: its owner file goes with its last segment. */
  release(run: string): void {
    if (segmentFiles(this.dir, run).length === 0) rmSync(this.ownerFile(run), { force: true });
  }
}
