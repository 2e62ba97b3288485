import type { Kysely } from 'kysely';

/**
 * Personal switches (issue 14): a row means that user switched that service off for themselves. The
 * service stays on for everyone else; only an admin's switch (services.enabled) is global.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('service_user_switches')
    .addColumn('service_id', 'integer', (c) => c.notNull().references('services.id').onDelete('cascade'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('service_user_switches_pk', ['service_id', 'user_id'])
    .execute();
  // The proxy reads a user's switches with every uncached API key lookup.
  await db.schema.createIndex('service_user_switches_user').on('service_user_switches').column('user_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('service_user_switches').ifExists().execute();
}
