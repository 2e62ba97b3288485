import { type ColumnDefinitionBuilder, type CreateTableBuilder, type Kysely, PostgresAdapter } from 'kysely';

export const isPostgres = <DB>(db: Kysely<DB>): boolean => db.getExecutor().adapter instanceof PostgresAdapter;

/** An auto-incrementing primary key on either engine. */
export function withId<T extends string>(db: Kysely<unknown>, table: CreateTableBuilder<T, never>, big = false) {
  if (isPostgres(db)) return table.addColumn('id', big ? 'bigserial' : 'serial', (c) => c.primaryKey());
  return table.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
}

export const notNullDefault =
  (value: string | number) =>
  (c: ColumnDefinitionBuilder): ColumnDefinitionBuilder =>
    c.notNull().defaultTo(value);
