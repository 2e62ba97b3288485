import type { Kysely } from 'kysely';
import { notNullDefault, withId } from './helpers.js';

/** The whole schema of the first release; later migrations only add to it. */
export async function up(db: Kysely<unknown>): Promise<void> {
  const text = notNullDefault('');
  const zero = notNullDefault(0);

  await withId(db, db.schema.createTable('users'))
    .addColumn('username', 'varchar(64)', (c) => c.notNull().unique())
    .addColumn('display_name', 'varchar(128)', text)
    .addColumn('email', 'varchar(254)', text)
    .addColumn('password_hash', 'text')
    .addColumn('role', 'integer', notNullDefault(1))
    .addColumn('status', 'integer', notNullDefault(1))
    .addColumn('auth_version', 'integer', notNullDefault(1))
    .addColumn('api_key_hash', 'varchar(64)', (c) => c.notNull().unique())
    .addColumn('api_key_enc', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();

  await withId(db, db.schema.createTable('provider_identities'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('provider', 'varchar(32)', (c) => c.notNull())
    .addColumn('provider_user_id', 'varchar(255)', (c) => c.notNull())
    .addColumn('email', 'varchar(254)', text)
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('provider_identities_provider_uid', ['provider', 'provider_user_id'])
    .addUniqueConstraint('provider_identities_user_provider', ['user_id', 'provider'])
    .execute();

  await withId(db, db.schema.createTable('refresh_tokens'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('token_hash', 'varchar(64)', (c) => c.notNull().unique())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('revoked_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('refresh_tokens_user').on('refresh_tokens').column('user_id').execute();

  await db.schema
    .createTable('options')
    .addColumn('key', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('value', 'text', text)
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();

  await withId(db, db.schema.createTable('services'))
    .addColumn('name', 'varchar(64)', (c) => c.notNull().unique())
    .addColumn('display_name', 'varchar(128)', text)
    .addColumn('description', 'text', text)
    .addColumn('type', 'varchar(32)', (c) => c.notNull())
    .addColumn('source', 'varchar(32)', notNullDefault('custom'))
    .addColumn('package_name', 'varchar(255)', text)
    .addColumn('package_manager', 'varchar(32)', text)
    .addColumn('version', 'varchar(64)', text)
    .addColumn('command', 'text', text)
    .addColumn('args_json', 'text', notNullDefault('[]'))
    .addColumn('env_enc', 'text', text)
    .addColumn('headers_enc', 'text', text)
    .addColumn('env_schema_json', 'text', notNullDefault('[]'))
    .addColumn('install_dir', 'text', text)
    .addColumn('enabled', 'integer', notNullDefault(1))
    .addColumn('isolation', 'varchar(16)', notNullDefault('shared'))
    .addColumn('rpd_limit', 'integer', zero)
    .addColumn('health_status', 'varchar(32)', notNullDefault('unknown'))
    .addColumn('health_details', 'text', text)
    .addColumn('last_health_check', 'bigint')
    .addColumn('tool_count', 'integer', zero)
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('service_user_envs')
    .addColumn('service_id', 'integer', (c) => c.notNull().references('services.id').onDelete('cascade'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('env_enc', 'text', text)
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('service_user_envs_pk', ['service_id', 'user_id'])
    .execute();

  await db.schema
    .createTable('install_tasks')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('kind', 'varchar(16)', (c) => c.notNull())
    .addColumn('service_id', 'integer', (c) => c.references('services.id').onDelete('set null'))
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .addColumn('error_message', 'text', text)
    .addColumn('payload_json', 'text', notNullDefault('{}'))
    .addColumn('result_json', 'text', notNullDefault('{}'))
    .addColumn('created_by', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('finished_at', 'bigint')
    .execute();
  await db.schema.createIndex('install_tasks_created').on('install_tasks').column('created_at').execute();

  await withId(db, db.schema.createTable('install_task_logs'), true)
    .addColumn('task_id', 'varchar(64)', (c) => c.notNull().references('install_tasks.id').onDelete('cascade'))
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('line', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('install_task_logs_task_seq', ['task_id', 'seq'])
    .execute();

  // History keeps service and user ids without foreign keys: it outlives uninstalls and deletions.
  await withId(db, db.schema.createTable('request_records'), true)
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('day', 'varchar(10)', (c) => c.notNull())
    .addColumn('service_id', 'integer', (c) => c.notNull())
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addColumn('method', 'varchar(64)', (c) => c.notNull())
    .addColumn('target', 'varchar(255)', text)
    .addColumn('latency_ms', 'integer', zero)
    .addColumn('outcome', 'varchar(16)', (c) => c.notNull())
    .addColumn('bytes_in', 'integer', zero)
    .addColumn('bytes_out', 'integer', zero)
    .addColumn('error_message', 'text', text)
    .execute();
  await db.schema.createIndex('request_records_created').on('request_records').column('created_at').execute();
  await db.schema.createIndex('request_records_service_day').on('request_records').columns(['service_id', 'day']).execute();

  await db.schema
    .createTable('daily_counters')
    .addColumn('day', 'varchar(10)', (c) => c.notNull())
    .addColumn('service_id', 'integer', (c) => c.notNull())
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addColumn('request_count', 'integer', zero)
    .addColumn('error_count', 'integer', zero)
    .addColumn('total_latency_ms', 'bigint', zero)
    .addPrimaryKeyConstraint('daily_counters_pk', ['day', 'service_id', 'user_id'])
    .execute();

  await withId(db, db.schema.createTable('service_logs'), true)
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('service_id', 'integer')
    .addColumn('service_name', 'varchar(64)', text)
    .addColumn('phase', 'varchar(16)', (c) => c.notNull())
    .addColumn('level', 'varchar(16)', (c) => c.notNull())
    .addColumn('message', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('service_logs_created').on('service_logs').column('created_at').execute();
  await db.schema.createIndex('service_logs_service').on('service_logs').columns(['service_id', 'created_at']).execute();

  await db.schema
    .createTable('revoked_sessions')
    .addColumn('session_hash', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of [
    'revoked_sessions',
    'service_logs',
    'daily_counters',
    'request_records',
    'install_task_logs',
    'install_tasks',
    'service_user_envs',
    'services',
    'options',
    'refresh_tokens',
    'provider_identities',
    'users',
  ]) {
    await db.schema.dropTable(t).ifExists().execute();
  }
}
