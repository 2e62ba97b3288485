import { sql } from 'kysely';
import type { Db } from '../../db/db.js';

export class OptionsRepo {
  constructor(private readonly db: Db) {}

  all(): Promise<{ key: string; value: string }[]> {
    return this.db.selectFrom('options').select(['key', 'value']).execute();
  }

  async upsert(key: string, value: string): Promise<void> {
    const now = Date.now();
    await this.db
      .insertInto('options')
      .values({ key, value, updated_at: now })
      .onConflict((oc) => oc.column('key').doUpdateSet({ value: sql`excluded.value`, updated_at: now }))
      .execute();
  }
}
