import type { Kysely } from 'kysely';
import { notNullDefault } from './helpers.js';

/**
 * Pinned `npx`/`uvx` services (issue 14, decision 0035): the command line the admin typed, kept for
 * display and export while the gateway runs the installed package's executable (`command`, `args_json`).
 * '' for every other service.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('services').addColumn('typed_command', 'text', notNullDefault('')).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('services').dropColumn('typed_command').execute();
}
