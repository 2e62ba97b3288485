import type { Db } from '../../db/db.js';
import type { NewService, ServiceRow, ServiceUpdate } from '../../db/schema.js';

/** SQL for installed services and users' personal variable values; no rules here. */
export class ServicesRepo {
  constructor(private readonly db: Db) {}

  byId(id: number): Promise<ServiceRow | undefined> {
    return this.db.selectFrom('services').selectAll().where('id', '=', id).executeTakeFirst();
  }

  byName(name: string): Promise<ServiceRow | undefined> {
    return this.db.selectFrom('services').selectAll().where('name', '=', name).executeTakeFirst();
  }

  all(): Promise<ServiceRow[]> {
    return this.db.selectFrom('services').selectAll().orderBy('id', 'asc').execute();
  }

  enabled(): Promise<ServiceRow[]> {
    return this.db.selectFrom('services').selectAll().where('enabled', '=', 1).orderBy('id', 'asc').execute();
  }

  /** Services that came from a package, newest first (the marketplace shows them as installed). */
  packaged(): Promise<Pick<ServiceRow, 'id' | 'package_name' | 'package_manager' | 'source'>[]> {
    return this.db
      .selectFrom('services')
      .select(['id', 'package_name', 'package_manager', 'source'])
      .where('package_name', '!=', '')
      .orderBy('id', 'desc')
      .execute();
  }

  insert(service: NewService): Promise<ServiceRow> {
    return this.db.insertInto('services').values(service).returningAll().executeTakeFirstOrThrow();
  }

  /** With `whileEnabled`, only while the service's enabled flag still has that value (a late write loses to a toggle). */
  async update(id: number, patch: ServiceUpdate, whileEnabled?: boolean): Promise<void> {
    let query = this.db.updateTable('services').set(patch).where('id', '=', id);
    if (whileEnabled !== undefined) query = query.where('enabled', '=', whileEnabled ? 1 : 0);
    await query.execute();
  }

  /** Sets the description only while it is empty: a typed one is never overwritten. */
  async fillDescription(id: number, description: string): Promise<void> {
    await this.db
      .updateTable('services')
      .set({ description })
      .where('id', '=', id)
      .where((eb) => eb.or([eb('description', '=', ''), eb('description', 'is', null)]))
      .execute();
  }

  async delete(id: number): Promise<void> {
    await this.db.deleteFrom('services').where('id', '=', id).execute();
  }

  async userEnv(serviceId: number, userId: number): Promise<string | undefined> {
    const row = await this.db
      .selectFrom('service_user_envs')
      .select('env_enc')
      .where('service_id', '=', serviceId)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    return row?.env_enc;
  }

  async setUserEnv(serviceId: number, userId: number, envEnc: string): Promise<void> {
    const now = Date.now();
    await this.db
      .insertInto('service_user_envs')
      .values({ service_id: serviceId, user_id: userId, env_enc: envEnc, updated_at: now })
      .onConflict((oc) => oc.columns(['service_id', 'user_id']).doUpdateSet({ env_enc: envEnc, updated_at: now }))
      .execute();
  }

  /** Every personal value set of one user, by service id (still encrypted). */
  async userEnvsOf(userId: number): Promise<Map<number, string>> {
    const rows = await this.db.selectFrom('service_user_envs').select(['service_id', 'env_enc']).where('user_id', '=', userId).execute();
    return new Map(rows.map((r) => [r.service_id, r.env_enc]));
  }

  async deleteUserEnv(serviceId: number, userId: number): Promise<void> {
    await this.db.deleteFrom('service_user_envs').where('service_id', '=', serviceId).where('user_id', '=', userId).execute();
  }

  /** The services a user switched off for themselves (their personal switches). */
  async switchedOffBy(userId: number): Promise<Set<number>> {
    const rows = await this.db.selectFrom('service_user_switches').select('service_id').where('user_id', '=', userId).execute();
    return new Set(rows.map((r) => r.service_id));
  }

  /** Turns a user's personal switch of a service off (a row) or on (no row); idempotent both ways. */
  async setSwitchedOff(serviceId: number, userId: number, off: boolean): Promise<void> {
    if (off) {
      await this.db
        .insertInto('service_user_switches')
        .values({ service_id: serviceId, user_id: userId, created_at: Date.now() })
        .onConflict((oc) => oc.columns(['service_id', 'user_id']).doNothing())
        .execute();
    } else {
      await this.db.deleteFrom('service_user_switches').where('service_id', '=', serviceId).where('user_id', '=', userId).execute();
    }
  }

  /** For admins: who switched each service off for themselves, by service id (usernames, alphabetical). */
  async switchedOffUsers(): Promise<Map<number, string[]>> {
    const rows = await this.db
      .selectFrom('service_user_switches')
      .innerJoin('users', 'users.id', 'service_user_switches.user_id')
      .select(['service_user_switches.service_id', 'users.username'])
      .orderBy('users.username')
      .execute();
    const out = new Map<number, string[]>();
    for (const r of rows) out.set(r.service_id, [...(out.get(r.service_id) ?? []), r.username]);
    return out;
  }

  /** Today's counted requests of one user, per service. */
  async userCountsOn(day: string, userId: number): Promise<Map<number, number>> {
    const rows = await this.db
      .selectFrom('daily_counters')
      .select(['service_id', 'request_count'])
      .where('day', '=', day)
      .where('user_id', '=', userId)
      .execute();
    return new Map(rows.map((r) => [r.service_id, Number(r.request_count)]));
  }
}
