import type { RollupFigures } from '../../src/db/schema.js';
import { dayIn } from '../../src/infra/day.js';
import type { NewRequestRecord } from '../../src/modules/history/rollups.js';

/** A small deterministic generator (LCG), so a failing case can be replayed. */
export function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1_664_525) + 1_013_904_223) >>> 0;
    return s / 2 ** 32;
  };
}

export interface RecordSpec {
  from: number;
  to: number;
  count: number;
  timeZone: string;
  serviceIds: number[];
  userIds: number[];
  seed?: number;
}

/**
 * Request records spread at random over [from, to): several services, users, methods and targets,
 * about 1 in 8 failed and 1 in 12 refused, a few sharing a millisecond. `day` is the record's day in
 * the time zone, as the meter writes it.
 */
export function makeRecords(spec: RecordSpec): NewRequestRecord[] {
  const rnd = random(spec.seed ?? 1);
  const pick = <T>(list: T[]): T => list[Math.floor(rnd() * list.length)] as T;
  const out: NewRequestRecord[] = [];
  let last = spec.from;
  for (let i = 0; i < spec.count; i += 1) {
    // Even milliseconds (service log lines in tests take odd ones), now and then the same as the previous record.
    const at = rnd() < 0.05 ? last : spec.from + 2 * Math.floor((rnd() * (spec.to - spec.from)) / 2);
    last = at;
    const roll = rnd();
    const outcome = roll < 0.125 ? 'error' : roll < 0.2 ? 'limited' : 'ok';
    const method = pick(['tools/call', 'tools/call', 'tools/call', 'resources/read', 'prompts/get']);
    out.push({
      created_at: at,
      day: dayIn(spec.timeZone, at),
      service_id: pick(spec.serviceIds),
      user_id: pick(spec.userIds),
      method,
      target: method === 'resources/read' ? `file:///doc/${Math.floor(rnd() * 3)}` : pick(['echo', 'add', 'search', '']),
      latency_ms: outcome === 'limited' ? 0 : Math.floor(rnd() * 900),
      outcome,
      bytes_in: 50 + Math.floor(rnd() * 500),
      bytes_out: outcome === 'limited' ? 80 : Math.floor(rnd() * 5000),
      error_message: outcome === 'error' ? `boom ${i}` : outcome === 'limited' ? 'daily request limit exceeded: 5/5' : '',
    });
  }
  return out;
}

export type Figures = RollupFigures;

/** A stored rollup row's figures as numbers (PostgreSQL answers BIGINT sums as strings). */
export function figuresOf(row: Figures): Figures {
  return {
    request_count: Number(row.request_count),
    error_count: Number(row.error_count),
    limited_count: Number(row.limited_count),
    latency_sum_ms: Number(row.latency_sum_ms),
    latency_max_ms: Number(row.latency_max_ms),
    bytes_in: Number(row.bytes_in),
    bytes_out: Number(row.bytes_out),
  };
}

/** The expected rollup of records by a key, computed independently of the code under test. */
export function expectedRollup(records: NewRequestRecord[], keyOf: (r: NewRequestRecord) => string): Map<string, Figures> {
  const out = new Map<string, Figures>();
  for (const r of records) {
    const key = keyOf(r);
    const f = out.get(key) ?? {
      request_count: 0,
      error_count: 0,
      limited_count: 0,
      latency_sum_ms: 0,
      latency_max_ms: 0,
      bytes_in: 0,
      bytes_out: 0,
    };
    const admitted = r.outcome !== 'limited';
    f.request_count += admitted ? 1 : 0;
    f.error_count += r.outcome === 'error' ? 1 : 0;
    f.limited_count += admitted ? 0 : 1;
    f.latency_sum_ms += admitted ? (r.latency_ms ?? 0) : 0;
    f.latency_max_ms = Math.max(f.latency_max_ms, admitted ? (r.latency_ms ?? 0) : 0);
    f.bytes_in += r.bytes_in ?? 0;
    f.bytes_out += r.bytes_out ?? 0;
    out.set(key, f);
  }
  return out;
}

export const fineKey = (r: { day: string; service_id: number; user_id: number; method: string; target?: string | undefined }) =>
  [r.day, r.service_id, r.user_id, r.method, r.target ?? ''].join('|');
export const serviceDayKey = (r: { day: string; service_id: number }) => `${r.day}|${r.service_id}`;
