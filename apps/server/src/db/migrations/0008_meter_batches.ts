import type { Kysely } from 'kysely';

/**
 * The ids of the counter batches the meter wrote (decision 0021). A write whose connection broke
 * during its commit may have committed or not: the meter looks its id up here before it adds the
 * same counts again, so a database outage never counts a call twice. Kept a day.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('meter_batches')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('written_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('meter_batches_written_at').on('meter_batches').column('written_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('meter_batches').ifExists().execute();
}
