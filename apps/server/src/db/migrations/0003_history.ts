import { type CreateTableBuilder, type Kysely, sql } from 'kysely';
import { notNullDefault } from './helpers.js';

/**
 * History that stays fast (docs/architecture.md §6): daily rollups of request records, the indexes the logs
 * screen pages and filters with, and the indexes the retention purge deletes by.
 *
 * - `request_rollups`: one row per (day, service, user, method, target) with counts, latency sum and
 *   maximum, and bytes; for per-tool and per-user figures over any range of days.
 * - `service_day_rollups`: the same figures per (day, service) only, a few rows per day, for the
 *   dashboard, the analytics screen and the logs screen's counts.
 *
 * Both are kept up to date in the transaction that stores the records (modules/history/rollups.ts)
 * and outlive the raw records' retention. Rollups of the records already stored are built here.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const zero = notNullDefault(0);
  const figures = <T extends string, C extends string>(table: CreateTableBuilder<T, C>) =>
    table
      // Admitted requests (ok or error); refusals over the daily limit are counted apart.
      .addColumn('request_count', 'integer', zero)
      .addColumn('error_count', 'integer', zero)
      .addColumn('limited_count', 'integer', zero)
      // Latency of admitted requests only: a refusal never reached the upstream.
      .addColumn('latency_sum_ms', 'bigint', zero)
      .addColumn('latency_max_ms', 'integer', zero)
      .addColumn('bytes_in', 'bigint', zero)
      .addColumn('bytes_out', 'bigint', zero);

  await figures(
    db.schema
      .createTable('request_rollups')
      .addColumn('day', 'varchar(10)', (c) => c.notNull())
      .addColumn('service_id', 'integer', (c) => c.notNull())
      .addColumn('user_id', 'integer', (c) => c.notNull())
      .addColumn('method', 'varchar(64)', (c) => c.notNull())
      .addColumn('target', 'varchar(255)', notNullDefault('')),
  )
    .addPrimaryKeyConstraint('request_rollups_pk', ['day', 'service_id', 'user_id', 'method', 'target'])
    .execute();
  await db.schema.createIndex('request_rollups_service_day').on('request_rollups').columns(['service_id', 'day']).execute();
  await db.schema.createIndex('request_rollups_user_day').on('request_rollups').columns(['user_id', 'day']).execute();

  await figures(
    db.schema
      .createTable('service_day_rollups')
      .addColumn('day', 'varchar(10)', (c) => c.notNull())
      .addColumn('service_id', 'integer', (c) => c.notNull()),
  )
    .addPrimaryKeyConstraint('service_day_rollups_pk', ['day', 'service_id'])
    .execute();

  // The logs screen pages newest first (created_at, id) under each filter it offers: service, level
  // (the outcome of a request) and both; several services (a name filter) are read from the index
  // alone (it covers service and outcome) and replace the created_at index, its prefix. The purge
  // deletes whole days; the oldest stored day is found from the day index. (service_id, day) had no
  // reader left.
  await db.schema.dropIndex('request_records_service_day').execute();
  await db.schema
    .createIndex('request_records_created_filters')
    .on('request_records')
    .columns(['created_at', 'id', 'service_id', 'outcome'])
    .execute();
  await db.schema.dropIndex('request_records_created').execute();
  await db.schema.createIndex('request_records_service_created').on('request_records').columns(['service_id', 'created_at']).execute();
  await db.schema.createIndex('request_records_outcome_created').on('request_records').columns(['outcome', 'created_at']).execute();
  await db.schema
    .createIndex('request_records_service_outcome_created')
    .on('request_records')
    .columns(['service_id', 'outcome', 'created_at'])
    .execute();
  await db.schema.createIndex('request_records_day').on('request_records').columns(['day', 'service_id', 'outcome']).execute();

  // The logs screen counts service log lines in a time range under its filters: from the index
  // alone, which also serves the purge by time (it replaces the created_at index, its prefix).
  await db.schema
    .createIndex('service_logs_created_filters')
    .on('service_logs')
    .columns(['created_at', 'id', 'service_id', 'phase', 'level', 'service_name'])
    .execute();
  await db.schema.dropIndex('service_logs_created').execute();

  // Install logs are purged a finished task at a time (its lines go with it).
  await db.schema.createIndex('install_tasks_finished').on('install_tasks').column('finished_at').execute();

  // Rollups of the history recorded before this migration. Kept in step with ROLLUP_SELECT in
  // modules/history/rollups.ts (a migration never imports application code: it must not change later).
  const figuresOf = sql.raw(`
    SUM(CASE WHEN outcome <> 'limited' THEN 1 ELSE 0 END),
    SUM(CASE WHEN outcome = 'error' THEN 1 ELSE 0 END),
    SUM(CASE WHEN outcome = 'limited' THEN 1 ELSE 0 END),
    SUM(CASE WHEN outcome <> 'limited' THEN latency_ms ELSE 0 END),
    MAX(CASE WHEN outcome <> 'limited' THEN latency_ms ELSE 0 END),
    SUM(bytes_in),
    SUM(bytes_out)`);
  const columns = sql.raw('request_count, error_count, limited_count, latency_sum_ms, latency_max_ms, bytes_in, bytes_out');
  await sql`
    INSERT INTO request_rollups (day, service_id, user_id, method, target, ${columns})
    SELECT day, service_id, user_id, method, target, ${figuresOf}
    FROM request_records GROUP BY day, service_id, user_id, method, target`.execute(db);
  await sql`
    INSERT INTO service_day_rollups (day, service_id, ${columns})
    SELECT day, service_id, ${figuresOf}
    FROM request_records GROUP BY day, service_id`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('install_tasks_finished').ifExists().execute();
  await db.schema.createIndex('service_logs_created').ifNotExists().on('service_logs').column('created_at').execute();
  await db.schema.dropIndex('service_logs_created_filters').ifExists().execute();
  for (const name of [
    'request_records_day',
    'request_records_service_outcome_created',
    'request_records_outcome_created',
    'request_records_service_created',
  ]) {
    await db.schema.dropIndex(name).ifExists().execute();
  }
  await db.schema.createIndex('request_records_created').ifNotExists().on('request_records').column('created_at').execute();
  await db.schema.dropIndex('request_records_created_filters').ifExists().execute();
  await db.schema.createIndex('request_records_service_day').ifNotExists().on('request_records').columns(['service_id', 'day']).execute();
  await db.schema.dropTable('service_day_rollups').ifExists().execute();
  await db.schema.dropTable('request_rollups').ifExists().execute();
}
