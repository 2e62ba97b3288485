import type {
  AccessList,
  GroupInput,
  PortableAccess,
  PortableGroup,
  PortableServiceSettings,
  PortableToolOverride,
  ToolportSettings,
} from '@toolport/contract';
import { AppError } from '../../http/errors.js';
import type { Principal } from '../../http/principals.js';
import type { MessageKey, MessageParams } from '../../i18n/index.js';
import type { ConfigEvents } from '../../infra/events.js';
import type { AccessLists } from './access.js';
import { type GroupsService, parseTools } from './groups.js';
import type { ExposureRepo } from './repo.js';
import { TOOL_NAME } from './tools.js';

type Translate = (key: MessageKey, params?: MessageParams) => string;

/** What importing one group came to, as a batch item reports it. */
export interface GroupOutcome {
  status: 'success' | 'skipped' | 'failed';
  message: string;
  warnings: string[];
}

/**
 * Overrides, access and groups in and out of an `mcpServers` document (issue 17; docs/api.md,
 * "Export and batch import"). Services and groups are named by name and users by username, so the
 * block means the same on another instance; what cannot be matched there is reported, never dropped
 * silently.
 */
export class ExposureTransfer {
  constructor(
    private readonly deps: {
      repo: ExposureRepo;
      access: AccessLists;
      events: ConfigEvents;
      /** Without it (a command run without the gateway) groups are exported but not imported. */
      groups?: Pick<GroupsService, 'create'>;
    },
  ) {}

  /** The `toolport` block of an export of these services, or undefined when none of it is set. */
  async exportOf(services: { id: number; name: string }[]): Promise<ToolportSettings | undefined> {
    const byId = new Map(services.map((s) => [s.id, s.name]));
    const settings: Record<string, PortableServiceSettings> = {};
    const [restricted, groupsRestricted] = await Promise.all([this.deps.repo.restricted('service'), this.deps.repo.restricted('group')]);
    const userIds = [...restricted.values(), ...groupsRestricted.values()].flatMap((set) => [...set]);
    const names = new Map((await this.deps.repo.usernames([...new Set(userIds)])).map((u) => [u.id, u.username]));
    const portable = (users: Set<number> | undefined): PortableAccess | undefined =>
      users
        ? {
            restricted: true,
            users: [...users]
              .map((id) => names.get(id))
              .filter((n): n is string => n !== undefined)
              .sort(),
          }
        : undefined;

    for (const service of services) {
      const overrides = await this.deps.repo.overridesOf(service.name);
      const tools: Record<string, PortableToolOverride> = {};
      for (const o of overrides) {
        tools[o.original_name] = {
          ...(o.enabled === 1 ? {} : { enabled: false }),
          ...(o.alias !== null ? { alias: o.alias } : {}),
          ...(o.description !== null ? { description: o.description } : {}),
        };
      }
      const access = portable(restricted.get(service.id));
      if (overrides.length > 0 || access) {
        settings[service.name] = { ...(overrides.length > 0 ? { tools } : {}), ...(access ? { access } : {}) };
      }
    }

    const groups: PortableGroup[] = [];
    const rows = await this.deps.repo.groups();
    const members = await this.deps.repo.members(rows.map((r) => r.id));
    for (const row of rows) {
      const mine = members.filter((m) => m.group_id === row.id && byId.has(m.service_id));
      const access = portable(groupsRestricted.get(row.id));
      groups.push({
        name: row.name,
        display_name: row.display_name,
        description: row.description,
        mode: row.mode === 'discovery' ? 'discovery' : 'all',
        separator: row.separator,
        members: mine.map((m) => {
          const tools = parseTools(m.tools_json);
          return { service: byId.get(m.service_id) as string, ...(tools ? { tools } : {}) };
        }),
        ...(access ? { access } : {}),
      });
    }
    if (Object.keys(settings).length === 0 && groups.length === 0) return undefined;
    return { version: 1, ...(Object.keys(settings).length > 0 ? { services: settings } : {}), ...(groups.length > 0 ? { groups } : {}) };
  }

  /**
   * A service's overrides and access, applied to a service this import has just created. Returns
   * the summary line and the warnings (an invalid alias left out, unknown users left out).
   */
  async applyService(service: { id: number; name: string }, settings: PortableServiceSettings, t: Translate): Promise<string[]> {
    const lines: string[] = [];
    const rows = [];
    for (const [originalName, o] of Object.entries(settings.tools ?? {})) {
      let alias = o.alias?.trim() || null;
      if (alias !== null && (!TOOL_NAME.test(alias) || alias === originalName)) {
        if (alias !== originalName) lines.push(t('market.batch_alias_invalid', { name: service.name, tool: originalName, alias }));
        alias = null;
      }
      const enabled = o.enabled !== false ? 1 : 0;
      const description = o.description ?? null;
      if (enabled === 1 && alias === null && description === null) continue;
      rows.push({ original_name: originalName, enabled, alias, description });
    }
    if (rows.length > 0) {
      await this.deps.repo.replaceOverrides(service.name, rows);
      this.deps.events.emit({ type: 'tools.changed', serviceId: service.id });
    }
    let accessText = t('market.batch_access_open');
    if (settings.access?.restricted) {
      const { list, warning } = await this.accessList(service.name, settings.access, t);
      if (warning) lines.push(warning);
      await this.deps.access.set('service', service.id, list);
      accessText = t('market.batch_access_restricted', { count: list.user_ids.length });
    }
    return [t('market.batch_settings_applied', { tools: rows.length, access: accessText }), ...lines];
  }

  /** Creates a group of the document (its members by service name), unless one of that name exists. */
  async importGroup(group: PortableGroup, serviceIds: Map<string, number>, caller: Principal, t: Translate): Promise<GroupOutcome> {
    const warnings: string[] = [];
    if (!this.deps.groups) return { status: 'skipped', message: t('market.batch_group_not_here'), warnings };
    if (await this.deps.repo.groupByName(group.name.trim())) {
      return { status: 'skipped', message: t('market.batch_group_exists', { name: group.name }), warnings };
    }
    const members: GroupInput['members'] = [];
    for (const m of group.members) {
      const id = serviceIds.get(m.service);
      if (id === undefined) warnings.push(t('market.batch_group_member_missing', { name: group.name, service: m.service }));
      else members.push({ service_id: id, ...(m.tools ? { tools: m.tools } : {}) });
    }
    if (members.length === 0) return { status: 'failed', message: t('market.batch_group_no_members', { name: group.name }), warnings };
    let access: AccessList = { restricted: false, user_ids: [] };
    if (group.access?.restricted) {
      const resolved = await this.accessList(group.name, group.access, t);
      access = resolved.list;
      if (resolved.warning) warnings.push(resolved.warning);
    }
    try {
      await this.deps.groups.create(
        {
          name: group.name,
          display_name: group.display_name,
          description: group.description,
          mode: group.mode,
          separator: group.separator,
          members,
          access,
        },
        caller,
      );
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      return { status: 'failed', message: t('market.batch_item_failed', { reason: t(err.key, err.params) }), warnings };
    }
    return { status: 'success', message: t('market.batch_group_created', { name: group.name, count: members.length }), warnings };
  }

  /**
   * Usernames to ids. A restriction stays a restriction: users unknown here are left out (so the
   * subject is open to fewer people, never more) and named in a warning.
   */
  private async accessList(subject: string, access: PortableAccess, t: Translate): Promise<{ list: AccessList; warning?: string }> {
    const wanted = [...new Set(access.users)];
    const found = await this.deps.repo.usersByName(wanted);
    const known = new Set(found.map((u) => u.username));
    const missing = wanted.filter((u) => !known.has(u));
    return {
      list: { restricted: true, user_ids: found.map((u) => u.id) },
      ...(missing.length > 0 ? { warning: t('market.batch_unknown_users', { name: subject, users: missing.join(', ') }) } : {}),
    };
  }
}
