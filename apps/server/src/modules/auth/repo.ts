import type { Db } from '../../db/db.js';

export class RefreshTokensRepo {
  constructor(private readonly db: Db) {}

  async insert(userId: number, tokenHash: string, expiresAt: number): Promise<void> {
    await this.db
      .insertInto('refresh_tokens')
      .values({ user_id: userId, token_hash: tokenHash, expires_at: expiresAt, created_at: Date.now() })
      .execute();
  }

  byHash(tokenHash: string) {
    return this.db.selectFrom('refresh_tokens').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
  }

  /** Marks one token used; false when another request revoked it first (a replay). */
  async revoke(id: number): Promise<boolean> {
    const res = await this.db
      .updateTable('refresh_tokens')
      .set({ revoked_at: Date.now() })
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  async revokeAllOf(userId: number): Promise<void> {
    await this.db
      .updateTable('refresh_tokens')
      .set({ revoked_at: Date.now() })
      .where('user_id', '=', userId)
      .where('revoked_at', 'is', null)
      .execute();
  }

  async purgeExpired(before: number): Promise<void> {
    await this.db.deleteFrom('refresh_tokens').where('expires_at', '<', before).execute();
  }
}
