import { type Kysely, sql } from 'kysely';
import { isPostgres, notNullDefault, withId } from './helpers.js';

/**
 * Account linking by an admin and deprovisioning at refresh (decision 0063).
 *
 * - `held_identities`: provider identities whose sign-in was refused because only an admin may link them (an
 *   unverified email that belongs to an account, a provider that may not sign people up). One row per identity,
 *   so an admin can link it to an account from the console; it goes when it is linked or dismissed.
 * - `provider_identities` keeps the provider's refresh and access tokens (encrypted, only for providers with
 *   deprovisioning on), so a console refresh can ask the provider whether it still vouches for the person.
 * - The provider columns widen to 64: `oidc:` and a slug of up to 40 characters did not fit in 32.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await withId(db, db.schema.createTable('held_identities'))
    .addColumn('provider', 'varchar(64)', (c) => c.notNull())
    .addColumn('provider_user_id', 'varchar(255)', (c) => c.notNull())
    .addColumn('email', 'varchar(254)', notNullDefault(''))
    .addColumn('display_name', 'varchar(128)', notNullDefault(''))
    // Why the sign-in was held: `email_unverified`, `signup_closed`, `email_ambiguous`.
    .addColumn('reason', 'varchar(32)', (c) => c.notNull())
    // The account the address belongs to, when there is one: the admin's likely choice, never applied by itself.
    .addColumn('user_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('attempts', 'integer', notNullDefault(1))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_seen_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('held_identities_provider_uid', ['provider', 'provider_user_id'])
    .execute();
  await db.schema.alterTable('provider_identities').addColumn('refresh_token_enc', 'text', notNullDefault('')).execute();
  await db.schema.alterTable('provider_identities').addColumn('access_token_enc', 'text', notNullDefault('')).execute();
  await db.schema.alterTable('provider_identities').addColumn('access_expires_at', 'bigint', notNullDefault(0)).execute();
  // When a refresh last claimed the check at the provider: one check at a time per identity, across replicas.
  await db.schema.alterTable('provider_identities').addColumn('checked_at', 'bigint', notNullDefault(0)).execute();
  if (isPostgres(db)) {
    await sql`ALTER TABLE provider_identities ALTER COLUMN provider TYPE varchar(64)`.execute(db);
    await sql`ALTER TABLE oauth_states ALTER COLUMN provider TYPE varchar(64)`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('held_identities').ifExists().execute();
  for (const column of ['refresh_token_enc', 'access_token_enc', 'access_expires_at', 'checked_at']) {
    await db.schema.alterTable('provider_identities').dropColumn(column).execute();
  }
}
