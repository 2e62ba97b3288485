import type { Db } from '../../db/db.js';
import type { ZodApi } from '../../http/api.js';
import type { ServiceLog } from '../../infra/service-log.js';
import type { OptionsService } from '../options/index.js';
import { LogsRepo } from './repo.js';
import { logRoutes } from './routes.js';

export type { LogsRepo } from './repo.js';

export interface LogsDeps {
  db: Db;
  /** Lines written before a secret was registered are masked again when read. */
  serviceLog: Pick<ServiceLog, 'redact'>;
  /** TimeZone decides where a day of the date filter begins and ends. */
  options: Pick<OptionsService, 'get'>;
}

export interface LogsModule {
  logs: LogsRepo;
  routes(api: ZodApi): Promise<void>;
  close(): Promise<void>;
}

/** The admin's view of the request records and the service log. */
export function createLogsModule(deps: LogsDeps): LogsModule {
  const logs = new LogsRepo(deps.db, (message) => deps.serviceLog.redact(message));
  return {
    logs,
    routes: (api) => logRoutes(api, logs, deps.options),
    close: async () => undefined,
  };
}
