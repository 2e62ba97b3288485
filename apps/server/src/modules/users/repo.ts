import { sql } from 'kysely';
import type { Db } from '../../db/db.js';
import type { NewUser, UserRow, UserUpdate } from '../../db/schema.js';

/** SQL for users and their provider identities; no rules here. */
export class UsersRepo {
  constructor(private readonly db: Db) {}

  byId(id: number): Promise<UserRow | undefined> {
    return this.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
  }

  byUsername(username: string): Promise<UserRow | undefined> {
    return this.db.selectFrom('users').selectAll().where('username', '=', username).executeTakeFirst();
  }

  byApiKeyHash(hash: string): Promise<UserRow | undefined> {
    return this.db.selectFrom('users').selectAll().where('api_key_hash', '=', hash).executeTakeFirst();
  }

  async insert(user: NewUser): Promise<UserRow> {
    return this.db.insertInto('users').values(user).returningAll().executeTakeFirstOrThrow();
  }

  async update(id: number, patch: UserUpdate): Promise<void> {
    await this.db.updateTable('users').set(patch).where('id', '=', id).execute();
  }

  /** Sets a new password hash and bumps auth_version, which invalidates every access token issued before. */
  async setPassword(id: number, passwordHash: string): Promise<void> {
    await this.db
      .updateTable('users')
      .set((eb) => ({ password_hash: passwordHash, auth_version: eb('auth_version', '+', 1), updated_at: Date.now() }))
      .where('id', '=', id)
      .execute();
  }

  /** One page, newest first; the id breaks ties between users created in the same millisecond. */
  page(offset: number, limit: number): Promise<UserRow[]> {
    return this.db
      .selectFrom('users')
      .selectAll()
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .offset(offset)
      .limit(limit)
      .execute();
  }

  /**
   * Users whose username, display name or email contains `keyword` (case-insensitive on both
   * engines, LIKE wildcards in the keyword taken literally), or whose id is `id`.
   */
  search(keyword: string, id: number | undefined, limit: number): Promise<UserRow[]> {
    const pattern = `%${keyword.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    const contains = (column: 'username' | 'display_name' | 'email') => sql<boolean>`lower(${sql.ref(column)}) like ${pattern} escape '\\'`;
    return this.db
      .selectFrom('users')
      .selectAll()
      .where((eb) => {
        const any = [contains('username'), contains('display_name'), contains('email')];
        return eb.or(id === undefined ? any : [...any, eb('id', '=', id)]);
      })
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
  }

  async delete(id: number): Promise<void> {
    await this.db.deleteFrom('users').where('id', '=', id).execute();
  }

  async count(): Promise<number> {
    const row = await this.db
      .selectFrom('users')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** Oldest first, so a provider-only user's login method is the provider they signed up with. */
  identitiesOf(userIds: number[]): Promise<{ user_id: number; provider: string; provider_user_id: string }[]> {
    if (userIds.length === 0) return Promise.resolve([]);
    return this.db
      .selectFrom('provider_identities')
      .select(['user_id', 'provider', 'provider_user_id'])
      .where('user_id', 'in', userIds)
      .orderBy('id')
      .execute();
  }
}
