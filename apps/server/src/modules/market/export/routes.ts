import { endpoints } from '@toolport/contract';
import type { ZodApi } from '../../../http/api.js';
import { route } from '../../../http/endpoints.js';
import { ok } from '../../../http/locale.js';
import type { Secrets } from '../../../infra/secrets.js';
import type { ServiceRows } from '../../services/index.js';
import { exportServices } from './document.js';

/** `GET /mcp_market/export`: the installed services as an importable `mcpServers` document. */
export async function exportRoutes(
  api: ZodApi,
  { rows, secrets, dataDir }: { rows: Pick<ServiceRows, 'all'>; secrets: Secrets; dataDir: string },
): Promise<void> {
  route(api, endpoints.market.export, async (_req, reply) => ok(reply, exportServices(await rows.all(), secrets, dataDir)));
}
