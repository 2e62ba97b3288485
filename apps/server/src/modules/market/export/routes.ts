import { endpoints } from '@toolport/contract';
import type { ZodApi } from '../../../http/api.js';
import { route } from '../../../http/endpoints.js';
import { ok } from '../../../http/locale.js';
import type { Secrets } from '../../../infra/secrets.js';
import type { ServiceRows } from '../../services/index.js';
import { exportServices } from './document.js';

/** `GET /mcp_market/export[?include_secrets=true]`: the installed services as an importable `mcpServers` document. */
export async function exportRoutes(
  api: ZodApi,
  { rows, secrets, dataDir }: { rows: Pick<ServiceRows, 'all'>; secrets: Secrets; dataDir: string },
): Promise<void> {
  route(api, endpoints.market.export, async (req, reply) => {
    const includeSecrets = req.query.include_secrets === 'true' || req.query.include_secrets === '1';
    return ok(reply, exportServices(await rows.all(), secrets, dataDir, { includeSecrets }));
  });
}
