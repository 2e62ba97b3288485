import type { Kysely } from 'kysely';
import { notNullDefault } from './helpers.js';

/**
 * OpenAPI services (decision 0056): the document compiled into one entry per operation, as JSON
 * (gateway/openapi/plan.ts). '' for every other service.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('services').addColumn('openapi_json', 'text', notNullDefault('')).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('services').dropColumn('openapi_json').execute();
}
