import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import type { Db } from '../../db/db.js';
import type { Meter } from '../../gateway/meter.js';
import { DbMeter, RedisAdmission } from './meter.js';

export { DbMeter } from './meter.js';

export interface MeteringDeps {
  db: Db;
  logger: Logger;
  /** With REDIS_URL the daily limits are counted in Redis, so that every replica sees the same count. */
  config: Pick<Config, 'redisUrl' | 'redisPrefix' | 'meterCountWrites'>;
  /** The TimeZone preference, read on every call so that a change applies at once. */
  timeZone: () => string;
}

export interface MeteringModule {
  /** The gateway's meter: daily limits, counters and request records. */
  meter: Meter;
  /** Writes what is pending and lets go of Redis. */
  close(): Promise<void>;
}

/** The gateway's `Meter` on the database (and Redis): connects to Redis first when REDIS_URL is set. */
export async function createMeteringModule(deps: MeteringDeps): Promise<MeteringModule> {
  const { redisUrl, redisPrefix } = deps.config;
  const redis = redisUrl ? await RedisAdmission.connect(redisUrl, `${redisPrefix}rpd:`) : undefined;
  const meter = new DbMeter({
    db: deps.db,
    logger: deps.logger,
    timeZone: deps.timeZone,
    redis,
    deferCountWrites: deps.config.meterCountWrites === 'deferred',
  });
  return {
    meter,
    async close() {
      // Pending counters and request records reach the database before the process ends.
      await meter.flush();
      await redis?.close();
    },
  };
}
