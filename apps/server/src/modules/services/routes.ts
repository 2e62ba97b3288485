import {
  CustomServiceRequest,
  CustomServiceResult,
  envelope,
  HealthCheckResult,
  InstalledService,
  InstallStatus,
  MyEnv,
  MyEnvRequest,
  OkEnvelope,
  ServiceIdParams,
  TaskIdParams,
  ToggleResult,
  UninstallRequest,
  UpdateServiceRequest,
} from '@toolport/contract';
import { z } from 'zod';
import type { AppContext } from '../../context.js';
import { principalOf } from '../../http/guard.js';
import { ok } from '../../http/locale.js';
import type { ZodApi } from '../index.js';
import { InstallTasks } from '../market/install/tasks.js';
import { HealthChecks } from './health.js';
import { PersonalEnvs } from './personal-env.js';
import { ServicesRepo } from './repo.js';
import { ServicesService, serviceIdOf } from './service.js';

const tags = ['services'];

/** Installed services: the list, custom installs, edits, toggles, health checks, uninstall. */
export async function serviceRoutes(api: ZodApi, ctx: AppContext): Promise<void> {
  const repo = new ServicesRepo(ctx.db);
  const health = new HealthChecks(ctx, repo);
  const services = new ServicesService(ctx, repo, new InstallTasks(ctx.db), health);
  const personal = new PersonalEnvs(ctx, repo);
  // The gateway stops in preClose; then the first checks of new services finish writing before the database closes.
  api.addHook('onClose', async () => services.drain());

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

  api.post(
    '/mcp_market/custom_service',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'Create a custom stdio, sse or streamableHttp service',
        body: CustomServiceRequest,
        response: { 201: envelope(CustomServiceResult) },
      },
    },
    async (req, reply) => {
      const result = await services.createCustom(principalOf(req), req.body);
      const message = req.t(result.task_id ? 'service.install_started' : 'service.created', { name: result.name });
      return ok(reply, result, message, 201);
    },
  );

  api.get(
    '/mcp_market/install_status/:taskId',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'An install task’s status and every log line so far',
        params: TaskIdParams,
        response: { 200: envelope(InstallStatus) },
      },
    },
    async (req, reply) => ok(reply, await services.installStatus(req.params.taskId)),
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
      config: { auth: 'admin' },
      schema: { tags, summary: 'Enable or disable a service', params: ServiceIdParams, response: { 200: envelope(ToggleResult) } },
    },
    async (req, reply) => {
      const result = await services.toggle(serviceIdOf(req.params.id));
      return ok(reply, result, req.t(result.enabled ? 'service.enabled' : 'service.disabled'));
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

  api.post(
    '/mcp_market/uninstall',
    {
      config: { auth: 'admin' },
      schema: { tags, summary: 'Stop and delete a service; its history stays', body: UninstallRequest, response: { 200: OkEnvelope } },
    },
    async (req, reply) => {
      await services.uninstall(serviceIdOf(req.body.service_id));
      return ok(reply, undefined, req.t('service.uninstalled'));
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
