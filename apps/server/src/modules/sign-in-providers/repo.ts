import { type Insertable, type Selectable, sql } from 'kysely';
import type { Db } from '../../db/db.js';
import { isPostgres } from '../../db/migrations/helpers.js';
import type { NewUser, OAuthStatesTable, ProviderIdentitiesTable, UserRow } from '../../db/schema.js';

export type OAuthStateRow = Selectable<OAuthStatesTable>;
export type IdentityRow = Selectable<ProviderIdentitiesTable>;
type NewIdentity = Omit<Insertable<ProviderIdentitiesTable>, 'user_id'>;

/** What a user can sign in with, as the unbinding rule sees it. */
export interface SignInMethods {
  hasPassword: boolean;
  providers: string[];
}

/** SQL for pending sign-ins and provider identities; no rules here. */
export class OAuthRepo {
  constructor(private readonly db: Db) {}

  async insertState(row: OAuthStateRow): Promise<void> {
    await this.db.insertInto('oauth_states').values(row).execute();
  }

  /** Removes and returns a pending sign-in in one statement, so two returns cannot both use it. */
  takeState(stateHash: string): Promise<OAuthStateRow | undefined> {
    return this.db.deleteFrom('oauth_states').where('state_hash', '=', stateHash).returningAll().executeTakeFirst();
  }

  async purgeExpiredStates(now: number): Promise<void> {
    await this.db.deleteFrom('oauth_states').where('expires_at', '<', now).execute();
  }

  identity(provider: string, providerUserId: string): Promise<IdentityRow | undefined> {
    return this.db
      .selectFrom('provider_identities')
      .selectAll()
      .where('provider', '=', provider)
      .where('provider_user_id', '=', providerUserId)
      .executeTakeFirst();
  }

  identityOf(userId: number, provider: string): Promise<IdentityRow | undefined> {
    return this.db
      .selectFrom('provider_identities')
      .selectAll()
      .where('user_id', '=', userId)
      .where('provider', '=', provider)
      .executeTakeFirst();
  }

  async addIdentity(userId: number, identity: NewIdentity): Promise<void> {
    await this.db
      .insertInto('provider_identities')
      .values({ ...identity, user_id: userId })
      .execute();
  }

  async setIdentityEmail(id: number, email: string): Promise<void> {
    await this.db.updateTable('provider_identities').set({ email }).where('id', '=', id).execute();
  }

  /** A new user and their first identity, both or neither. */
  createUserWithIdentity(user: NewUser, identity: NewIdentity): Promise<UserRow> {
    return this.db.transaction().execute(async (trx) => {
      const row = await trx.insertInto('users').values(user).returningAll().executeTakeFirstOrThrow();
      await trx
        .insertInto('provider_identities')
        .values({ ...identity, user_id: row.id })
        .execute();
      return row;
    });
  }

  /**
   * Removes one identity after `check` (which throws to refuse) has seen the user's sign-in methods.
   * The user row is locked meanwhile on PostgreSQL, so two unbinds at once cannot remove the last
   * two methods; SQLite runs one write transaction at a time anyway.
   */
  async removeIdentity(userId: number, provider: string, check: (methods: SignInMethods) => void): Promise<void> {
    const lockRows = isPostgres(this.db);
    await this.db.transaction().execute(async (trx) => {
      const base = trx.selectFrom('users').select('password_hash').where('id', '=', userId);
      const user = await (lockRows ? base.forUpdate() : base).executeTakeFirst();
      const identities = await trx.selectFrom('provider_identities').select('provider').where('user_id', '=', userId).execute();
      check({ hasPassword: !!user?.password_hash, providers: identities.map((i) => i.provider) });
      await trx.deleteFrom('provider_identities').where('user_id', '=', userId).where('provider', '=', provider).execute();
    });
  }

  /** Users whose email is `email`, compared without case (OpenID Connect links by a verified address). */
  usersByEmail(email: string): Promise<UserRow[]> {
    return this.db.selectFrom('users').selectAll().where(sql<boolean>`lower(email) = ${email.toLowerCase()}`).limit(2).execute();
  }

  /** Whether the user can sign in only through this provider: no password and no other identity. */
  async onlyThrough(userId: number, provider: string): Promise<boolean> {
    const user = await this.db.selectFrom('users').select('password_hash').where('id', '=', userId).executeTakeFirst();
    if (!user || user.password_hash) return false;
    const others = await this.db
      .selectFrom('provider_identities')
      .select('provider')
      .where('user_id', '=', userId)
      .where('provider', '!=', provider)
      .executeTakeFirst();
    return !others;
  }

  /** Ids of services and groups by name; unknown names are left out. */
  async subjectIds(services: string[], groups: string[]): Promise<{ subject: 'service' | 'group'; id: number; name: string }[]> {
    const out: { subject: 'service' | 'group'; id: number; name: string }[] = [];
    if (services.length) {
      for (const r of await this.db.selectFrom('services').select(['id', 'name']).where('name', 'in', services).execute()) {
        out.push({ subject: 'service', id: r.id, name: r.name });
      }
    }
    if (groups.length) {
      for (const r of await this.db.selectFrom('groups').select(['id', 'name']).where('name', 'in', groups).execute()) {
        out.push({ subject: 'group', id: r.id, name: r.name });
      }
    }
    return out;
  }

  /**
   * Puts the user on the access lists of `granted` and takes them off the other `managed` ones, in one
   * transaction; answers whether anything changed.
   */
  async syncAccess(userId: number, managed: { subject: 'service' | 'group'; id: number }[], granted: Set<string>): Promise<boolean> {
    if (managed.length === 0) return false;
    return this.db.transaction().execute(async (trx) => {
      let changed = false;
      for (const m of managed) {
        const on = await trx
          .selectFrom('access_users')
          .select('user_id')
          .where('subject', '=', m.subject)
          .where('subject_id', '=', m.id)
          .where('user_id', '=', userId)
          .executeTakeFirst();
        const want = granted.has(`${m.subject}:${m.id}`);
        if (want && !on) {
          await trx.insertInto('access_users').values({ subject: m.subject, subject_id: m.id, user_id: userId }).execute();
          changed = true;
        } else if (!want && on) {
          await trx
            .deleteFrom('access_users')
            .where('subject', '=', m.subject)
            .where('subject_id', '=', m.id)
            .where('user_id', '=', userId)
            .execute();
          changed = true;
        }
      }
      return changed;
    });
  }
}
