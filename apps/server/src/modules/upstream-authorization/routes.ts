import { endpoints } from '@toolport/contract';
import type { FastifyRequest } from 'fastify';
import type { ZodApi } from '../../http/api.js';
import { route } from '../../http/endpoints.js';
import { AppError } from '../../http/errors.js';
import { ok } from '../../http/locale.js';
import { LocalisedError } from '../../i18n/localised-error.js';
import { serviceIdOf } from '../services/index.js';
import type { ConnectFlow } from './connect-flow.js';
import type { ProviderClient } from './provider-client.js';

/** Where the browser came from: the callback and the client document are under it while ServerAddress is unset. */
const originOf = (req: FastifyRequest) => `${req.protocol}://${req.host}`;

/**
 * A provider that cannot be found, reached or registered with is the service's configuration, not a
 * server fault: a 400 with the localised reason.
 */
async function answered<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (err) {
    if (err instanceof LocalisedError) throw new AppError(400, err.key, err.params);
    throw err;
  }
}

/** The OAuth connections of remote services (issue 19): state, settings, connect, callback, disconnect. */
export async function upstreamOAuthRoutes(api: ZodApi, oauth: ConnectFlow, provider: ProviderClient): Promise<void> {
  route(api, endpoints.upstreamOAuth.state, async (req, reply) => ok(reply, await oauth.state(serviceIdOf(req.params.id), req.principal)));

  route(api, endpoints.upstreamOAuth.update, async (req, reply) =>
    ok(reply, await oauth.update(serviceIdOf(req.params.id), req.body, req.principal), req.t('upstream_oauth.settings_saved')),
  );

  route(api, endpoints.upstreamOAuth.connect, async (req, reply) =>
    ok(reply, await answered(oauth.connect(serviceIdOf(req.params.id), req.principal, originOf(req)))),
  );

  route(api, endpoints.upstreamOAuth.disconnect, async (req, reply) =>
    ok(reply, await oauth.disconnect(serviceIdOf(req.params.id), req.principal), req.t('upstream_oauth.disconnected')),
  );

  // The browser arrives from the provider and leaves for the console page that tells the result.
  route(api, endpoints.upstreamOAuth.callback, async (req, reply) => {
    const target = await oauth.callback(req.query, originOf(req));
    return reply.header('cache-control', 'no-store').redirect(target, 302);
  });

  route(api, endpoints.upstreamOAuth.clientMetadata, async (req, reply) =>
    reply.header('cache-control', 'public, max-age=300').send(provider.clientMetadata(originOf(req))),
  );
}
