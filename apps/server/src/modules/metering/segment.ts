import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { NewRequestRecord } from '../history/index.js';

/** The statistics a batch adds to daily_counters besides the count. */
export interface Stats {
  errors: number;
  latencyMs: number;
}

/**
 * One segment of a run's journal: the unit folded into the database in one transaction under its
 * batch id (decision 0043). `counts` holds the run's *absolute* admission count per key
 * (`day|service|user`) as last written, so folding it twice, or an older segment after a newer one,
 * changes nothing; the statistics and records are added once, guarded by the batch id.
 */
export interface Segment {
  run: string;
  seq: number;
  batchId: string;
  file: string;
  counts: Map<string, number>;
  stats: Map<string, Stats>;
  records: NewRequestRecord[];
  /** Lines written to the file (0: nothing to fold). */
  lines: number;
}

/** `day|service|user`. */
export const counterKey = (day: string, serviceId: number, userId: number): string => `${day}|${serviceId}|${userId}`;

export function addStats(stats: Map<string, Stats>, key: string, errors: number, latencyMs: number): void {
  const s = stats.get(key);
  if (s) {
    s.errors += errors;
    s.latencyMs += latencyMs;
  } else {
    stats.set(key, { errors, latencyMs });
  }
}

/** The counter statistics one record carries (a refusal by the limit carries none). */
export function recordStats(record: NewRequestRecord): Stats | undefined {
  if (record.outcome === 'limited') return undefined;
  return { errors: record.outcome === 'error' ? 1 : 0, latencyMs: Number(record.latency_ms) };
}

export const emptySegment = (dir: string, run: string, seq: number, batchId: string = randomUUID()): Segment => ({
  run,
  seq,
  batchId,
  file: path.join(dir, `${run}.${String(seq).padStart(8, '0')}.log`),
  counts: new Map(),
  stats: new Map(),
  records: [],
  lines: 0,
});
