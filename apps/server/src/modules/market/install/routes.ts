import { endpoints } from '@toolport/contract';
import type { ZodApi } from '../../../http/api.js';
import { route } from '../../../http/endpoints.js';
import { notFound } from '../../../http/errors.js';
import { ok } from '../../../http/locale.js';
import { readStoredText } from '../../../i18n/localised-error.js';
import { serviceIdOf } from '../../services/index.js';
import type { InstallLifecycle } from './lifecycle.js';

/** How services come and go: marketplace and custom installs, their tasks, uninstalls. Installing is for admins. */
export async function installRoutes(api: ZodApi, installs: InstallLifecycle): Promise<void> {
  route(api, endpoints.market.install, async (req, reply) => {
    const result = await installs.installer.installOrAdd(req.principal.id, req.body);
    const message =
      result.status === 'already_installed_instance_added'
        ? req.t('market.instance_added', { name: result.service_name })
        : req.t('market.install_started', { name: result.service_name });
    return ok(reply, result, message);
  });

  route(api, endpoints.services.createCustom, async (req, reply) => {
    const created = await installs.custom.create(req.principal, req.body);
    // The first check's reason in the caller's words (decision 0054), as the list says it.
    const result =
      created.health_details === undefined ? created : { ...created, health_details: readStoredText(created.health_details, req.t) };
    const name = result.name;
    const message =
      result.tools && result.status === 'preview'
        ? req.t('openapi_service.preview', { count: result.tools.length })
        : result.task_id
          ? req.t('service.install_started', { name })
          : result.health_status && result.health_status !== 'healthy'
            ? req.t('service.created_unreachable', { name, reason: result.health_details || result.health_status })
            : req.t('service.created', { name });
    // A name that cannot be an address is the display name; the endpoint's name was derived, and the answer says so.
    const given = req.body.name.trim();
    if (result.name === given || result.status === 'preview') return ok(reply, { ...result, endpoint_name_derived: false }, message, 201);
    const note = req.t('service.endpoint_derived', { endpoint: result.name, name: given });
    return ok(reply, { ...result, endpoint_name_derived: true }, `${message}${req.t('message.sentence_gap')}${note}`, 201);
  });

  route(api, endpoints.services.installStatus, async (req, reply) => {
    const status = await installs.tasks.status(req.params.taskId, req.t);
    if (!status) throw notFound('service.task_not_found');
    return ok(reply, status);
  });

  route(api, endpoints.services.updatePackage, async (req, reply) => {
    const { taskId, row } = await installs.installer.startUpdate(req.principal.id, serviceIdOf(req.params.id));
    return ok(
      reply,
      { service_id: row.id, name: row.name, task_id: taskId, from_version: row.version },
      req.t('service.update_started', { name: row.display_name || row.name }),
    );
  });

  route(api, endpoints.services.uninstall, async (req, reply) => {
    await installs.uninstaller.uninstall(serviceIdOf(req.body.service_id));
    return ok(reply, undefined, req.t('service.uninstalled'));
  });
}
