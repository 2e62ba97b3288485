import type { Kysely } from 'kysely';

/**
 * What each meter run (one process start, decision 0043) has counted per (day, service, user). A run's
 * count only grows, and every writer raises it to a value it knows (`count = max(count, v)`), adding the
 * increase to daily_counters in the same transaction: a count written twice, late or by another replica
 * changes nothing. Purged after two days.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('meter_contributions')
    .addColumn('day', 'varchar(10)', (c) => c.notNull())
    .addColumn('service_id', 'integer', (c) => c.notNull())
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addColumn('run', 'varchar(32)', (c) => c.notNull())
    .addColumn('count', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('meter_contributions_pk', ['day', 'service_id', 'user_id', 'run'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('meter_contributions').ifExists().execute();
}
