import { envelope, LogPage, LogsQuery } from '@toolport/contract';
import type { ZodApi } from '../../http/api.js';
import { ok } from '../../http/locale.js';
import type { OptionsService } from '../options/index.js';
import type { LogFilter, LogsRepo } from './repo.js';

/** `all` and empty values of the console's filters mean no filter. */
const chosen = (v: string | undefined): string | undefined => (v && v !== 'all' ? v : undefined);

export async function logRoutes(api: ZodApi, repo: LogsRepo, options: Pick<OptionsService, 'get'>): Promise<void> {
  api.get(
    '/mcp_logs',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['logs'],
        summary: 'The service log and the counted requests, newest first, filtered by service, phase and level',
        description:
          'Counted requests appear as `run` lines with a negative id, their outcome as level (ok: info, refused over the daily limit: warn, failed: error). Their part of `total` comes from the daily rollups. They carry the name of their service while it is installed; `service_name` matches installed services for them, `service_id` any.',
        querystring: LogsQuery,
        response: { 200: envelope(LogPage) },
      },
    },
    async (req, reply) => {
      const q = req.query;
      const filter: LogFilter = {
        serviceId: typeof q.service_id === 'number' ? q.service_id : undefined,
        serviceName: chosen(q.service_name),
        phase: chosen(q.phase),
        level: chosen(q.level),
      };
      const { logs, total } = await repo.page(filter, q.page, q.page_size, options.get('TimeZone'));
      return ok(reply, { logs, total, page: q.page });
    },
  );
}
