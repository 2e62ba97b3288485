import { envelope, McpServersDocument } from '@toolport/contract';
import type { AppContext } from '../../../context.js';
import { ok } from '../../../http/locale.js';
import type { ZodApi } from '../../index.js';
import { ServicesRepo } from '../../services/repo.js';
import { exportServices } from './document.js';

/** `GET /mcp_market/export`: the installed services as an importable `mcpServers` document. */
export async function exportRoutes(api: ZodApi, ctx: AppContext): Promise<void> {
  const repo = new ServicesRepo(ctx.db);
  api.get(
    '/mcp_market/export',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['market'],
        summary: 'Every installed service as an mcpServers document (variable and header values included)',
        description: 'Marketplace packages appear as pinned npx / uvx commands, so importing the document elsewhere installs them again.',
        response: { 200: envelope(McpServersDocument) },
      },
    },
    async (_req, reply) => ok(reply, exportServices(await repo.all(), ctx.secrets, ctx.config.dataDir)),
  );
}
