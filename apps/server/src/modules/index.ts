import type { FastifyBaseLogger, FastifyInstance, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { AppContext } from '../context.js';
import { analyticsRoutes } from './analytics/routes.js';
import { authRoutes } from './auth/routes.js';
import { logRoutes } from './logs/routes.js';
import { marketRoutes } from './market/search/routes.js';
import { oauthRoutes } from './oauth/routes.js';
import { optionRoutes } from './options/routes.js';
import { serviceRoutes } from './services/routes.js';
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
  await serviceRoutes(api, ctx);
  await analyticsRoutes(api, ctx);
  await logRoutes(api, ctx);
  await marketRoutes(api, ctx);
  await oauthRoutes(api, ctx);
}
