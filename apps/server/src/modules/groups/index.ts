import type { Db } from '../../db/db.js';
import type { GatewayUser, ServiceCatalog } from '../../gateway/catalog.js';
import type { GroupDirectory, ToolPolicy } from '../../gateway/tool-policy.js';
import type { ZodApi } from '../../http/api.js';
import type { ConfigEvents } from '../../infra/events.js';
import { AccessLists } from './access.js';
import { GroupsService } from './groups.js';
import { HubRepo } from './repo.js';
import { groupRoutes } from './routes.js';
import { ServiceToolsService, type UpstreamTools } from './tools.js';

export type { AccessLists } from './access.js';
export type { GroupsService } from './groups.js';
export type { ServiceToolsService } from './tools.js';

/** Everything the groups module may touch. */
export interface GroupsDeps {
  db: Db;
  events: ConfigEvents;
  /** Services as the gateway reads them. */
  catalog: Pick<ServiceCatalog, 'byId'>;
  /**
   * The live tool lists, through the gateway. Given late (the gateway is built after this module's
   * policy, which it needs), hence a getter.
   */
  gateway: () => UpstreamTools;
}

export interface GroupsModule {
  groups: GroupsService;
  tools: ServiceToolsService;
  access: AccessLists;
  /** The gateway's ToolPolicy port: overrides and access, answered from this module's tables. */
  policy: ToolPolicy;
  /** The gateway's GroupDirectory port: groups by name for their faces, and who may use them. */
  directory: GroupDirectory;
  routes(api: ZodApi): Promise<void>;
  close(): Promise<void>;
}

/** Issue 17: groups, tool overrides per service and access lists of services and groups. */
export function createGroupsModule(deps: GroupsDeps): GroupsModule {
  const repo = new HubRepo(deps.db);
  const access = new AccessLists(repo, deps.events);
  const gateway: UpstreamTools = {
    upstreamTools: (serviceId, userId) => deps.gateway().upstreamTools(serviceId, userId),
    callTool: async (serviceId, userId, name, args) =>
      (await deps.gateway().callTool(serviceId, userId, name, args)) as Awaited<ReturnType<UpstreamTools['callTool']>>,
  };
  const tools = new ServiceToolsService({ repo, catalog: deps.catalog, gateway, access, events: deps.events });
  const groups = new GroupsService({ repo, catalog: deps.catalog, gateway, tools, access, events: deps.events });
  // A removed service leaves no access list or group membership behind (its overrides stay, by name).
  const stop = deps.events.on((e) => {
    if (e.type === 'service.removed') void repo.forgetService(e.serviceId).catch(() => undefined);
  });
  const policy: ToolPolicy = {
    overrides: (service) => tools.overridesOf(service),
    mayUseService: (user: GatewayUser, serviceId) => access.mayUse(user, 'service', serviceId),
  };
  const directory: GroupDirectory = {
    byName: (name) => groups.spec(name),
    mayUseGroup: (user, groupId) => access.mayUse(user, 'group', groupId),
  };
  return {
    groups,
    tools,
    access,
    policy,
    directory,
    routes: (api) => groupRoutes(api, { groups, tools, access }),
    close: async () => stop(),
  };
}
