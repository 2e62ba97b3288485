import { GROUP_NAME, GROUP_SEPARATOR, type Group, type GroupInput, isAdminRole } from '@toolport/contract';
import type { GroupMemberRow, GroupRow } from '../../db/schema.js';
import type { ServiceCatalog, ServiceSpec } from '../../gateway/catalog.js';
import { type GroupSpec, ToolOverrides } from '../../gateway/tool-policy.js';
import { badRequest, forbidden, notFound } from '../../http/errors.js';
import type { Principal } from '../../http/principals.js';
import type { ConfigEvents } from '../../infra/events.js';
import type { AccessLists } from './access.js';
import type { ExposureRepo, MemberValues } from './repo.js';
import type { ServiceToolsService, UpstreamTools } from './tools.js';

const MAX_ID = 2_147_483_647;

export function groupIdOf(text: string): number {
  const id = Number(text);
  if (!Number.isInteger(id) || id < 1 || id > MAX_ID) throw badRequest('group.invalid_id', undefined, 'invalid_group_id');
  return id;
}

/** A member's chosen tools as stored (JSON), or undefined for the whole service. */
export function parseTools(json: string): string[] | undefined {
  if (!json) return undefined;
  try {
    const parsed: unknown = JSON.parse(json);
    return Array.isArray(parsed) ? parsed.filter((t): t is string => typeof t === 'string') : undefined;
  } catch {
    return undefined;
  }
}

/** A group as its face serves it, or undefined: read from the tables alone, so the gateway can ask before this module is whole. */
export async function groupSpec(repo: Pick<ExposureRepo, 'groupByName' | 'members'>, name: string): Promise<GroupSpec | undefined> {
  const row = await repo.groupByName(name);
  if (!row) return undefined;
  const members = await repo.members([row.id]);
  return {
    id: row.id,
    name: row.name,
    displayName: row.display_name || row.name,
    mode: row.mode === 'discovery' ? 'discovery' : 'all',
    separator: row.separator,
    members: members.map((m) => {
      const tools = parseTools(m.tools_json);
      return tools ? { serviceId: m.service_id, tools } : { serviceId: m.service_id };
    }),
  };
}

/**
 * Groups (issue 17, item 1): one endpoint for several services. Every rule of item 7 is checked
 * before anything is written, so a refused save changes nothing.
 */
export class GroupsService {
  constructor(
    private readonly deps: {
      repo: ExposureRepo;
      catalog: Pick<ServiceCatalog, 'byId'>;
      gateway: UpstreamTools;
      tools: Pick<ServiceToolsService, 'overridesOf'>;
      access: AccessLists;
      events: ConfigEvents;
    },
  ) {}

  /** A group as its face serves it, or undefined. */
  spec(name: string): Promise<GroupSpec | undefined> {
    return groupSpec(this.deps.repo, name);
  }

  /**
   * Groups as the caller sees them. A user is shown only the members they may use (decision 0040: a member
   * restricted to others stays closed to them inside the group, so naming it would only leak it).
   */
  private async present(rows: GroupRow[], caller: Principal): Promise<Group[]> {
    const admin = isAdminRole(caller.role);
    const [members, mayUse] = await Promise.all([
      this.deps.repo.members(rows.map((r) => r.id)),
      this.deps.access.filterFor(caller, 'service'),
    ]);
    const byGroup = new Map<number, GroupMemberRow[]>();
    for (const m of members) if (mayUse(m.service_id)) byGroup.set(m.group_id, [...(byGroup.get(m.group_id) ?? []), m]);
    return Promise.all(
      rows.map(async (row) => ({
        id: row.id,
        name: row.name,
        display_name: row.display_name,
        description: row.description,
        mode: row.mode === 'discovery' ? 'discovery' : 'all',
        separator: row.separator,
        members: (byGroup.get(row.id) ?? []).map((m) => {
          const tools = parseTools(m.tools_json);
          return tools ? { service_id: m.service_id, tools } : { service_id: m.service_id };
        }),
        // Who else may use a group is the admins' business.
        access: admin ? await this.deps.access.get('group', row.id) : { restricted: false, user_ids: [] },
        created_at: row.created_at,
        updated_at: row.updated_at,
      })),
    );
  }

  async list(caller: Principal): Promise<Group[]> {
    const may = await this.deps.access.filterFor(caller, 'group');
    return this.present(
      (await this.deps.repo.groups()).filter((g) => may(g.id)),
      caller,
    );
  }

  async get(id: number, caller: Principal): Promise<Group> {
    const row = await this.deps.repo.groupById(id);
    if (!row) throw notFound('group.not_found');
    // Refused by id alone, like a service (tools.ts): the name is not the caller's to learn.
    if (!(await this.deps.access.mayUse(caller, 'group', id))) throw forbidden('access.no_access_group_id', { id });
    const [group] = await this.present([row], caller);
    return group as Group;
  }

  async create(input: GroupInput, caller: Principal): Promise<Group> {
    return this.save(undefined, input, caller);
  }

  async update(id: number, input: GroupInput, caller: Principal): Promise<Group> {
    if (!(await this.deps.repo.groupById(id))) throw notFound('group.not_found');
    return this.save(id, input, caller);
  }

  async remove(id: number): Promise<GroupRow> {
    const row = await this.deps.repo.groupById(id);
    if (!row) throw notFound('group.not_found');
    await this.deps.repo.deleteGroup(id);
    this.deps.events.emit({ type: 'groups.changed' });
    return row;
  }

  private async save(id: number | undefined, input: GroupInput, caller: Principal): Promise<Group> {
    const name = input.name.trim();
    if (!GROUP_NAME.test(name)) throw badRequest('group.name_invalid', { name }, 'group_name_invalid').inField('name');
    const taken = await this.deps.repo.groupByName(name);
    if (taken && taken.id !== id) throw badRequest('group.name_taken', { name }, 'group_name_taken').inField('name');
    const separator = input.separator;
    if (!GROUP_SEPARATOR.test(separator))
      throw badRequest('group.separator_invalid', { separator }, 'separator_invalid').inField('separator');
    if (input.members.length === 0) throw badRequest('group.no_members', undefined, 'no_members').inField('members');
    const members = await this.checkedMembers(input, caller);
    await this.deps.access.checkUsers(input.access.user_ids);
    const groupId = await this.deps.repo.saveGroup(
      id,
      { name, display_name: input.display_name.trim(), description: input.description.trim(), mode: input.mode, separator },
      members,
    );
    await this.deps.access.set('group', groupId, input.access);
    this.deps.events.emit({ type: 'groups.changed' });
    return this.get(groupId, caller);
  }

  /**
   * Every member exists, appears once and does not contain the separator in its name (which would
   * make `{service}{separator}{tool}` ambiguous); a chosen tool exists upstream; no two namespaced
   * names collide. Tools are checked against the live list when the member answers; a member that is
   * down may be saved with the tools chosen earlier, which simply do not appear until they exist.
   */
  private async checkedMembers(input: GroupInput, caller: Principal): Promise<MemberValues[]> {
    const seen = new Set<number>();
    const specs: ServiceSpec[] = [];
    for (const member of input.members) {
      if (seen.has(member.service_id)) throw badRequest('group.duplicate_member', { id: member.service_id }, 'duplicate_member');
      seen.add(member.service_id);
      const spec = await this.deps.catalog.byId(member.service_id);
      if (!spec) throw badRequest('group.unknown_service', { id: member.service_id }, 'unknown_service');
      if (spec.name.includes(input.separator)) {
        throw badRequest('group.separator_ambiguous', { separator: input.separator, service: spec.name }, 'separator_ambiguous').inField(
          'separator',
        );
      }
      specs.push(spec);
    }
    // Every member asked at once: a save waits for the slowest member's list (a first start, one that does not
    // answer within the list's time-out), not for the sum of them.
    const lives = await Promise.all(
      specs.map((spec) => (spec.enabled ? this.deps.gateway.upstreamTools(spec.id, caller.id).catch(() => undefined) : undefined)),
    );
    const owners = new Map<string, string>();
    const out: MemberValues[] = [];
    for (const [i, member] of input.members.entries()) {
      const spec = specs[i] as ServiceSpec;
      const tools = member.tools ? [...new Set(member.tools)] : undefined;
      const live = lives[i];
      if (live && tools) {
        const names = new Set(live.map((t) => t.name));
        const missing = tools.find((t) => !names.has(t));
        if (missing) throw badRequest('group.unknown_tool', { tool: missing, service: spec.name }, 'unknown_tool');
      }
      if (live) {
        const visible = new ToolOverrides(await this.deps.tools.overridesOf(spec)).applyToList(
          tools ? live.filter((t) => tools.includes(t.name)) : live,
        );
        for (const tool of visible) {
          const namespaced = `${spec.name}${input.separator}${tool.name}`;
          const other = owners.get(namespaced);
          if (other)
            throw badRequest('group.collision', { name: namespaced, first: other, second: `${spec.name}/${tool.name}` }, 'collision');
          owners.set(namespaced, `${spec.name}/${tool.name}`);
        }
      }
      out.push({ service_id: spec.id, tools });
    }
    return out;
  }
}
