import { endpoints, isAdminRole } from '@toolport/contract';
import type { ZodApi } from '../../http/api.js';
import { route } from '../../http/endpoints.js';
import { forbidden } from '../../http/errors.js';
import { ok } from '../../http/locale.js';
import type { AnalyticsService } from './service.js';

export async function analyticsRoutes(api: ZodApi, analytics: AnalyticsService): Promise<void> {
  route(api, endpoints.analytics.overview, async (_req, reply) => ok(reply, await analytics.overview()));

  route(api, endpoints.analytics.utilization, async (_req, reply) => ok(reply, await analytics.utilization()));

  route(api, endpoints.analytics.history, async (req, reply) => {
    const q = req.query;
    const me = req.principal;
    const userId = typeof q.user_id === 'number' ? q.user_id : undefined;
    if (userId !== undefined && userId !== me.id && !isAdminRole(me.role)) throw forbidden();
    const serviceId = typeof q.service_id === 'number' ? q.service_id : undefined;
    return ok(reply, await analytics.history({ from: q.from, to: q.to, serviceId, userId }));
  });
}
