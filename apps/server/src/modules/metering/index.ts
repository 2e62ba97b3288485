import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import { bounded, type DatabaseGate } from '../../db/availability.js';
import type { Db } from '../../db/db.js';
import type { Meter } from '../../gateway/meter.js';
import { DbMeter } from './meter.js';

export { DbMeter } from './meter.js';

const SETTLE_MS = 1000;

export interface MeteringDeps {
  db: Db;
  logger: Logger;
  /** With REDIS_URL the daily limits are counted in Redis, so that every replica sees the same count; the journal lives in DATA_DIR. */
  config: Pick<Config, 'redisUrl' | 'redisPrefix' | 'meterCountWrites' | 'dataDir'>;
  /** The TimeZone preference, read on every call so that a change applies at once. */
  timeZone: () => string;
  /** Bounds the reads on the call path while the database is away. */
  gate?: DatabaseGate;
  /** Request records dropped because too many waited for the database. */
  onRecordsDropped?: (n: number) => void;
}

export interface MeteringModule {
  /** The gateway's meter: daily limits, counters and request records. */
  meter: Meter;
  /** Folds this replica's journal now (bounded): what the console reads for today is then what was enforced. */
  settle(): Promise<void>;
  /** Folds what is pending into the database and lets go of Redis. */
  close(): Promise<void>;
}

/**
 * The gateway's `Meter` on the database (and Redis): connects to Redis first when REDIS_URL is set,
 * and folds the journals that killed runs left in DATA_DIR before it admits anything.
 */
export async function createMeteringModule(deps: MeteringDeps): Promise<MeteringModule> {
  const { redisUrl, redisPrefix } = deps.config;
  // The Redis client is loaded only with REDIS_URL: a single instance (and most test files) never needs it.
  const redis = redisUrl ? await (await import('./shared-count.js')).SharedCounts.connect(redisUrl, `${redisPrefix}rpd:`) : undefined;
  const meter = new DbMeter({
    db: deps.db,
    logger: deps.logger,
    dataDir: deps.config.dataDir,
    timeZone: deps.timeZone,
    redis,
    gate: deps.gate,
    onRecordsDropped: deps.onRecordsDropped,
    deferCountWrites: deps.config.meterCountWrites === 'deferred',
  });
  await meter.start();
  return {
    meter,
    // A database that does not answer must not hold the console's request: it gets the figures as they are.
    settle: () => bounded(meter.settle(), SETTLE_MS).catch(() => undefined),
    async close() {
      // Pending counters and request records reach the database (or stay in the journal) before the process ends.
      await meter.close();
      await redis?.close();
    },
  };
}
