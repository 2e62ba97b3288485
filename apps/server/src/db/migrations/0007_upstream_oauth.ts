import type { Kysely } from 'kysely';

/**
 * Toolport as the OAuth client of remote MCP services (issue 19, docs/decisions/0030-upstream-oauth.md):
 * what was discovered and registered per service, the tokens per connection (the shared one, owner 0,
 * or one per user) and the authorizations in progress. Secrets are encrypted (Secrets.encrypt).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('upstream_oauth_services')
    .addColumn('service_id', 'integer', (c) => c.primaryKey().references('services.id').onDelete('cascade'))
    // 'shared': one connection an admin makes for everyone; 'per_user': each user connects their own account.
    .addColumn('mode', 'varchar(16)', (c) => c.notNull().defaultTo('shared'))
    // The protected resource (RFC 8707 indicator) and its authorization server, as discovered.
    .addColumn('resource', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('issuer', 'text', (c) => c.notNull().defaultTo(''))
    // The authorization server's metadata (RFC 8414), JSON.
    .addColumn('metadata_json', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('scope', 'text', (c) => c.notNull().defaultTo(''))
    // 'cimd' | 'dynamic' | 'manual' | '' (not registered yet).
    .addColumn('registration', 'varchar(16)', (c) => c.notNull().defaultTo(''))
    .addColumn('client_id', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('client_secret_enc', 'text')
    // The redirect URI the client was registered with: a new ServerAddress means registering again.
    .addColumn('redirect_uri', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('upstream_oauth_tokens')
    .addColumn('service_id', 'integer', (c) => c.notNull().references('services.id').onDelete('cascade'))
    // 0: the shared connection; else the user whose own account this is.
    .addColumn('owner_id', 'integer', (c) => c.notNull())
    // The same user for a per-user connection (null for the shared one): deleting the user deletes it.
    .addColumn('user_id', 'integer', (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('access_token_enc', 'text', (c) => c.notNull())
    .addColumn('refresh_token_enc', 'text')
    // Unix milliseconds; null when the provider did not say.
    .addColumn('expires_at', 'bigint')
    // Who the connection acts as upstream, when the provider told (id token or userinfo); may be empty.
    .addColumn('subject', 'text', (c) => c.notNull().defaultTo(''))
    // The user who connected it (for the shared connection: an admin).
    .addColumn('connected_by', 'integer', (c) => c.notNull())
    // Bumped on every change: a replica that waited for another's refresh sees it by this.
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(0))
    // Unix milliseconds until which one replica holds the refresh; the others wait for its result.
    .addColumn('refreshing_until', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('upstream_oauth_tokens_pk', ['service_id', 'owner_id'])
    .execute();

  await db.schema
    .createTable('upstream_oauth_states')
    // SHA-256 of the `state` sent to the provider: single use, deleted when the callback takes it.
    .addColumn('state_hash', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('service_id', 'integer', (c) => c.notNull().references('services.id').onDelete('cascade'))
    // The signed-in user who pressed Connect: the connection is theirs (or the shared one they may make).
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('owner_id', 'integer', (c) => c.notNull())
    .addColumn('code_verifier_enc', 'text', (c) => c.notNull())
    .addColumn('redirect_uri', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('upstream_oauth_states_expires').on('upstream_oauth_states').column('expires_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('upstream_oauth_states').ifExists().execute();
  await db.schema.dropTable('upstream_oauth_tokens').ifExists().execute();
  await db.schema.dropTable('upstream_oauth_services').ifExists().execute();
}
