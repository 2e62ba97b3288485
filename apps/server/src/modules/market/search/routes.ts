import { endpoints } from '@toolport/contract';
import type { ZodApi } from '../../../http/api.js';
import { route } from '../../../http/endpoints.js';
import { AppError } from '../../../http/errors.js';
import { ok } from '../../../http/locale.js';
import { type MarketService, parseSources, SOURCE_LABEL, SOURCE_SETTING } from './service.js';

/** Browsing the marketplace: open to every signed-in user (it changes nothing). */
export async function searchRoutes(api: ZodApi, market: MarketService): Promise<void> {
  route(api, endpoints.market.search, async (req, reply) => {
    const asked = parseSources(req.query.sources);
    const { packages, failures, partials } = await market.search(req.query.query, asked);
    const warnings = failures.map((f) => ({
      source: f.source,
      message: req.t('market.search_source_failed', {
        source: SOURCE_LABEL[f.source],
        reason: f.reason,
        setting: SOURCE_SETTING[f.source],
      }),
    }));
    // Every asked source failed: an empty list would read as "no such package", which nobody knows.
    if (failures.length > 0 && failures.length === asked.length) {
      throw new AppError(
        502,
        'market.search_failed',
        { failures: warnings.map((w) => w.message).join('; ') },
        { code: 'market_search_failed', data: { failures } },
      );
    }
    for (const p of partials) {
      warnings.push({
        source: p.source,
        message: req.t('market.search_source_partial', {
          source: SOURCE_LABEL[p.source],
          part: p.part,
          reason: p.reason,
          setting: p.setting,
        }),
      });
    }
    return warnings.length > 0 ? { ...ok(reply, packages), warnings } : ok(reply, packages);
  });

  route(api, endpoints.market.packageDetails, async (req, reply) =>
    ok(reply, await market.details(req.query.package_name, req.query.package_manager)),
  );
}
