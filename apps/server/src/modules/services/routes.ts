import { endpoints, type HealthCheckResult } from '@toolport/contract';
import type { ZodApi } from '../../http/api.js';
import { route } from '../../http/endpoints.js';
import { ok } from '../../http/locale.js';
import { readStoredText, type Translator } from '../../i18n/localised-error.js';
import type { HealthChecks } from './health.js';
import type { PersonalEnvs } from './personal-env.js';
import { type ServicesService, serviceIdOf } from './service.js';

/**
 * The catalog of services: the list, edits, toggles, health checks and personal values. Creating and
 * removing services is the install lifecycle's (modules/market/install).
 */
export async function serviceRoutes(
  api: ZodApi,
  { services, health, personal }: { services: ServicesService; health: HealthChecks; personal: PersonalEnvs },
): Promise<void> {
  route(api, endpoints.services.installed, async (req, reply) => ok(reply, await services.installed(req.principal, req.t)));

  route(api, endpoints.services.update, async (req, reply) => {
    const done = await services.update(serviceIdOf(req.params.id), req.body);
    if (done.kind === 'edit') return ok(reply, undefined, req.t('service.updated'));
    return ok(reply, undefined, done.limit > 0 ? req.t('service.limit_updated', { limit: done.limit }) : req.t('service.limit_unlimited'));
  });

  route(api, endpoints.services.toggle, async (req, reply) => {
    const result = await services.toggle(serviceIdOf(req.params.id), req.principal);
    const key =
      result.scope === 'personal'
        ? result.enabled
          ? 'service.enabled_for_me'
          : 'service.disabled_for_me'
        : result.enabled
          ? 'service.enabled'
          : 'service.disabled';
    return ok(reply, result, req.t(key));
  });

  route(api, endpoints.services.healthCheck, async (req, reply) => {
    const id = serviceIdOf(req.params.id);
    await services.mustUse(id, req.principal);
    return ok(reply, inWords(await health.check(id, req.principal), req.t), req.t('service.health_checked'));
  });

  route(api, endpoints.services.reconnect, async (req, reply) => {
    const result = inWords(await health.reconnect(serviceIdOf(req.params.id)), req.t);
    return ok(reply, result, req.t(result.health_status === 'healthy' ? 'service.reconnected' : 'service.reconnect_failed'));
  });

  route(api, endpoints.services.myEnv, async (req, reply) =>
    ok(reply, await personal.get(await services.mustUse(serviceIdOf(req.params.id), req.principal), req.principal.id)),
  );

  route(api, endpoints.services.setMyEnv, async (req, reply) => {
    const row = await services.mustUse(serviceIdOf(req.params.id), req.principal);
    return ok(reply, await personal.set(row, req.principal.id, req.body.env), req.t('service.my_env_saved'));
  });
}

/** A check's reason in the caller's language: the gateway's own words translated, a tool's output as it is. */
const inWords = (result: HealthCheckResult, t: Translator): HealthCheckResult => ({
  ...result,
  health_details: readStoredText(result.health_details, t),
});
