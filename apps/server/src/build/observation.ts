import { type AnalyticsModule, createAnalyticsModule } from '../modules/analytics/index.js';
import { type AuditModule, createAuditModule } from '../modules/audit/index.js';
import type { ExposurePorts } from '../modules/exposure/index.js';
import { createHistoryModule, type HistoryModule } from '../modules/history/index.js';
import { createLogsModule, type LogsModule } from '../modules/logs/index.js';
import type { OptionsService } from '../modules/options/index.js';
import { createStatusModule, type StatusModule } from '../modules/status/index.js';
import { VERSION } from '../version.js';
import type { Core } from './core.js';
import { closing } from './identity.js';
import type { Platform } from './platform.js';

export type ObservationDeps = Pick<Core, 'db' | 'logger' | 'lifecycle'> &
  Pick<Platform, 'gate' | 'leader' | 'serviceLog' | 'metering'> & {
    options: OptionsService;
    /** Who may see which service's figures (the exposure ports' access lists). */
    access: ExposurePorts['access'];
    /** The sign-in providers the status page names (modules/sign-in-providers). */
    oidcProviders: Parameters<typeof createStatusModule>[0]['oidcProviders'];
    startedAt: number;
  };

/** What is watched and kept: the retention purge, analytics, the service logs, the audit trail, the status. */
export interface Observation {
  history: HistoryModule;
  analytics: AnalyticsModule;
  logs: LogsModule;
  audit: AuditModule;
  status: StatusModule;
}

export function buildObservation(d: ObservationDeps): Observation {
  const { db, logger, lifecycle, gate, leader, serviceLog, metering, options, access } = d;
  const history = createHistoryModule({ db, options, logger, leader });
  // The retention purge runs in the background once the server is up and stops between two batches on close.
  lifecycle.add({ name: 'history', start: () => history.start(), close: () => history.close() });
  const analytics = closing(lifecycle, 'analytics', createAnalyticsModule({ db, options, access, settleCounts: metering.settle }));
  const logs = closing(lifecycle, 'logs', createLogsModule({ db, serviceLog, options }));
  const audit = closing(lifecycle, 'audit', createAuditModule({ db, options, logger }));
  const status = closing(
    lifecycle,
    'status',
    createStatusModule({ db, gate, options, version: VERSION, startedAt: d.startedAt, oidcProviders: d.oidcProviders }),
  );
  return { history, analytics, logs, audit, status };
}
