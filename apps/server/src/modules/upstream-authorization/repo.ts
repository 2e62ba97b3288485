import type { Insertable, Selectable } from 'kysely';
import type { Db } from '../../db/db.js';
import type { UpstreamOAuthServicesTable, UpstreamOAuthStatesTable, UpstreamOAuthTokensTable } from '../../db/schema.js';

export type OAuthServiceRow = Selectable<UpstreamOAuthServicesTable>;
export type TokenRow = Selectable<UpstreamOAuthTokensTable>;
export type StateRow = Selectable<UpstreamOAuthStatesTable>;

/** The columns of a connection's last health check through its own link. */
type PersonalCheckColumn = 'check_status' | 'check_details' | 'tool_count' | 'checked_at';

/** One health check of one user's connection, as the gateway made it through that user's link. */
export interface PersonalCheck {
  status: string;
  details: string;
  toolCount?: number;
  checkedAt: number;
}

/** The SQL of the upstream OAuth connections (migration 0007), the same on SQLite and PostgreSQL. */
export class UpstreamOAuthRepo {
  constructor(private readonly db: Db) {}

  settings(serviceId: number): Promise<OAuthServiceRow | undefined> {
    return this.db.selectFrom('upstream_oauth_services').selectAll().where('service_id', '=', serviceId).executeTakeFirst();
  }

  allSettings(): Promise<OAuthServiceRow[]> {
    return this.db.selectFrom('upstream_oauth_services').selectAll().execute();
  }

  /** Creates the row when missing (first discovery wins), else updates the given columns. */
  async saveSettings(serviceId: number, patch: Partial<Omit<OAuthServiceRow, 'service_id'>>): Promise<void> {
    const now = Date.now();
    const updated = await this.db
      .updateTable('upstream_oauth_services')
      .set({ ...patch, updated_at: now })
      .where('service_id', '=', serviceId)
      .executeTakeFirst();
    if (Number(updated.numUpdatedRows) > 0) return;
    await this.db
      .insertInto('upstream_oauth_services')
      .values({ service_id: serviceId, ...patch, updated_at: now } as Insertable<UpstreamOAuthServicesTable>)
      .onConflict((oc) => oc.column('service_id').doUpdateSet({ ...patch, updated_at: now }))
      .execute();
  }

  token(serviceId: number, ownerId: number): Promise<TokenRow | undefined> {
    return this.db
      .selectFrom('upstream_oauth_tokens')
      .selectAll()
      .where('service_id', '=', serviceId)
      .where('owner_id', '=', ownerId)
      .executeTakeFirst();
  }

  /** The connections of one caller that concern the list: the shared ones and the caller's own, with their last check. */
  tokensVisibleTo(userId: number): Promise<Pick<TokenRow, 'service_id' | 'owner_id' | PersonalCheckColumn>[]> {
    return this.db
      .selectFrom('upstream_oauth_tokens')
      .select(['service_id', 'owner_id', 'check_status', 'check_details', 'tool_count', 'checked_at'])
      .where('owner_id', 'in', [0, userId])
      .execute();
  }

  /** A connection's health check through its own link (migration 0015); nothing when the connection is gone meanwhile. */
  async recordCheck(serviceId: number, ownerId: number, check: PersonalCheck): Promise<void> {
    await this.db
      .updateTable('upstream_oauth_tokens')
      // A check that could not list the tools keeps the count of the last one that could.
      .set({
        check_status: check.status,
        check_details: check.details,
        checked_at: check.checkedAt,
        ...(check.toolCount !== undefined ? { tool_count: check.toolCount } : {}),
      })
      .where('service_id', '=', serviceId)
      .where('owner_id', '=', ownerId)
      .execute();
  }

  /** Connections with a refresh token whose access token ends before `before` and that nobody is refreshing. */
  expiring(before: number, now: number): Promise<TokenRow[]> {
    return this.db
      .selectFrom('upstream_oauth_tokens')
      .selectAll()
      .where('refresh_token_enc', 'is not', null)
      .where('expires_at', 'is not', null)
      .where('expires_at', '<', before)
      .where('refreshing_until', '<', now)
      .limit(100)
      .execute();
  }

  /** A new connection (or the same one made again): it has not been checked yet, so an earlier check is forgotten. */
  async saveToken(row: Omit<TokenRow, 'version' | 'refreshing_until' | 'updated_at' | 'user_id' | PersonalCheckColumn>): Promise<void> {
    const now = Date.now();
    const values = {
      ...row,
      user_id: row.owner_id === 0 ? null : row.owner_id,
      refreshing_until: 0,
      updated_at: now,
      check_status: null,
      check_details: null,
      tool_count: null,
      checked_at: null,
    };
    await this.db
      .insertInto('upstream_oauth_tokens')
      .values({ ...values, version: 1 })
      .onConflict((oc) =>
        oc.columns(['service_id', 'owner_id']).doUpdateSet((eb) => ({ ...values, version: eb('upstream_oauth_tokens.version', '+', 1) })),
      )
      .execute();
  }

  /**
   * Takes the refresh of a connection for this replica until `until`, when still at `version` and
   * nobody else holds it: exactly one replica wins (docs/decisions/0030-upstream-oauth.md).
   */
  async claimRefresh(serviceId: number, ownerId: number, version: number, now: number, until: number): Promise<boolean> {
    const result = await this.db
      .updateTable('upstream_oauth_tokens')
      .set({ refreshing_until: until })
      .where('service_id', '=', serviceId)
      .where('owner_id', '=', ownerId)
      .where('version', '=', version)
      .where('refreshing_until', '<', now)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** The refresh's result, stored only by the replica that holds the claim at `version`. */
  async refreshed(
    serviceId: number,
    ownerId: number,
    version: number,
    patch: Pick<TokenRow, 'access_token_enc' | 'refresh_token_enc' | 'expires_at'>,
  ): Promise<void> {
    await this.db
      .updateTable('upstream_oauth_tokens')
      .set({ ...patch, version: version + 1, refreshing_until: 0, updated_at: Date.now() })
      .where('service_id', '=', serviceId)
      .where('owner_id', '=', ownerId)
      .where('version', '=', version)
      .execute();
  }

  async releaseClaim(serviceId: number, ownerId: number, version: number): Promise<void> {
    await this.db
      .updateTable('upstream_oauth_tokens')
      .set({ refreshing_until: 0 })
      .where('service_id', '=', serviceId)
      .where('owner_id', '=', ownerId)
      .where('version', '=', version)
      .execute();
  }

  async deleteToken(serviceId: number, ownerId: number, version?: number): Promise<void> {
    let q = this.db.deleteFrom('upstream_oauth_tokens').where('service_id', '=', serviceId).where('owner_id', '=', ownerId);
    if (version !== undefined) q = q.where('version', '=', version);
    await q.execute();
  }

  async deleteTokensOf(serviceId: number): Promise<void> {
    await this.db.deleteFrom('upstream_oauth_tokens').where('service_id', '=', serviceId).execute();
  }

  async addState(row: StateRow): Promise<void> {
    await this.db.insertInto('upstream_oauth_states').values(row).execute();
  }

  /** Single use: the row is deleted, and only the caller whose DELETE removed it gets it. */
  async takeState(stateHash: string): Promise<StateRow | undefined> {
    const row = await this.db.selectFrom('upstream_oauth_states').selectAll().where('state_hash', '=', stateHash).executeTakeFirst();
    if (!row) return undefined;
    const gone = await this.db.deleteFrom('upstream_oauth_states').where('state_hash', '=', stateHash).executeTakeFirst();
    return Number(gone.numDeletedRows) === 1 ? row : undefined;
  }

  async purgeStates(now: number): Promise<void> {
    await this.db.deleteFrom('upstream_oauth_states').where('expires_at', '<', now).execute();
  }
}
