import { envelope, isAdminRole, ServiceUtilization, SystemOverview } from '@toolport/contract';
import { z } from 'zod';
import type { ZodApi } from '../../http/api.js';
import { forbidden } from '../../http/errors.js';
import { principalOf } from '../../http/guard.js';
import { ok } from '../../http/locale.js';
import { HistoryQuery, UsageHistory } from './history-schema.js';
import type { AnalyticsService } from './service.js';

const tags = ['analytics'];

export async function analyticsRoutes(api: ZodApi, analytics: AnalyticsService): Promise<void> {
  api.get(
    '/analytics/system/overview',
    {
      config: { auth: 'user' },
      schema: {
        tags,
        summary: 'Service counts by health and today’s requests and average latency',
        response: { 200: envelope(SystemOverview) },
      },
    },
    async (_req, reply) => ok(reply, await analytics.overview()),
  );

  api.get(
    '/analytics/services/utilization',
    {
      config: { auth: 'user' },
      schema: {
        tags,
        summary: 'Today’s requests and average latency per service',
        response: { 200: envelope(z.array(ServiceUtilization)) },
      },
    },
    async (_req, reply) => ok(reply, await analytics.utilization()),
  );

  api.get(
    '/analytics/history',
    {
      config: { auth: 'user' },
      schema: {
        tags,
        summary: 'Requests, errors, latency and bytes per day, per service and per tool over a range of days',
        description:
          'From the daily rollups, which are kept after the raw request records are purged. `from`/`to` are days (YYYY-MM-DD) in the server time zone; by default the last 30 days. At most 366 days. `user_id` other than your own needs an administrator.',
        querystring: HistoryQuery,
        response: { 200: envelope(UsageHistory) },
      },
    },
    async (req, reply) => {
      const q = req.query;
      const me = principalOf(req);
      const userId = typeof q.user_id === 'number' ? q.user_id : undefined;
      if (userId !== undefined && userId !== me.id && !isAdminRole(me.role)) throw forbidden();
      const serviceId = typeof q.service_id === 'number' ? q.service_id : undefined;
      return ok(reply, await analytics.history({ from: q.from, to: q.to, serviceId, userId }));
    },
  );
}
