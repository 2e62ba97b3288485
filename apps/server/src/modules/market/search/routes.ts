import { envelope, MarketPackage, MarketSearchQuery, PackageDetails, PackageDetailsQuery } from '@toolport/contract';
import { z } from 'zod';
import type { AppContext } from '../../../context.js';
import { ok } from '../../../http/locale.js';
import type { ZodApi } from '../../index.js';
import { batchRoutes } from '../batch/routes.js';
import { exportRoutes } from '../export/routes.js';
import { installRoutes } from '../install/routes.js';
import { createMarketSources } from '../sources/index.js';
import { MarketRepo } from './repo.js';
import { MarketService, parseSources } from './service.js';

const tags = ['market'];

/** The marketplace: browsing is open to every signed-in user (it changes nothing); installing is for admins. */
export async function marketRoutes(api: ZodApi, ctx: AppContext): Promise<void> {
  const market = new MarketService(createMarketSources(ctx.config, ctx.logger), new MarketRepo(ctx.db));

  api.get(
    '/mcp_market/search',
    {
      config: { auth: 'user' },
      schema: {
        tags,
        summary: 'Search npm, PyPI and the MCP Registry; an empty query gives an empty list',
        querystring: MarketSearchQuery,
        response: { 200: envelope(z.array(MarketPackage)) },
      },
    },
    async (req, reply) => ok(reply, await market.search(req.query.query, parseSources(req.query.sources))),
  );

  api.get(
    '/mcp_market/package_details',
    {
      config: { auth: 'user' },
      schema: {
        tags,
        summary: 'One package: readme, variables, the mcpServers entry that runs it, installed state',
        querystring: PackageDetailsQuery,
        response: { 200: envelope(PackageDetails) },
      },
    },
    async (req, reply) => ok(reply, await market.details(req.query.package_name, req.query.package_manager)),
  );

  const installs = await installRoutes(api, ctx, market);
  await batchRoutes(api, ctx, installs);
  await exportRoutes(api, ctx);
}
