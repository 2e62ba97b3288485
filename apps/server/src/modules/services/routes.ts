import {
  envelope,
  HealthCheckResult,
  InstalledService,
  MyEnv,
  MyEnvRequest,
  OkEnvelope,
  ServiceIdParams,
  ToggleResult,
  UpdateServiceRequest,
} from '@toolport/contract';
import { z } from 'zod';
import type { ZodApi } from '../../http/api.js';
import { principalOf } from '../../http/guard.js';
import { ok } from '../../http/locale.js';
import type { HealthChecks } from './health.js';
import type { PersonalEnvs } from './personal-env.js';
import { type ServicesService, serviceIdOf } from './service.js';

const tags = ['services'];

/**
 * The catalog of services: the list, edits, toggles, health checks and personal values. Creating and
 * removing services is the install lifecycle's (modules/market/install).
 */
export async function serviceRoutes(
  api: ZodApi,
  { services, health, personal }: { services: ServicesService; health: HealthChecks; personal: PersonalEnvs },
): Promise<void> {
  api.get(
    '/mcp_market/installed',
    {
      config: { auth: 'user' },
      schema: {
        tags,
        summary: 'Every installed service with the caller’s usage today (values masked for non-admins)',
        response: { 200: envelope(z.array(InstalledService)) },
      },
    },
    async (req, reply) => ok(reply, await services.installed(principalOf(req))),
  );

  api.put(
    '/mcp_services/:id',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'Set the daily limit ({rpd_limit} alone) or edit name, description, URL, headers and variables',
        params: ServiceIdParams,
        body: UpdateServiceRequest,
        response: { 200: OkEnvelope },
      },
    },
    async (req, reply) => {
      const done = await services.update(serviceIdOf(req.params.id), req.body);
      if (done.kind === 'edit') return ok(reply, undefined, req.t('service.updated'));
      return ok(
        reply,
        undefined,
        done.limit > 0 ? req.t('service.limit_updated', { limit: done.limit }) : req.t('service.limit_unlimited'),
      );
    },
  );

  api.post(
    '/mcp_services/:id/toggle',
    {
      config: { auth: 'user' },
      schema: {
        tags,
        summary: 'Enable or disable a service: for everyone (admins) or for the caller alone (personal switch)',
        params: ServiceIdParams,
        response: { 200: envelope(ToggleResult) },
      },
    },
    async (req, reply) => {
      const result = await services.toggle(serviceIdOf(req.params.id), principalOf(req));
      const key =
        result.scope === 'personal'
          ? result.enabled
            ? 'service.enabled_for_me'
            : 'service.disabled_for_me'
          : result.enabled
            ? 'service.enabled'
            : 'service.disabled';
      return ok(reply, result, req.t(key));
    },
  );

  api.post(
    '/mcp_services/:id/health/check',
    {
      config: { auth: 'user' },
      schema: {
        tags,
        summary: 'Check the service now with a real MCP round trip',
        params: ServiceIdParams,
        response: { 200: envelope(HealthCheckResult) },
      },
    },
    async (req, reply) => {
      const id = serviceIdOf(req.params.id);
      await services.mustGet(id);
      return ok(reply, await health.check(id), req.t('service.health_checked'));
    },
  );

  api.get(
    '/mcp_services/:id/my_env',
    {
      config: { auth: 'user' },
      schema: {
        tags,
        summary: 'The variables the caller may set on this service, with the caller’s values masked',
        params: ServiceIdParams,
        response: { 200: envelope(MyEnv) },
      },
    },
    async (req, reply) => ok(reply, await personal.get(await services.mustGet(serviceIdOf(req.params.id)), principalOf(req).id)),
  );

  api.put(
    '/mcp_services/:id/my_env',
    {
      config: { auth: 'user' },
      schema: {
        tags,
        summary: 'Replace the caller’s own values of this service’s variables',
        params: ServiceIdParams,
        body: MyEnvRequest,
        response: { 200: envelope(MyEnv) },
      },
    },
    async (req, reply) => {
      const row = await services.mustGet(serviceIdOf(req.params.id));
      return ok(reply, await personal.set(row, principalOf(req).id, req.body.env), req.t('service.my_env_saved'));
    },
  );
}
