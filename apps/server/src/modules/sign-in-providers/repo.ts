import { type Insertable, type Selectable, sql } from 'kysely';
import type { Db } from '../../db/db.js';
import { isPostgres } from '../../db/migrations/helpers.js';
import type { HeldIdentitiesTable, NewUser, OAuthStatesTable, ProviderIdentitiesTable, UserRow } from '../../db/schema.js';

export type OAuthStateRow = Selectable<OAuthStatesTable>;
export type IdentityRow = Selectable<ProviderIdentitiesTable>;
export type HeldRow = Selectable<HeldIdentitiesTable>;
type NewIdentity = Omit<Insertable<ProviderIdentitiesTable>, 'user_id'>;

/** The held sign-ins kept at most: strangers of an open provider must not grow the table without bound. */
export const MAX_HELD_IDENTITIES = 1000;

/** A provider's tokens as stored: encrypted, '' when there is none. */
export interface StoredTokens {
  refresh_token_enc: string;
  access_token_enc: string;
  access_expires_at: number;
  /** 0 after a sign-in: its fresh tokens are asked about at the next refresh. */
  checked_at?: number;
}

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
    // (An administrator unlinks by identity id; the user has at most one identity per provider, so both name one row.)
    const lockRows = isPostgres(this.db);
    await this.db.transaction().execute(async (trx) => {
      const base = trx.selectFrom('users').select('password_hash').where('id', '=', userId);
      const user = await (lockRows ? base.forUpdate() : base).executeTakeFirst();
      const identities = await trx.selectFrom('provider_identities').select('provider').where('user_id', '=', userId).execute();
      check({ hasPassword: !!user?.password_hash, providers: identities.map((i) => i.provider) });
      await trx.deleteFrom('provider_identities').where('user_id', '=', userId).where('provider', '=', provider).execute();
    });
  }

  identityById(userId: number, id: number): Promise<IdentityRow | undefined> {
    return this.db.selectFrom('provider_identities').selectAll().where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
  }

  identitiesOfUser(userId: number): Promise<IdentityRow[]> {
    return this.db.selectFrom('provider_identities').selectAll().where('user_id', '=', userId).orderBy('id').execute();
  }

  /** The user's OpenID Connect identities that hold provider tokens (deprovisioning at refresh). */
  identitiesWithTokens(userId: number): Promise<IdentityRow[]> {
    return this.db
      .selectFrom('provider_identities')
      .selectAll()
      .where('user_id', '=', userId)
      .where('provider', 'like', 'oidc:%')
      .where((eb) => eb.or([eb('refresh_token_enc', '!=', ''), eb('access_token_enc', '!=', '')]))
      .execute();
  }

  async setTokens(provider: string, providerUserId: string, tokens: StoredTokens): Promise<void> {
    await this.db
      .updateTable('provider_identities')
      .set(tokens)
      .where('provider', '=', provider)
      .where('provider_user_id', '=', providerUserId)
      .execute();
  }

  /**
   * Claims the provider check of one identity: true for the one caller that may ask the provider now, false while
   * another refresh (on any replica) asked less than `intervalMs` ago. Refresh tokens that rotate are single-use at
   * the provider: two refreshes presenting the same one at once would make the second look revoked.
   */
  async claimCheck(id: number, now: number, intervalMs: number): Promise<boolean> {
    const res = await this.db
      .updateTable('provider_identities')
      .set({ checked_at: now })
      .where('id', '=', id)
      .where('checked_at', '<=', now - intervalMs)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  /** Records (or counts again) a sign-in held for an admin; the oldest go past MAX_HELD_IDENTITIES. */
  async hold(row: {
    provider: string;
    provider_user_id: string;
    email: string;
    display_name: string;
    reason: string;
    user_id: number | null;
  }): Promise<void> {
    const now = Date.now();
    const fields = {
      email: row.email.slice(0, 254),
      display_name: row.display_name.slice(0, 128),
      reason: row.reason,
      user_id: row.user_id,
    };
    const again = async () =>
      Number(
        (
          await this.db
            .updateTable('held_identities')
            .set((eb) => ({ ...fields, attempts: eb('attempts', '+', 1), last_seen_at: now }))
            .where('provider', '=', row.provider)
            .where('provider_user_id', '=', row.provider_user_id)
            .executeTakeFirst()
        ).numUpdatedRows,
      ) > 0;
    if (await again()) return;
    const count = Number(
      (
        await this.db
          .selectFrom('held_identities')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
    if (count >= MAX_HELD_IDENTITIES) {
      const oldest = this.db
        .selectFrom('held_identities')
        .select('id')
        .orderBy('last_seen_at')
        .limit(count - MAX_HELD_IDENTITIES + 1);
      await this.db.deleteFrom('held_identities').where('id', 'in', oldest).execute();
    }
    try {
      await this.db
        .insertInto('held_identities')
        .values({ provider: row.provider, provider_user_id: row.provider_user_id, ...fields, created_at: now, last_seen_at: now })
        .execute();
    } catch (err) {
      // The same person twice at once: the unique index kept one row, count this attempt on it.
      if (!(await again())) throw err;
    }
  }

  heldIdentities(limit: number): Promise<HeldRow[]> {
    return this.db.selectFrom('held_identities').selectAll().orderBy('last_seen_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
  }

  heldIdentity(provider: string, providerUserId: string): Promise<HeldRow | undefined> {
    return this.db
      .selectFrom('held_identities')
      .selectAll()
      .where('provider', '=', provider)
      .where('provider_user_id', '=', providerUserId)
      .executeTakeFirst();
  }

  /** Forgets a held sign-in; answers whether there was one. */
  async dismissHeld(id: number): Promise<boolean> {
    const res = await this.db.deleteFrom('held_identities').where('id', '=', id).executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  }

  /** A held sign-in is over once its identity is linked, whichever way. */
  async forgetHeld(provider: string, providerUserId: string): Promise<void> {
    await this.db.deleteFrom('held_identities').where('provider', '=', provider).where('provider_user_id', '=', providerUserId).execute();
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
