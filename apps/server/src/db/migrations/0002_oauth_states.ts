import type { Kysely } from 'kysely';

/**
 * Pending sign-ins with GitHub or Google: one row per redirect to a provider, deleted when the
 * provider sends the browser back (single use) or when it expires. In the database, not in process
 * memory, so the replica that answers the return need not be the one that started the sign-in.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('oauth_states')
    // SHA-256 of the `state` sent to the provider: the row alone cannot complete a sign-in.
    .addColumn('state_hash', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('provider', 'varchar(32)', (c) => c.notNull())
    // The PKCE verifier, encrypted (Secrets.encrypt).
    .addColumn('code_verifier_enc', 'text', (c) => c.notNull())
    // SHA-256 of the nonce in the browser's cookie: the flow finishes only in the browser that began it.
    .addColumn('browser_hash', 'varchar(64)', (c) => c.notNull())
    // Token requests must repeat the return address sent to the authorize page.
    .addColumn('redirect_uri', 'text', (c) => c.notNull())
    // Set for a binding flow: the signed-in user the identity will be linked to.
    .addColumn('bind_user_id', 'integer', (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('oauth_states_expires').on('oauth_states').column('expires_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('oauth_states').ifExists().execute();
}
