import { endpoints, isAdminRole } from '@toolport/contract';
import type { ZodApi } from '../../http/api.js';
import { route } from '../../http/endpoints.js';
import { forbidden } from '../../http/errors.js';
import { ok } from '../../http/locale.js';
import type { AnalyticsService } from './service.js';

export async function analyticsRoutes(api: ZodApi, analytics: AnalyticsService): Promise<void> {
  // A user sees the figures of the services open to them only (issue 17); admins see all.
  route(api, endpoints.analytics.overview, async (req, reply) => ok(reply, await analytics.overview(req.principal)));

  route(api, endpoints.analytics.utilization, async (req, reply) => ok(reply, await analytics.utilization(req.principal)));

  route(api, endpoints.analytics.history, async (req, reply) => {
    const q = req.query;
    const me = req.principal;
    const userId = typeof q.user_id === 'number' ? q.user_id : undefined;
    if (userId !== undefined && userId !== me.id && !isAdminRole(me.role)) throw forbidden();
    const serviceId = typeof q.service_id === 'number' ? q.service_id : undefined;
    return ok(reply, await analytics.history({ from: q.from, to: q.to, serviceId, userId }, me));
  });
}
