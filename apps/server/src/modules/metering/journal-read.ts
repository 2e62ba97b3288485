import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import type { NewRequestRecord } from '../history/index.js';
import { addStats, counterKey, emptySegment, recordStats, type Segment } from './segment.js';

/** A run whose owner file has not been touched for this long is taken over by any replica sharing the directory. */
const STALE_OWNER_MS = 60_000;

/** Same host: its pid is gone (or is this process's, whose run it is not). Another host: a minute without a heartbeat. */
export function isOrphan(ownerFile: string): boolean {
  try {
    const owner = JSON.parse(readFileSync(ownerFile, 'utf8')) as { host?: string; pid?: number };
    if (owner.host === hostname() && typeof owner.pid === 'number') return owner.pid === process.pid || !alive(owner.pid);
    return Date.now() - statSync(ownerFile).mtimeMs > STALE_OWNER_MS;
  } catch {
    return false;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function segmentFiles(dir: string, run: string): string[] {
  return readdirSync(dir)
    .filter((name) => name.startsWith(`${run}.`) && name.endsWith('.log'))
    .sort();
}

/** A run's segments as written; a line cut short by the kill (the last one) is ignored. */
export function readSegments(dir: string, run: string): Segment[] {
  const segments: Segment[] = [];
  for (const name of segmentFiles(dir, run)) {
    const file = path.join(dir, name);
    const lines = readFileSync(file, 'utf8').split('\n');
    const [tag, , seq, batchId] = (lines[0] ?? '').split('\t');
    if (tag !== 'h' || !batchId) {
      rmSync(file, { force: true });
      continue;
    }
    const segment = { ...emptySegment(dir, run, Number(seq), batchId), file };
    for (const line of lines.slice(1)) parseLine(segment, line);
    segments.push(segment);
  }
  return segments;
}

function parseLine(segment: Segment, line: string): void {
  const [tag, key = '', a, b] = line.split('\t');
  try {
    if (tag === 'a' && a !== undefined && /^\d+$/.test(a)) {
      segment.counts.set(key, Math.max(segment.counts.get(key) ?? 0, Number(a)));
    } else if (tag === 's' && a !== undefined && b !== undefined) {
      addStats(segment.stats, key, Number(a), Number(b));
    } else if (tag === 'r') {
      const record = JSON.parse(line.slice(2)) as NewRequestRecord;
      const stats = recordStats(record);
      if (stats)
        addStats(
          segment.stats,
          counterKey(String(record.day), Number(record.service_id), Number(record.user_id)),
          stats.errors,
          stats.latencyMs,
        );
      segment.records.push(record);
    } else {
      return;
    }
    segment.lines += 1;
  } catch {
    // The last line of a killed process may be cut short.
  }
}
