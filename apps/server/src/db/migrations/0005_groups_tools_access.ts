import type { Kysely } from 'kysely';
import { notNullDefault, withId } from './helpers.js';

/**
 * Issue 17 (docs/decisions/0026-groups-tool-overrides-access.md):
 *
 * - `tool_overrides`: per service, a tool's switch, alias and description, keyed by the service's
 *   name and the tool's original name so that they survive restarts, upgrades and an uninstall
 *   followed by a re-install under the same name (which gets a new id); a tool that disappears keeps
 *   its row and is matched again when it comes back.
 * - `access_lists` / `access_users`: whether a service or a group is restricted, and to whom. No row
 *   means open to every signed-in user (the behaviour before this migration).
 * - `groups` / `group_members`: one endpoint for many services, each whole or with a subset of tools.
 *
 * Nothing else references `services` by foreign key: a service is removed by the install lifecycle, which
 * knows nothing of these tables; the exposure module drops its rows on `service.removed`.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('tool_overrides')
    .addColumn('service_name', 'varchar(64)', (c) => c.notNull())
    .addColumn('original_name', 'varchar(255)', (c) => c.notNull())
    .addColumn('enabled', 'integer', notNullDefault(1))
    .addColumn('alias', 'varchar(255)')
    .addColumn('description', 'text')
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('tool_overrides_pk', ['service_name', 'original_name'])
    .execute();

  await db.schema
    .createTable('access_lists')
    .addColumn('subject', 'varchar(16)', (c) => c.notNull())
    .addColumn('subject_id', 'integer', (c) => c.notNull())
    .addColumn('restricted', 'integer', notNullDefault(0))
    .addPrimaryKeyConstraint('access_lists_pk', ['subject', 'subject_id'])
    .execute();
  await db.schema
    .createTable('access_users')
    .addColumn('subject', 'varchar(16)', (c) => c.notNull())
    .addColumn('subject_id', 'integer', (c) => c.notNull())
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('access_users_pk', ['subject', 'subject_id', 'user_id'])
    .execute();
  await db.schema.createIndex('access_users_user').on('access_users').column('user_id').execute();

  await withId(db, db.schema.createTable('groups'))
    .addColumn('name', 'varchar(64)', (c) => c.notNull().unique())
    .addColumn('display_name', 'varchar(128)', notNullDefault(''))
    .addColumn('description', 'text', notNullDefault(''))
    .addColumn('mode', 'varchar(16)', notNullDefault('all'))
    .addColumn('separator', 'varchar(8)', notNullDefault('__'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('group_members')
    .addColumn('group_id', 'integer', (c) => c.notNull())
    .addColumn('service_id', 'integer', (c) => c.notNull())
    .addColumn('position', 'integer', notNullDefault(0))
    // JSON array of original tool names; '' means the whole service.
    .addColumn('tools_json', 'text', notNullDefault(''))
    .addPrimaryKeyConstraint('group_members_pk', ['group_id', 'service_id'])
    .execute();
  await db.schema.createIndex('group_members_service').on('group_members').column('service_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['group_members', 'groups', 'access_users', 'access_lists', 'tool_overrides']) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
