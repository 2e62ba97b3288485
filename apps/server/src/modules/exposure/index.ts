// The exposure module: what each caller is shown and may use — groups (endpoints made of several services), tool
// overrides per service (enabled, renamed, described) and the access lists of services and groups. The gateway asks
// it through its ToolPolicy and GroupDirectory ports (gateway/tool-policy.ts).
import { type DatabaseGate, LastKnown } from '../../db/availability.js';
import type { Db } from '../../db/db.js';
import type { ServiceCatalog } from '../../gateway/catalog.js';
import type { GroupDirectory, GroupSpec, ToolPolicy } from '../../gateway/tool-policy.js';
import type { ZodApi } from '../../http/api.js';
import type { Locale } from '../../i18n/index.js';
import type { ConfigEvents } from '../../infra/events.js';
import { AccessLists } from './access.js';
import { GroupsService, groupSpec } from './groups.js';
import { ExposureRepo } from './repo.js';
import { groupRoutes } from './routes.js';
import { ServiceToolsService, toOverride, type UpstreamTools } from './tools.js';
import { ExposureTransfer } from './transfer.js';

export type { AccessLists } from './access.js';
export type { GroupsService } from './groups.js';
export type { ServiceToolsService } from './tools.js';
export type { ExposureTransfer, GroupOutcome } from './transfer.js';

/** What the gateway asks of this module, before the gateway exists: it reads only this module's tables. */
export interface ExposurePortsDeps {
  db: Db;
  events: ConfigEvents;
  /** Bounds the call path's reads; while the database is away they answer from memory (decision 0043). */
  gate?: DatabaseGate;
}

export interface ExposurePorts {
  repo: ExposureRepo;
  access: AccessLists;
  /** The gateway's ToolPolicy port: overrides and access, answered from this module's tables. */
  policy: ToolPolicy;
  /** The gateway's GroupDirectory port: groups by name for their faces, and who may use them. */
  directory: GroupDirectory;
}

/** The answers the gateway asks of groups, overrides and access lists: built before the gateway. */
export function createExposurePorts(deps: ExposurePortsDeps): ExposurePorts {
  const repo = new ExposureRepo(deps.db);
  const access = new AccessLists(repo, deps.events, deps.gate);
  const overrides = new LastKnown<Awaited<ReturnType<ExposureRepo['overridesOf']>>>(deps.gate);
  const groups = new LastKnown<GroupSpec | undefined>(deps.gate);
  return {
    repo,
    access,
    policy: {
      overrides: async (service) => (await overrides.get(service.name, () => repo.overridesOf(service.name))).map(toOverride),
      mayUseService: (user, serviceId) => access.mayUse(user, 'service', serviceId),
    },
    directory: {
      byName: (name) => groups.get(name, () => groupSpec(repo, name)),
      mayUseGroup: (user, groupId) => access.mayUse(user, 'group', groupId),
    },
  };
}

/** Everything the exposure module may touch. */
export interface ExposureDeps {
  events: ConfigEvents;
  /** From createExposurePorts: the same tables and access lists the gateway asks. */
  ports: ExposurePorts;
  /** Services as the gateway reads them. */
  catalog: Pick<ServiceCatalog, 'byId'>;
  /** The live tool lists and Try it, through the gateway (built after createExposurePorts, before this). */
  gateway: Pick<UpstreamTools, 'upstreamTools'> & {
    callTool(serviceId: number, userId: number, name: string, args: Record<string, unknown>, locale?: Locale): Promise<object>;
  };
}

export interface ExposureModule {
  groups: GroupsService;
  tools: ServiceToolsService;
  access: AccessLists;
  /** Overrides, access and groups in and out of export and batch import documents. */
  transfer: ExposureTransfer;
  routes(api: ZodApi): Promise<void>;
  close(): Promise<void>;
}

/** Issue 17: groups, tool overrides per service and access lists of services and groups. */
export function createExposureModule(deps: ExposureDeps): ExposureModule {
  const { repo, access } = deps.ports;
  // The gateway answers a JSON-RPC response or error; Try it reads it as one of the two.
  const gateway: UpstreamTools = {
    upstreamTools: (serviceId, userId) => deps.gateway.upstreamTools(serviceId, userId),
    callTool: async (serviceId, userId, name, args, locale) =>
      (await deps.gateway.callTool(serviceId, userId, name, args, locale)) as Awaited<ReturnType<UpstreamTools['callTool']>>,
  };
  const tools = new ServiceToolsService({ repo, catalog: deps.catalog, gateway, access, events: deps.events });
  const groups = new GroupsService({ repo, catalog: deps.catalog, gateway, tools, access, events: deps.events });
  // A removed service leaves no access list or group membership behind (its overrides stay, by name).
  const stop = deps.events.on((e) => {
    if (e.type === 'service.removed') void repo.forgetService(e.serviceId).catch(() => undefined);
  });
  const transfer = new ExposureTransfer({ repo, access, events: deps.events, groups });
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
export function createExposureTransfer(deps: { ports: ExposurePorts; events: ConfigEvents }): ExposureTransfer {
  return new ExposureTransfer({ repo: deps.ports.repo, access: deps.ports.access, events: deps.events });
}
