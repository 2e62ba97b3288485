import { endpoints, type McpServersDocument, type ToolportSettings } from '@toolport/contract';
import type { ServiceRow } from '../../../db/schema.js';
import type { ZodApi } from '../../../http/api.js';
import { route } from '../../../http/endpoints.js';
import { ok } from '../../../http/locale.js';
import type { Secrets } from '../../../infra/secrets.js';
import type { ServiceRows } from '../../services/index.js';
import { exportServices } from './document.js';

/** The `toolport` block of an export: overrides, access and groups (the exposure module's ExposureTransfer). */
export interface SettingsExport {
  exportOf(services: { id: number; name: string }[]): Promise<ToolportSettings | undefined>;
}

/** The document with its `toolport` block, when there is anything to put in it. */
export async function exportDocument(
  services: ServiceRow[],
  secrets: Secrets,
  dataDir: string,
  opts: { includeSecrets?: boolean },
  settings: SettingsExport | undefined,
): Promise<McpServersDocument> {
  const doc = exportServices(services, secrets, dataDir, opts);
  const block = await settings?.exportOf(services.map((s) => ({ id: s.id, name: s.name })));
  return block ? { ...doc, toolport: block } : doc;
}

/** `GET /mcp_market/export[?include_secrets=true]`: the installed services as an importable `mcpServers` document. */
export async function exportRoutes(
  api: ZodApi,
  {
    rows,
    secrets,
    dataDir,
    settings,
  }: { rows: Pick<ServiceRows, 'all'>; secrets: Secrets; dataDir: string; settings: SettingsExport | undefined },
): Promise<void> {
  route(api, endpoints.market.export, async (req, reply) => {
    const includeSecrets = req.query.include_secrets === 'true' || req.query.include_secrets === '1';
    return ok(reply, await exportDocument(await rows.all(), secrets, dataDir, { includeSecrets }, settings));
  });
}
