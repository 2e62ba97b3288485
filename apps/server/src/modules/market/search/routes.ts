import { endpoints } from '@toolport/contract';
import type { ZodApi } from '../../../http/api.js';
import { route } from '../../../http/endpoints.js';
import { ok } from '../../../http/locale.js';
import { type MarketService, parseSources } from './service.js';

/** Browsing the marketplace: open to every signed-in user (it changes nothing). */
export async function searchRoutes(api: ZodApi, market: MarketService): Promise<void> {
  route(api, endpoints.market.search, async (req, reply) =>
    ok(reply, await market.search(req.query.query, parseSources(req.query.sources))),
  );

  route(api, endpoints.market.packageDetails, async (req, reply) =>
    ok(reply, await market.details(req.query.package_name, req.query.package_manager)),
  );
}
