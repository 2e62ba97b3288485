import { endpoints } from '@toolport/contract';
import type { AppContext } from '../../context.js';
import { route } from '../../http/endpoints.js';
import { ok } from '../../http/locale.js';
import type { ZodApi } from '../index.js';
import { type LogFilter, LogsRepo } from './repo.js';

/** `all` and empty values of the console's filters mean no filter. */
const chosen = (v: string | undefined): string | undefined => (v && v !== 'all' ? v : undefined);

export async function logRoutes(api: ZodApi, ctx: AppContext): Promise<void> {
  const repo = new LogsRepo(ctx.db, (message) => ctx.serviceLog.redact(message));

  route(api, endpoints.logs.list, async (req, reply) => {
    const q = req.query;
    const filter: LogFilter = {
      serviceId: typeof q.service_id === 'number' ? q.service_id : undefined,
      serviceName: chosen(q.service_name),
      phase: chosen(q.phase),
      level: chosen(q.level),
    };
    const { logs, total } = await repo.page(filter, q.page, q.page_size, ctx.options.get('TimeZone'));
    return ok(reply, { logs, total, page: q.page });
  });
}
