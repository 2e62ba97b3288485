import { endpoints } from '@toolport/contract';
import type { ZodApi } from '../../http/api.js';
import { route } from '../../http/endpoints.js';
import { serviceIdOf } from '../services/index.js';
import type { AccessLists } from './access.js';
import { type GroupsService, groupIdOf } from './groups.js';
import type { ServiceToolsService } from './tools.js';

/** Issue 17's endpoints, all from the contract's table: groups, a service's tools and its access list. */
export async function groupRoutes(
  api: ZodApi,
  { groups, tools, access }: { groups: GroupsService; tools: ServiceToolsService; access: AccessLists },
): Promise<void> {
  route(api, endpoints.groups.list, async (req) => ({ success: true, data: await groups.list(req.principal) }));
  route(api, endpoints.groups.get, async (req) => ({
    success: true,
    data: await groups.get(groupIdOf(req.params.id), req.principal),
  }));
  route(api, endpoints.groups.create, async (req, reply) => {
    const group = await groups.create(req.body, req.principal);
    reply.status(201);
    return { success: true, message: req.t('group.created', { name: group.name }), data: group };
  });
  route(api, endpoints.groups.update, async (req) => {
    const group = await groups.update(groupIdOf(req.params.id), req.body, req.principal);
    return { success: true, message: req.t('group.updated', { name: group.name }), data: group };
  });
  route(api, endpoints.groups.remove, async (req) => {
    const row = await groups.remove(groupIdOf(req.params.id));
    return { success: true, message: req.t('group.deleted', { name: row.name }) };
  });

  route(api, endpoints.services.tools, async (req) => ({
    success: true,
    data: await tools.list(serviceIdOf(req.params.id), req.principal),
  }));
  route(api, endpoints.services.setTool, async (req) => ({
    success: true,
    message: req.t('tools.updated', { name: req.params.original_name }),
    data: await tools.set(serviceIdOf(req.params.id), req.params.original_name, req.body, req.principal),
  }));
  route(api, endpoints.services.callTool, async (req) => ({
    success: true,
    data: await tools.call(serviceIdOf(req.params.id), req.params.original_name, req.body.arguments, req.principal, req.locale),
  }));
  route(api, endpoints.services.access, async (req) => ({
    success: true,
    data: await access.get('service', serviceIdOf(req.params.id)),
  }));
}
