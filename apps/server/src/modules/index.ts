import type { FastifyBaseLogger, FastifyInstance, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { AppContext } from '../context.js';
import { analyticsRoutes } from './analytics/routes.js';
import { authRoutes } from './auth/routes.js';
import { logRoutes } from './logs/routes.js';
import { createMarketModule, createMarketSources, createReplicaInstalls, type MarketModule } from './market/index.js';
import { oauthRoutes } from './oauth/routes.js';
import { optionRoutes } from './options/routes.js';
import { createServiceRows, createServicesModule, type HealthProbe, type ServicesModule } from './services/index.js';
import { statusRoutes } from './status/routes.js';
import { userRoutes } from './users/routes.js';

export type ZodApi = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  ZodTypeProvider
>;

/** Every API module, mounted under /api. A new module adds one line here. */
export async function registerModules(api: ZodApi, ctx: AppContext): Promise<void> {
  await statusRoutes(api, ctx);
  await authRoutes(api, ctx);
  await userRoutes(api, ctx);
  await optionRoutes(api, ctx);
  const { services, market } = createCatalogAndMarket(api, ctx);
  await services.routes(api);
  await analyticsRoutes(api, ctx);
  await logRoutes(api, ctx);
  await market.start();
  await market.routes(api);
  await oauthRoutes(api, ctx);
}

/**
 * The services catalog and the marketplace, built from the context until the composition root builds
 * them: the catalog reader, the service rows and the replica installs before the gateway, the rest
 * with a port to it.
 */
function createCatalogAndMarket(api: ZodApi, ctx: AppContext): { services: ServicesModule; market: MarketModule } {
  const { db, config, logger, secrets, events, serviceLog } = ctx;
  // The gateway is built after the modules: health checks and install handshakes reach it when they run.
  const gateway: HealthProbe = { checkHealth: (serviceId) => ctx.gateway.checkHealth(serviceId) };
  const rows = createServiceRows({ db, events });
  const services = createServicesModule({ db, secrets, events, options: ctx.options, serviceLog, rows, catalog: ctx.catalog, gateway });
  const sources = createMarketSources(config, logger);
  const replicaInstalls = createReplicaInstalls({
    config,
    redis: ctx.redis,
    events,
    catalog: ctx.catalog,
    rows,
    serviceLog,
    logger,
    sources,
  });
  // The gateway's pool reads them from the context when it is built, right after the modules.
  ctx.packages = replicaInstalls;
  const market = createMarketModule({
    db,
    config,
    logger,
    secrets,
    events,
    serviceLog,
    metrics: ctx.metrics,
    leader: ctx.leader,
    principals: ctx.principals,
    services,
    sources,
    replicaInstalls,
    gateway,
  });
  // The gateway stops in preClose; then installs and first checks finish writing before the database closes.
  api.addHook('onClose', async () => {
    await market.close();
    await services.close();
  });
  return { services, market };
}
