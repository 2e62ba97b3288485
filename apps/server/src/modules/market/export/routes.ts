import { envelope, McpServersDocument } from '@toolport/contract';
import type { ZodApi } from '../../../http/api.js';
import { ok } from '../../../http/locale.js';
import type { Secrets } from '../../../infra/secrets.js';
import type { ServiceRows } from '../../services/index.js';
import { exportServices } from './document.js';

/** `GET /mcp_market/export`: the installed services as an importable `mcpServers` document. */
export async function exportRoutes(
  api: ZodApi,
  { rows, secrets, dataDir }: { rows: Pick<ServiceRows, 'all'>; secrets: Secrets; dataDir: string },
): Promise<void> {
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
    async (_req, reply) => ok(reply, exportServices(await rows.all(), secrets, dataDir)),
  );
}
