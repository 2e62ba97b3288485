import { ISOLATED_SESSIONS_PER_USER } from '@toolport/contract';
import type { Logger } from 'pino';
import type { UpstreamMetrics } from '../../infra/metrics.js';
import type { ServiceLog } from '../../infra/service-log.js';
import type { OptionsReader } from '../options-reader.js';

/** What the upstream side needs of the service log: the batched, redacting writer. */
export type ServiceLogWriter = Pick<ServiceLog, 'write' | 'registerSecrets' | 'redact'>;

export type { OptionsReader } from '../options-reader.js';

/**
 * Timings with production defaults; tests shorten them. Nothing here is a preference an admin
 * sets: those come from the options (StdioIdleTimeoutMinutes, UpstreamCallTimeoutSeconds …).
 */
export interface UpstreamTuning {
  /** Connecting plus the upstream `initialize` handshake. */
  initializeTimeoutMs: number;
  /** Between SIGTERM and SIGKILL to a process group. */
  stopGraceMs: number;
  /** First crash-restart delay; doubles per crash up to backoffMaxMs. */
  backoffBaseMs: number;
  backoffMaxMs: number;
  /** A process that ran this long before crashing restarts with the first delay again. */
  stableMs: number;
  /** How often idle links are looked for. */
  idleScanMs: number;
  /** Overrides StdioIdleTimeoutMinutes (tests). */
  idleTimeoutMs: number | undefined;
  /** Isolated ('session') links one user may hold on one service. */
  perUserSessionLinks: number;
  stderrLinesPerSecond: number;
  /** A stdio process that takes none of its waiting input for this long "is not reading its input" (stdin-writer.ts). */
  stdinStallMs: number;
  /** A request that finds its link restarting waits for the restart only if it is this close. */
  maxRestartWaitMs: number;
}

export const defaultTuning: UpstreamTuning = {
  initializeTimeoutMs: 30_000,
  stopGraceMs: 3_000,
  backoffBaseMs: 1_000,
  backoffMaxMs: 60_000,
  stableMs: 60_000,
  idleScanMs: 30_000,
  idleTimeoutMs: undefined,
  perUserSessionLinks: ISOLATED_SESSIONS_PER_USER,
  stderrLinesPerSecond: 20,
  stdinStallMs: 30_000,
  maxRestartWaitMs: 5_000,
};

export interface LinkDeps {
  serviceLog: ServiceLogWriter;
  options: OptionsReader;
  logger: Logger;
  tuning: UpstreamTuning;
  /** Restarts are counted here (infra/metrics.ts). */
  metrics?: UpstreamMetrics;
}
