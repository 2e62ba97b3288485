import type { ServiceSpec } from './catalog.js';

/** Methods that count against `rpd_limit` and are recorded (docs/architecture.md §6); everything else is free. */
export const COUNTED_METHODS = new Set(['tools/call', 'resources/read', 'prompts/get']);

export type Admission = { allowed: true } | { allowed: false; count: number; limit: number };

export interface RequestOutcome {
  serviceId: number;
  userId: number;
  method: string;
  /** Tool name, resource URI or prompt name. */
  target: string;
  latencyMs: number;
  outcome: 'ok' | 'error' | 'limited';
  bytesIn: number;
  bytesOut: number;
  errorMessage?: string;
}

/**
 * Metering seen from the data plane. `admit` reserves one counted request for the user today and
 * is exact under concurrency (exactly `rpd_limit` calls get through); `record` stores the outcome
 * without making the caller wait for the database.
 */
export interface Meter {
  admit(service: ServiceSpec, userId: number): Promise<Admission>;
  record(outcome: RequestOutcome): void;
  /** Writes every pending counter and record; called on shutdown. */
  flush(): Promise<void>;
}

/** The message a client sees over the limit: `daily request limit exceeded: n/m`. */
export const limitMessage = (count: number, limit: number): string => `daily request limit exceeded: ${count}/${limit}`;

/** The count and limit of a `limitMessage`, so that a face can say it in the caller's language; else undefined. */
export function parseLimitMessage(text: string): { count: string; limit: string } | undefined {
  const m = /^daily request limit exceeded: (\d+)\/(\d+)$/.exec(text);
  return m ? { count: m[1] ?? '', limit: m[2] ?? '' } : undefined;
}
