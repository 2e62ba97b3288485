import type { Db } from '../../db/db.js';
import type { ServiceCatalog } from '../../gateway/catalog.js';
import type { GroupDirectory, ToolPolicy } from '../../gateway/tool-policy.js';
import type { ZodApi } from '../../http/api.js';
import type { ConfigEvents } from '../../infra/events.js';
import { AccessLists } from './access.js';
import { GroupsService, groupSpec } from './groups.js';
import { HubRepo } from './repo.js';
import { groupRoutes } from './routes.js';
import { ServiceToolsService, toOverride, type UpstreamTools } from './tools.js';
import { HubTransfer } from './transfer.js';

export type { AccessLists } from './access.js';
export type { GroupsService } from './groups.js';
export type { ServiceToolsService } from './tools.js';
export type { GroupOutcome, HubTransfer } from './transfer.js';

/** What the gateway asks of this module, before the gateway exists: it reads only this module's tables. */
export interface HubPortsDeps {
  db: Db;
  events: ConfigEvents;
}

export interface HubPorts {
  repo: HubRepo;
  access: AccessLists;
  /** The gateway's ToolPolicy port: overrides and access, answered from this module's tables. */
  policy: ToolPolicy;
  /** The gateway's GroupDirectory port: groups by name for their faces, and who may use them. */
  directory: GroupDirectory;
}

/** The answers the gateway asks of groups, overrides and access lists: built before the gateway. */
export function createHubPorts(deps: HubPortsDeps): HubPorts {
  const repo = new HubRepo(deps.db);
  const access = new AccessLists(repo, deps.events);
  return {
    repo,
    access,
    policy: {
      overrides: async (service) => (await repo.overridesOf(service.name)).map(toOverride),
      mayUseService: (user, serviceId) => access.mayUse(user, 'service', serviceId),
    },
    directory: {
      byName: (name) => groupSpec(repo, name),
      mayUseGroup: (user, groupId) => access.mayUse(user, 'group', groupId),
    },
  };
}

/** Everything the groups module may touch. */
export interface GroupsDeps {
  events: ConfigEvents;
  /** From createHubPorts: the same tables and access lists the gateway asks. */
  ports: HubPorts;
  /** Services as the gateway reads them. */
  catalog: Pick<ServiceCatalog, 'byId'>;
  /** The live tool lists and Try it, through the gateway (built after createHubPorts, before this). */
  gateway: Pick<UpstreamTools, 'upstreamTools'> & {
    callTool(serviceId: number, userId: number, name: string, args: Record<string, unknown>): Promise<object>;
  };
}

export interface GroupsModule {
  groups: GroupsService;
  tools: ServiceToolsService;
  access: AccessLists;
  /** Overrides, access and groups in and out of export and batch import documents. */
  transfer: HubTransfer;
  routes(api: ZodApi): Promise<void>;
  close(): Promise<void>;
}

/** Issue 17: groups, tool overrides per service and access lists of services and groups. */
export function createGroupsModule(deps: GroupsDeps): GroupsModule {
  const { repo, access } = deps.ports;
  // The gateway answers a JSON-RPC response or error; Try it reads it as one of the two.
  const gateway: UpstreamTools = {
    upstreamTools: (serviceId, userId) => deps.gateway.upstreamTools(serviceId, userId),
    callTool: async (serviceId, userId, name, args) =>
      (await deps.gateway.callTool(serviceId, userId, name, args)) as Awaited<ReturnType<UpstreamTools['callTool']>>,
  };
  const tools = new ServiceToolsService({ repo, catalog: deps.catalog, gateway, access, events: deps.events });
  const groups = new GroupsService({ repo, catalog: deps.catalog, gateway, tools, access, events: deps.events });
  // A removed service leaves no access list or group membership behind (its overrides stay, by name).
  const stop = deps.events.on((e) => {
    if (e.type === 'service.removed') void repo.forgetService(e.serviceId).catch(() => undefined);
  });
  const transfer = new HubTransfer({ repo, access, events: deps.events, groups });
  return {
    groups,
    tools,
    access,
    transfer,
    routes: (api) => groupRoutes(api, { groups, tools, access }),
    close: async () => stop(),
  };
}

/** The export's and import's part without the gateway (the `toolport export` command): no groups. */
export function createHubTransfer(deps: { ports: HubPorts; events: ConfigEvents }): HubTransfer {
  return new HubTransfer({ repo: deps.ports.repo, access: deps.ports.access, events: deps.events });
}
