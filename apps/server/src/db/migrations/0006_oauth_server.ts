import type { Kysely } from 'kysely';
import { withId } from './helpers.js';

/**
 * Toolport as the OAuth 2.1 authorization server of its MCP endpoints (modules/authorization-server,
 * docs/decisions/0028-oauth-authorization-server.md). Everything a flow needs between two requests is
 * in the database, never in one replica's memory, so any replica answers any step. Secrets (codes,
 * refresh tokens, pending request ids) are stored as SHA-256 hashes only.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  // Clients: registered ones (RFC 7591) and cached Client ID Metadata Documents (client_id is their URL).
  await db.schema
    .createTable('oauth_server_clients')
    .addColumn('client_id', 'varchar(2048)', (c) => c.primaryKey())
    .addColumn('kind', 'varchar(16)', (c) => c.notNull())
    .addColumn('client_name', 'varchar(200)', (c) => c.notNull())
    .addColumn('client_uri', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('logo_uri', 'text', (c) => c.notNull().defaultTo(''))
    // JSON array of exact redirect URIs.
    .addColumn('redirect_uris', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    // A metadata document is fetched again after this; 0 for registered clients (never).
    .addColumn('expires_at', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();

  // An authorization request waiting for the user's Allow or Deny on the console's consent page.
  await db.schema
    .createTable('oauth_server_requests')
    .addColumn('id_hash', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('client_id', 'varchar(2048)', (c) => c.notNull())
    .addColumn('redirect_uri', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('code_challenge', 'varchar(128)', (c) => c.notNull())
    .addColumn('resource', 'text', (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();

  // What a user approved: one row per Allow. Codes, refresh tokens and access tokens name it; revoking it ends them all.
  await withId(db, db.schema.createTable('oauth_server_grants'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('client_id', 'varchar(2048)', (c) => c.notNull())
    .addColumn('client_name', 'varchar(200)', (c) => c.notNull())
    .addColumn('resource', 'text', (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_used_at', 'bigint')
    .addColumn('revoked_at', 'bigint')
    .execute();
  await db.schema.createIndex('oauth_server_grants_user').on('oauth_server_grants').column('user_id').execute();

  await db.schema
    .createTable('oauth_server_codes')
    .addColumn('code_hash', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('grant_id', 'integer', (c) => c.notNull().references('oauth_server_grants.id').onDelete('cascade'))
    .addColumn('redirect_uri', 'text', (c) => c.notNull())
    .addColumn('code_challenge', 'varchar(128)', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    // Set by the one exchange that wins; a second exchange finds it set and revokes the grant (RFC 6749 §4.1.2).
    .addColumn('used_at', 'bigint')
    .execute();

  await db.schema
    .createTable('oauth_server_refresh_tokens')
    .addColumn('token_hash', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('grant_id', 'integer', (c) => c.notNull().references('oauth_server_grants.id').onDelete('cascade'))
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    // Set when rotated; presenting it again revokes the whole family (the grant).
    .addColumn('used_at', 'bigint')
    .execute();
  await db.schema.createIndex('oauth_server_refresh_grant').on('oauth_server_refresh_tokens').column('grant_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [
    'oauth_server_refresh_tokens',
    'oauth_server_codes',
    'oauth_server_grants',
    'oauth_server_requests',
    'oauth_server_clients',
  ])
    await db.schema.dropTable(table).ifExists().execute();
}
