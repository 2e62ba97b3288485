import {
  CustomServiceRequest,
  CustomServiceResult,
  envelope,
  InstallRequest,
  InstallResult,
  InstallStatus,
  OkEnvelope,
  TaskIdParams,
  UninstallRequest,
} from '@toolport/contract';
import type { ZodApi } from '../../../http/api.js';
import { notFound } from '../../../http/errors.js';
import { principalOf } from '../../../http/guard.js';
import { ok } from '../../../http/locale.js';
import { serviceIdOf } from '../../services/index.js';
import type { InstallLifecycle } from './lifecycle.js';

/** The API documentation lists custom installs, their status and uninstalls with the services. */
const serviceTags = ['services'];

/** How services come and go: marketplace and custom installs, their tasks, uninstalls. Installing is for admins. */
export async function installRoutes(api: ZodApi, installs: InstallLifecycle): Promise<void> {
  api.post(
    '/mcp_market/install_or_add_service',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['market'],
        summary: 'Install a package as a service (a durable task), or add the caller’s values to the installed one',
        description:
          'Missing required variables answer 400 with data.required_env_vars. Poll GET /mcp_market/install_status/{task_id} for the log.',
        body: InstallRequest,
        response: { 200: envelope(InstallResult) },
      },
    },
    async (req, reply) => {
      const result = await installs.installer.installOrAdd(principalOf(req).id, req.body);
      const message =
        result.status === 'already_installed_instance_added'
          ? req.t('market.instance_added', { name: result.service_name })
          : req.t('market.install_started', { name: result.service_name });
      return ok(reply, result, message);
    },
  );

  api.post(
    '/mcp_market/custom_service',
    {
      config: { auth: 'admin' },
      schema: {
        tags: serviceTags,
        summary: 'Create a custom stdio, sse or streamableHttp service',
        body: CustomServiceRequest,
        response: { 201: envelope(CustomServiceResult) },
      },
    },
    async (req, reply) => {
      const result = await installs.custom.create(principalOf(req), req.body);
      const message = req.t(result.task_id ? 'service.install_started' : 'service.created', { name: result.name });
      return ok(reply, result, message, 201);
    },
  );

  api.get(
    '/mcp_market/install_status/:taskId',
    {
      config: { auth: 'admin' },
      schema: {
        tags: serviceTags,
        summary: 'An install task’s status and every log line so far',
        params: TaskIdParams,
        response: { 200: envelope(InstallStatus) },
      },
    },
    async (req, reply) => {
      const status = await installs.tasks.status(req.params.taskId);
      if (!status) throw notFound('service.task_not_found');
      return ok(reply, status);
    },
  );

  api.post(
    '/mcp_market/uninstall',
    {
      config: { auth: 'admin' },
      schema: {
        tags: serviceTags,
        summary: 'Stop and delete a service; its history stays',
        body: UninstallRequest,
        response: { 200: OkEnvelope },
      },
    },
    async (req, reply) => {
      await installs.uninstaller.uninstall(serviceIdOf(req.body.service_id));
      return ok(reply, undefined, req.t('service.uninstalled'));
    },
  );
}
