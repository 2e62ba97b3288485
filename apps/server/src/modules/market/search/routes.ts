import { envelope, MarketPackage, MarketSearchQuery, PackageDetails, PackageDetailsQuery } from '@toolport/contract';
import { z } from 'zod';
import type { ZodApi } from '../../../http/api.js';
import { ok } from '../../../http/locale.js';
import { type MarketService, parseSources } from './service.js';

const tags = ['market'];

/** Browsing the marketplace: open to every signed-in user (it changes nothing). */
export async function searchRoutes(api: ZodApi, market: MarketService): Promise<void> {
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
}
