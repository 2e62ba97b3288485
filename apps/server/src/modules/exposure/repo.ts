import type { Db } from '../../db/db.js';
import type { GroupMemberRow, GroupRow, ToolOverrideRow } from '../../db/schema.js';

export type Subject = 'service' | 'group';

export interface OverridePatch {
  enabled?: boolean | null;
  alias?: string | null;
  description?: string | null;
}

export interface GroupValues {
  name: string;
  display_name: string;
  description: string;
  mode: string;
  separator: string;
}

export interface MemberValues {
  service_id: number;
  tools: string[] | undefined;
}

/** SQL of issue 17's tables (migration 0005): tool overrides, access lists, groups. No rules here. */
export class ExposureRepo {
  constructor(private readonly db: Db) {}

  // ---- tool overrides ----

  overridesOf(serviceName: string): Promise<ToolOverrideRow[]> {
    return this.db.selectFrom('tool_overrides').selectAll().where('service_name', '=', serviceName).orderBy('original_name').execute();
  }

  /** Applies the patch; a row left with nothing overridden is deleted. */
  async patchOverride(serviceName: string, originalName: string, patch: OverridePatch): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const current = await trx
        .selectFrom('tool_overrides')
        .selectAll()
        .where('service_name', '=', serviceName)
        .where('original_name', '=', originalName)
        .executeTakeFirst();
      const enabled = patch.enabled === undefined ? (current ? current.enabled === 1 : true) : patch.enabled !== false;
      const alias = patch.alias === undefined ? (current?.alias ?? null) : patch.alias;
      const description = patch.description === undefined ? (current?.description ?? null) : patch.description;
      if (enabled && alias === null && description === null) {
        await trx.deleteFrom('tool_overrides').where('service_name', '=', serviceName).where('original_name', '=', originalName).execute();
        return;
      }
      const values = { enabled: enabled ? 1 : 0, alias, description, updated_at: Date.now() };
      if (current) {
        await trx
          .updateTable('tool_overrides')
          .set(values)
          .where('service_name', '=', serviceName)
          .where('original_name', '=', originalName)
          .execute();
      } else {
        await trx
          .insertInto('tool_overrides')
          .values({ service_name: serviceName, original_name: originalName, ...values })
          .execute();
      }
    });
  }

  /** How many tools are switched off, per service name. */
  async disabledCounts(): Promise<Map<string, number>> {
    const rows = await this.db
      .selectFrom('tool_overrides')
      .select(['service_name', (eb) => eb.fn.countAll<number>().as('n')])
      .where('enabled', '=', 0)
      .groupBy('service_name')
      .execute();
    return new Map(rows.map((r) => [r.service_name, Number(r.n)]));
  }

  /** Replaces a service's overrides (batch import, export round trip). */
  async replaceOverrides(serviceName: string, rows: Omit<ToolOverrideRow, 'service_name' | 'updated_at'>[]): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('tool_overrides').where('service_name', '=', serviceName).execute();
      if (rows.length === 0) return;
      const now = Date.now();
      await trx
        .insertInto('tool_overrides')
        .values(rows.map((r) => ({ ...r, service_name: serviceName, updated_at: now })))
        .execute();
    });
  }

  // ---- access ----

  async accessOf(subject: Subject, id: number): Promise<{ restricted: boolean; userIds: number[] }> {
    const [list, users] = await Promise.all([
      this.db
        .selectFrom('access_lists')
        .select('restricted')
        .where('subject', '=', subject)
        .where('subject_id', '=', id)
        .executeTakeFirst(),
      this.db
        .selectFrom('access_users')
        .select('user_id')
        .where('subject', '=', subject)
        .where('subject_id', '=', id)
        .orderBy('user_id')
        .execute(),
    ]);
    return { restricted: list?.restricted === 1, userIds: users.map((u) => u.user_id) };
  }

  /** The restricted subjects of a kind, each with its users: the whole access picture in two queries. */
  async restricted(subject: Subject): Promise<Map<number, Set<number>>> {
    const lists = await this.db
      .selectFrom('access_lists')
      .select('subject_id')
      .where('subject', '=', subject)
      .where('restricted', '=', 1)
      .execute();
    const out = new Map<number, Set<number>>(lists.map((l) => [l.subject_id, new Set<number>()]));
    if (out.size === 0) return out;
    const users = await this.db
      .selectFrom('access_users')
      .select(['subject_id', 'user_id'])
      .where('subject', '=', subject)
      .where('subject_id', 'in', [...out.keys()])
      .execute();
    for (const u of users) out.get(u.subject_id)?.add(u.user_id);
    return out;
  }

  async setAccess(subject: Subject, id: number, restricted: boolean, userIds: number[]): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('access_lists').where('subject', '=', subject).where('subject_id', '=', id).execute();
      await trx.deleteFrom('access_users').where('subject', '=', subject).where('subject_id', '=', id).execute();
      if (restricted) await trx.insertInto('access_lists').values({ subject, subject_id: id, restricted: 1 }).execute();
      if (userIds.length > 0) {
        await trx
          .insertInto('access_users')
          .values(userIds.map((user_id) => ({ subject, subject_id: id, user_id })))
          .execute();
      }
    });
  }

  /** Users by username (export and import name users portably). */
  usersByName(names: string[]): Promise<{ id: number; username: string }[]> {
    if (names.length === 0) return Promise.resolve([]);
    return this.db.selectFrom('users').select(['id', 'username']).where('username', 'in', names).execute();
  }

  /** Usernames by id. */
  usernames(ids: number[]): Promise<{ id: number; username: string }[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.db.selectFrom('users').select(['id', 'username']).where('id', 'in', ids).execute();
  }

  existingUserIds(ids: number[]): Promise<{ id: number }[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.db.selectFrom('users').select('id').where('id', 'in', ids).execute();
  }

  // ---- groups ----

  groups(): Promise<GroupRow[]> {
    return this.db.selectFrom('groups').selectAll().orderBy('name').execute();
  }

  groupById(id: number): Promise<GroupRow | undefined> {
    return this.db.selectFrom('groups').selectAll().where('id', '=', id).executeTakeFirst();
  }

  groupByName(name: string): Promise<GroupRow | undefined> {
    return this.db.selectFrom('groups').selectAll().where('name', '=', name).executeTakeFirst();
  }

  members(groupIds?: number[]): Promise<GroupMemberRow[]> {
    let q = this.db.selectFrom('group_members').selectAll();
    if (groupIds) {
      if (groupIds.length === 0) return Promise.resolve([]);
      q = q.where('group_id', 'in', groupIds);
    }
    return q.orderBy('group_id').orderBy('position').execute();
  }

  async saveGroup(id: number | undefined, values: GroupValues, members: MemberValues[]): Promise<number> {
    return this.db.transaction().execute(async (trx) => {
      const now = Date.now();
      let groupId = id;
      if (groupId === undefined) {
        const row = await trx
          .insertInto('groups')
          .values({ ...values, created_at: now, updated_at: now })
          .returning('id')
          .executeTakeFirstOrThrow();
        groupId = row.id;
      } else {
        await trx
          .updateTable('groups')
          .set({ ...values, updated_at: now })
          .where('id', '=', groupId)
          .execute();
        await trx.deleteFrom('group_members').where('group_id', '=', groupId).execute();
      }
      const gid = groupId;
      await trx
        .insertInto('group_members')
        .values(
          members.map((m, position) => ({
            group_id: gid,
            service_id: m.service_id,
            position,
            tools_json: m.tools ? JSON.stringify(m.tools) : '',
          })),
        )
        .execute();
      return gid;
    });
  }

  async deleteGroup(id: number): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('group_members').where('group_id', '=', id).execute();
      await trx.deleteFrom('access_lists').where('subject', '=', 'group').where('subject_id', '=', id).execute();
      await trx.deleteFrom('access_users').where('subject', '=', 'group').where('subject_id', '=', id).execute();
      await trx.deleteFrom('groups').where('id', '=', id).execute();
    });
  }

  /**
   * A service was removed: its access list and group memberships go with it. Its tool overrides
   * stay (keyed by name) for a re-install under the same name.
   */
  async forgetService(serviceId: number): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('access_lists').where('subject', '=', 'service').where('subject_id', '=', serviceId).execute();
      await trx.deleteFrom('access_users').where('subject', '=', 'service').where('subject_id', '=', serviceId).execute();
      await trx.deleteFrom('group_members').where('service_id', '=', serviceId).execute();
    });
  }

  /** A user was deleted: their places on access lists go. */
  async forgetUser(userId: number): Promise<void> {
    await this.db.deleteFrom('access_users').where('user_id', '=', userId).execute();
  }
}
