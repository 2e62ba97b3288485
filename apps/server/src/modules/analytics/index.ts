import type { Db } from '../../db/db.js';
import type { ZodApi } from '../../http/api.js';
import type { OptionsService } from '../options/index.js';
import { AnalyticsRepo } from './repo.js';
import { analyticsRoutes } from './routes.js';
import { type AnalyticsAccess, AnalyticsService } from './service.js';

export type { AnalyticsAccess, AnalyticsService } from './service.js';

export interface AnalyticsDeps {
  db: Db;
  /** TimeZone decides which day "today" is. */
  options: Pick<OptionsService, 'get'>;
  /** Access lists (issue 17): figures of services a user may not use are left out for them. */
  access?: AnalyticsAccess;
  /** Folds this replica's metering journal first, so today's counts read are those enforced (decision 0043). */
  settleCounts?: () => Promise<void>;
}

export interface AnalyticsModule {
  service: AnalyticsService;
  routes(api: ZodApi): Promise<void>;
  close(): Promise<void>;
}

/** The dashboard's overview, utilization and usage history, read from the counters and rollups. */
export function createAnalyticsModule(deps: AnalyticsDeps): AnalyticsModule {
  const service = new AnalyticsService(new AnalyticsRepo(deps.db), deps.options, deps.access, deps.settleCounts);
  return {
    service,
    routes: (api) => analyticsRoutes(api, service),
    close: async () => undefined,
  };
}
