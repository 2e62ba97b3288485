import type { Kysely } from 'kysely';

/**
 * The last health check of a per-user OAuth connection (issue 29): the service's own health row is checked without
 * a user and, in per-user mode, cannot list tools; each user's connection is checked through that user's own link
 * (after Connect, and when they press the health check), and the list shows them their own result.
 *
 * - `check_status`, `check_details`, `tool_count`, `checked_at` on `upstream_oauth_tokens`: null until the first
 *   check of the connection. They go with the connection (disconnect, a revoked refresh token, a deleted user).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('upstream_oauth_tokens').addColumn('check_status', 'varchar(32)').execute();
  await db.schema.alterTable('upstream_oauth_tokens').addColumn('check_details', 'text').execute();
  await db.schema.alterTable('upstream_oauth_tokens').addColumn('tool_count', 'integer').execute();
  await db.schema.alterTable('upstream_oauth_tokens').addColumn('checked_at', 'bigint').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const column of ['check_status', 'check_details', 'tool_count', 'checked_at']) {
    await db.schema.alterTable('upstream_oauth_tokens').dropColumn(column).execute();
  }
}
