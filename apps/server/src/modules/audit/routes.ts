import { Readable } from 'node:stream';
import { endpoints } from '@toolport/contract';
import type { ZodApi } from '../../http/api.js';
import { route } from '../../http/endpoints.js';
import { ok } from '../../http/locale.js';
import type { AuditRepo } from './repo.js';

/** `GET /audit` (a page, newest first) and `GET /audit/export` (JSON lines, oldest first). */
export async function auditRoutes(api: ZodApi, repo: AuditRepo): Promise<void> {
  route(api, endpoints.audit.list, async (req, reply) => {
    const { page, page_size, ...filter } = req.query;
    const { entries, total } = await repo.page(filter, page, page_size);
    return ok(reply, { entries, total, page });
  });

  route(api, endpoints.audit.export, async (req, reply) => {
    const entries = repo.all(req.query);
    const lines = async function* () {
      for await (const entry of entries) yield `${JSON.stringify(entry)}\n`;
    };
    const day = new Date().toISOString().slice(0, 10);
    return reply
      .header('content-type', 'application/x-ndjson; charset=utf-8')
      .header('content-disposition', `attachment; filename="toolport-audit-${day}.jsonl"`)
      .header('cache-control', 'no-store')
      .send(Readable.from(lines()));
  });
}
