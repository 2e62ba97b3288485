import type { Db } from '../../db/db.js';
import type { ZodApi } from '../../http/api.js';
import type { OptionsService } from '../options/index.js';
import { AnalyticsRepo } from './repo.js';
import { analyticsRoutes } from './routes.js';
import { AnalyticsService } from './service.js';

export type { AnalyticsService } from './service.js';

export interface AnalyticsDeps {
  db: Db;
  /** TimeZone decides which day "today" is. */
  options: Pick<OptionsService, 'get'>;
}

export interface AnalyticsModule {
  service: AnalyticsService;
  routes(api: ZodApi): Promise<void>;
  close(): Promise<void>;
}

/** The dashboard's overview, utilization and usage history, read from the counters and rollups. */
export function createAnalyticsModule(deps: AnalyticsDeps): AnalyticsModule {
  const service = new AnalyticsService(new AnalyticsRepo(deps.db), deps.options);
  return {
    service,
    routes: (api) => analyticsRoutes(api, service),
    close: async () => undefined,
  };
}
