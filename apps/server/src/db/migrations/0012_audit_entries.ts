import type { Kysely } from 'kysely';
import { notNullDefault, withId } from './helpers.js';

/**
 * The audit trail (modules/audit, decision 0049): one row per administrative change, sign-in and refused
 * sign-in. `changes` is the change as JSON with its secrets masked. The indexes serve the filters of
 * `GET /api/audit` (actor, object, time, newest first) and the retention purge (created_at).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const text = notNullDefault('');
  await withId(db, db.schema.createTable('audit_entries'), true)
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('actor_type', 'varchar(16)', (c) => c.notNull())
    .addColumn('actor_id', 'integer')
    .addColumn('actor_name', 'varchar(128)', text)
    .addColumn('address', 'varchar(64)', text)
    .addColumn('action', 'varchar(32)', (c) => c.notNull())
    .addColumn('object_type', 'varchar(32)', (c) => c.notNull())
    .addColumn('object_id', 'varchar(256)', text)
    .addColumn('outcome', 'varchar(16)', (c) => c.notNull())
    .addColumn('via', 'varchar(256)', text)
    .addColumn('changes', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('audit_entries_created').on('audit_entries').columns(['created_at', 'id']).execute();
  await db.schema.createIndex('audit_entries_actor').on('audit_entries').columns(['actor_name', 'created_at']).execute();
  await db.schema.createIndex('audit_entries_actor_id').on('audit_entries').columns(['actor_id', 'created_at']).execute();
  await db.schema.createIndex('audit_entries_object').on('audit_entries').columns(['object_type', 'object_id', 'created_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('audit_entries').ifExists().execute();
}
