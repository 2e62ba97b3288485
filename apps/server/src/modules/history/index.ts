import type { Logger } from 'pino';
import type { Db } from '../../db/db.js';
import type { Leadership } from '../../infra/leader.js';
import type { OptionsService } from '../options/index.js';
import { HistoryRetention } from './retention.js';

export { addDays, dayEnd, daysBetween, isDay } from './days.js';
export type { HistoryRetention } from './retention.js';
export { type NewRequestRecord, storeRecords, storeRecordsIn } from './rollups.js';

export interface HistoryDeps {
  db: Db;
  /** The retention preferences and TimeZone. */
  options: Pick<OptionsService, 'get'>;
  logger: Logger;
  /** Several replicas: the scheduled purge runs on the leader only. */
  leader: Pick<Leadership, 'runs'>;
}

export interface HistoryModule {
  /** The purge of old request records, service logs and install logs. */
  retention: HistoryRetention;
  /** Starts the scheduled purge (once the app is up). */
  start(): void;
  /** Stops the purge between two batches. */
  close(): Promise<void>;
}

/** Request records and their daily rollups: the retention purge. The rebuild is the `history` CLI command. */
export function createHistoryModule(deps: HistoryDeps): HistoryModule {
  const retention = new HistoryRetention(deps.db, deps.options, deps.logger, { leader: deps.leader });
  return {
    retention,
    start: () => retention.start(),
    close: () => retention.close(),
  };
}
