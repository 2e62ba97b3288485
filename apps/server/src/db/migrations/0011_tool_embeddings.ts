import type { Kysely } from 'kysely';

/**
 * Tool vectors of discovery search (decision 0046): one per embeddings space (provider URL, model and
 * dimensions, hashed) and tool version (a hash of the tool's name, description and input schema), so a
 * vector is asked of the provider once and kept across restarts and replicas. The vector is its
 * Float32 bytes in base64: the same text column on SQLite and PostgreSQL, no extension needed.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('tool_embeddings')
    .addColumn('space', 'varchar(64)', (c) => c.notNull())
    .addColumn('tool_hash', 'varchar(64)', (c) => c.notNull())
    .addColumn('dimensions', 'integer', (c) => c.notNull())
    .addColumn('vector', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('tool_embeddings_pk', ['space', 'tool_hash'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('tool_embeddings').ifExists().execute();
}
