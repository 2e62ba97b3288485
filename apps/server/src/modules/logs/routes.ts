import { endpoints } from '@toolport/contract';
import type { ZodApi } from '../../http/api.js';
import { route } from '../../http/endpoints.js';
import { ok } from '../../http/locale.js';
import type { OptionsService } from '../options/index.js';
import type { LogFilter, LogsRepo } from './repo.js';

/** `all` and empty values of the console's filters mean no filter. */
const chosen = (v: string | undefined): string | undefined => (v && v !== 'all' ? v : undefined);

export async function logRoutes(api: ZodApi, repo: LogsRepo, options: Pick<OptionsService, 'get'>): Promise<void> {
  route(api, endpoints.logs.list, async (req, reply) => {
    const q = req.query;
    const filter: LogFilter = {
      serviceId: typeof q.service_id === 'number' ? q.service_id : undefined,
      serviceName: chosen(q.service_name),
      phase: chosen(q.phase),
      level: chosen(q.level),
    };
    const { logs, total } = await repo.page(filter, q.page, q.page_size, options.get('TimeZone'));
    return ok(reply, { logs, total, page: q.page });
  });
}
