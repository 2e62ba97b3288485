import type { Db } from '../../db/db.js';
import type { OAuthServerClientsTable, OAuthServerRequestsTable } from '../../db/schema.js';

export interface ClientRow {
  client_id: string;
  kind: string;
  client_name: string;
  client_uri: string;
  logo_uri: string;
  redirect_uris: string;
  created_at: number;
  expires_at: number;
}

export type RequestRow = OAuthServerRequestsTable;

export interface GrantRow {
  id: number;
  user_id: number;
  client_id: string;
  client_name: string;
  resource: string;
  scope: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}

/** SQL of the OAuth authorization server (migration 0006); the same statements on SQLite and PostgreSQL. */
export class OAuthServerRepo {
  constructor(private readonly db: Db) {}

  client(clientId: string): Promise<ClientRow | undefined> {
    return this.db.selectFrom('oauth_server_clients').selectAll().where('client_id', '=', clientId).executeTakeFirst();
  }

  async saveClient(row: Omit<OAuthServerClientsTable, 'client_uri' | 'logo_uri' | 'expires_at'> & ClientRowExtras): Promise<void> {
    await this.db
      .insertInto('oauth_server_clients')
      .values(row)
      .onConflict((oc) =>
        oc.column('client_id').doUpdateSet({
          client_name: row.client_name,
          client_uri: row.client_uri,
          logo_uri: row.logo_uri,
          redirect_uris: row.redirect_uris,
          expires_at: row.expires_at,
        }),
      )
      .execute();
  }

  async addRequest(row: RequestRow): Promise<void> {
    await this.db.insertInto('oauth_server_requests').values(row).execute();
  }

  request(idHash: string): Promise<RequestRow | undefined> {
    return this.db.selectFrom('oauth_server_requests').selectAll().where('id_hash', '=', idHash).executeTakeFirst();
  }

  /** Removes a pending request; true for the one caller that removed it (a decision is taken once). */
  async takeRequest(idHash: string): Promise<boolean> {
    const result = await this.db.deleteFrom('oauth_server_requests').where('id_hash', '=', idHash).executeTakeFirst();
    return Number(result.numDeletedRows) === 1;
  }

  async addGrant(row: Omit<GrantRow, 'id' | 'last_used_at' | 'revoked_at'>): Promise<number> {
    const inserted = await this.db.insertInto('oauth_server_grants').values(row).returning('id').executeTakeFirstOrThrow();
    return Number(inserted.id);
  }

  grant(id: number): Promise<GrantRow | undefined> {
    return this.db.selectFrom('oauth_server_grants').selectAll().where('id', '=', id).executeTakeFirst();
  }

  grantsOf(userId: number): Promise<GrantRow[]> {
    return this.db
      .selectFrom('oauth_server_grants')
      .selectAll()
      .where('user_id', '=', userId)
      .where('revoked_at', 'is', null)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .execute();
  }

  /** The user's active grants with their client's redirect URIs (null for a client no longer stored), newest first. */
  grantsWithRedirects(userId: number): Promise<(GrantRow & { redirect_uris: string | null })[]> {
    return this.db
      .selectFrom('oauth_server_grants as g')
      .leftJoin('oauth_server_clients as c', 'c.client_id', 'g.client_id')
      .selectAll('g')
      .select('c.redirect_uris')
      .where('g.user_id', '=', userId)
      .where('g.revoked_at', 'is', null)
      .orderBy('g.created_at', 'desc')
      .orderBy('g.id', 'desc')
      .execute();
  }

  /** Revokes a grant (and so every token of it); with `userId`, only that user's. True when it was active. */
  async revokeGrant(id: number, now: number, userId?: number): Promise<boolean> {
    let q = this.db.updateTable('oauth_server_grants').set({ revoked_at: now }).where('id', '=', id).where('revoked_at', 'is', null);
    if (userId !== undefined) q = q.where('user_id', '=', userId);
    const result = await q.executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async touchGrant(id: number, now: number): Promise<void> {
    await this.db.updateTable('oauth_server_grants').set({ last_used_at: now }).where('id', '=', id).execute();
  }

  async addCode(row: {
    code_hash: string;
    grant_id: number;
    redirect_uri: string;
    code_challenge: string;
    expires_at: number;
  }): Promise<void> {
    await this.db.insertInto('oauth_server_codes').values(row).execute();
  }

  code(codeHash: string) {
    return this.db.selectFrom('oauth_server_codes').selectAll().where('code_hash', '=', codeHash).executeTakeFirst();
  }

  /** Marks a code or refresh token used; true only for the one caller (on any replica) that did. */
  async useCode(codeHash: string, now: number): Promise<boolean> {
    const result = await this.db
      .updateTable('oauth_server_codes')
      .set({ used_at: now })
      .where('code_hash', '=', codeHash)
      .where('used_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async addRefreshToken(row: { token_hash: string; grant_id: number; expires_at: number }): Promise<void> {
    await this.db.insertInto('oauth_server_refresh_tokens').values(row).execute();
  }

  refreshToken(tokenHash: string) {
    return this.db.selectFrom('oauth_server_refresh_tokens').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
  }

  async useRefreshToken(tokenHash: string, now: number): Promise<boolean> {
    const result = await this.db
      .updateTable('oauth_server_refresh_tokens')
      .set({ used_at: now })
      .where('token_hash', '=', tokenHash)
      .where('used_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Expired pending requests, codes and refresh tokens, and cached metadata documents past their time. */
  async purgeExpired(now: number): Promise<void> {
    await this.db.deleteFrom('oauth_server_requests').where('expires_at', '<', now).execute();
    await this.db.deleteFrom('oauth_server_codes').where('expires_at', '<', now).execute();
    await this.db.deleteFrom('oauth_server_refresh_tokens').where('expires_at', '<', now).execute();
  }
}

interface ClientRowExtras {
  client_uri: string;
  logo_uri: string;
  expires_at: number;
}
