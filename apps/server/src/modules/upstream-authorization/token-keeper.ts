import { refreshAuthorization } from '@modelcontextprotocol/sdk/client/auth.js';
import type { AuthorizationServerMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { OAuthMode } from '@toolport/contract';
import type { ServiceSpec } from '../../gateway/catalog.js';
import {
  type ConnectionGrant,
  type GrantedToken,
  type UpstreamAuthorization,
  UpstreamConnectionMissing,
} from '../../gateway/upstream-auth.js';
import { LocalisedError } from '../../i18n/localised-error.js';
import { baseOf, CALLBACK_PATH, missing, oauthCode, text, type UpstreamOAuthDeps } from './common.js';
import type { ProviderClient } from './provider-client.js';
import type { OAuthServiceRow, TokenRow } from './repo.js';

/** A token this close to its end is refreshed before it is sent. */
const REFRESH_AHEAD_MS = 60_000;
/** The background refresher renews tokens this close to their end, so calls rarely wait for a refresh. */
const BACKGROUND_AHEAD_MS = 5 * 60_000;
/** How long one replica holds a refresh before another may try. */
const CLAIM_MS = 30_000;
/** How long a replica waits for another's refresh to land. */
const WAIT_FOR_OTHER_MS = 15_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const endingSoon = (expiresAt: number | null, within: number) => expiresAt !== null && expiresAt - within < Date.now();

/**
 * The token keeper (docs/decisions/0030-upstream-oauth.md, 0050-credentials-in-one-step.md): tokens
 * encrypted at rest, refreshed ahead of expiry and once on a 401 (one replica wins), revoked on
 * disconnect. Implements the gateway's UpstreamAuthorization port: one question per acquisition.
 */
export class TokenKeeper implements UpstreamAuthorization {
  private readonly modes = new Map<number, OAuthMode | undefined>();
  private readonly refreshing = new Map<string, Promise<TokenRow>>();

  constructor(
    private readonly deps: UpstreamOAuthDeps,
    private readonly provider: ProviderClient,
  ) {}

  /** Cached reads are dropped when a service changes (on any replica: events are relayed). */
  forget(serviceId: number): void {
    this.modes.delete(serviceId);
  }

  /** A connection or the settings changed here: every replica's caches and links follow. */
  changed(serviceId: number): void {
    this.forget(serviceId);
    this.deps.events.emit({ type: 'service.changed', serviceId });
  }

  // ---- the gateway's port ----

  async forLink(serviceId: number, userId: number | undefined): Promise<ConnectionGrant> {
    const mode = await this.modeOf(serviceId);
    const owner = mode === 'shared' ? 0 : mode === 'per_user' ? userId : undefined;
    // No connection (or a per-user one asked for no user: the health check): a 401 is reported instead.
    if (mode === undefined || owner === undefined) {
      return { mode, owner: undefined, unauthorized: (www) => this.provider.unauthorized(serviceId, www) };
    }
    try {
      return { mode, owner, token: this.granted(await this.current(serviceId, owner)) };
    } catch (err) {
      if (err instanceof UpstreamConnectionMissing) return { mode, owner, refused: err };
      throw err;
    }
  }

  async modeOf(serviceId: number): Promise<OAuthMode | undefined> {
    if (this.modes.has(serviceId)) return this.modes.get(serviceId);
    const row = await this.deps.repo.settings(serviceId);
    const mode = row ? (row.mode as OAuthMode) : undefined;
    this.modes.set(serviceId, mode);
    return mode;
  }

  /** The upstream refused `rejected` with 401: refresh once (or take another replica's result), or throw. */
  async renew(serviceId: number, owner: number, rejected: string): Promise<string> {
    return this.secret(await this.renewed(serviceId, owner, rejected));
  }

  /** Refreshes the connections that end soon, outside the call path; one replica wins each. */
  async refreshExpiring(): Promise<void> {
    const now = Date.now();
    for (const row of await this.deps.repo.expiring(now + BACKGROUND_AHEAD_MS, now)) {
      await this.refresh(row).catch((err) =>
        this.deps.logger.warn({ err: text(err), serviceId: row.service_id }, 'background refresh of an upstream OAuth token failed'),
      );
    }
  }

  /** Tells the provider to end a connection that is being forgotten (RFC 7009); a failure is logged only. */
  async revoke(service: ServiceSpec, row: OAuthServiceRow, token: TokenRow): Promise<void> {
    const metadata = JSON.parse(row.metadata_json) as { revocation_endpoint?: string };
    const endpoint = metadata.revocation_endpoint;
    if (!endpoint) return;
    const secret = row.client_secret_enc ? this.deps.secrets.decrypt(row.client_secret_enc) : undefined;
    const revokeOne = async (value: string, hint: string) => {
      const body = new URLSearchParams({ token: value, token_type_hint: hint, client_id: row.client_id });
      if (secret) body.set('client_secret', secret);
      const response = await this.deps.fetch(endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: body.toString(),
        signal: AbortSignal.timeout(10_000),
      });
      await response.body?.cancel().catch(() => undefined);
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
    };
    try {
      // Revoking the refresh token ends the grant at most servers (RFC 7009 §2.1); the access token too, to be sure.
      if (token.refresh_token_enc) await revokeOne(this.deps.secrets.decrypt(token.refresh_token_enc), 'refresh_token');
      await revokeOne(this.deps.secrets.decrypt(token.access_token_enc), 'access_token');
    } catch (err) {
      // The connection is gone here either way; the provider keeps what it could not be told to end.
      this.deps.logger.warn({ err: text(err), service: service.name }, 'revoking an upstream OAuth token failed');
    }
  }

  /** Tokens as stored: the access token sealed, the old refresh token kept when the provider does not rotate it. */
  sealed(tokens: OAuthTokens, previousRefresh: string | null) {
    return {
      access_token_enc: this.deps.secrets.encrypt(tokens.access_token),
      refresh_token_enc: tokens.refresh_token ? this.deps.secrets.encrypt(tokens.refresh_token) : previousRefresh,
      expires_at: typeof tokens.expires_in === 'number' ? Date.now() + tokens.expires_in * 1000 : null,
    };
  }

  // ---- one connection's token ----

  /** What a link holds; renewing it is one visit here per event (its end is near, or a 401). */
  private granted(row: TokenRow): GrantedToken {
    const { service_id: serviceId, owner_id: owner } = row;
    return {
      value: this.secret(row),
      // Without a refresh token nothing can be done ahead: it is used until its end.
      freshUntil: row.expires_at === null ? null : row.expires_at - (row.refresh_token_enc ? REFRESH_AHEAD_MS : 0),
      renew: async (rejected) =>
        this.granted(rejected === undefined ? await this.current(serviceId, owner) : await this.renewed(serviceId, owner, rejected)),
    };
  }

  /** The row to send now: refreshed first when it ends soon; an ended one that cannot be refreshed is forgotten. */
  private async current(serviceId: number, owner: number): Promise<TokenRow> {
    const row = await this.deps.repo.token(serviceId, owner);
    if (!row) throw await missing(this.deps, serviceId, owner);
    if (!endingSoon(row.expires_at, REFRESH_AHEAD_MS)) return row;
    if (row.refresh_token_enc) return this.refresh(row);
    if (!endingSoon(row.expires_at, 0)) return row;
    await this.deps.repo.deleteToken(serviceId, owner, row.version);
    this.changed(serviceId);
    throw await missing(this.deps, serviceId, owner);
  }

  private async renewed(serviceId: number, owner: number, rejected: string): Promise<TokenRow> {
    const row = await this.deps.repo.token(serviceId, owner);
    if (!row) throw await missing(this.deps, serviceId, owner);
    // Another replica (or an earlier call here) has refreshed it meanwhile: that token is the answer.
    if (this.secret(row) !== rejected) return row;
    if (!row.refresh_token_enc) {
      // Refused and nothing to refresh it with: the connection must be made again.
      await this.deps.repo.deleteToken(serviceId, owner, row.version);
      this.changed(serviceId);
      throw await missing(this.deps, serviceId, owner);
    }
    return this.refresh(row);
  }

  /** One refresh per connection at a time here, and across replicas the one that claims the row. */
  private refresh(row: TokenRow): Promise<TokenRow> {
    const key = `${row.service_id}:${row.owner_id}`;
    const running = this.refreshing.get(key);
    if (running) return running;
    const work = this.refreshOnce(row).finally(() => this.refreshing.delete(key));
    this.refreshing.set(key, work);
    return work;
  }

  private async refreshOnce(row: TokenRow): Promise<TokenRow> {
    const { repo, secrets } = this.deps;
    const now = Date.now();
    if (!(await repo.claimRefresh(row.service_id, row.owner_id, row.version, now, now + CLAIM_MS))) return this.awaitOther(row);
    const service = await this.deps.catalog.byId(row.service_id);
    const settings = await repo.settings(row.service_id);
    if (!service || !settings || !row.refresh_token_enc) {
      await repo.releaseClaim(row.service_id, row.owner_id, row.version);
      throw await missing(this.deps, row.service_id, row.owner_id);
    }
    let tokens: OAuthTokens;
    try {
      const client = await this.provider.client(service, settings, settings.redirect_uri || `${baseOf(this.deps, '')}${CALLBACK_PATH}`);
      tokens = await refreshAuthorization(settings.issuer, {
        metadata: JSON.parse(settings.metadata_json) as AuthorizationServerMetadata,
        clientInformation: client,
        refreshToken: secrets.decrypt(row.refresh_token_enc),
        resource: new URL(settings.resource),
        fetchFn: this.deps.fetch,
      });
    } catch (err) {
      const code = oauthCode(err);
      if (code === 'invalid_grant' || code === 'invalid_client' || code === 'unauthorized_client') {
        // Revoked or expired upstream: only a new authorization helps; nothing else is touched.
        this.deps.logger.warn(
          { serviceId: row.service_id, owner: row.owner_id, code },
          'upstream OAuth refresh refused: needs authorization',
        );
        await repo.deleteToken(row.service_id, row.owner_id, row.version);
        this.changed(row.service_id);
        throw await missing(this.deps, row.service_id, row.owner_id);
      }
      await repo.releaseClaim(row.service_id, row.owner_id, row.version);
      throw new LocalisedError('upstream_oauth.provider_unreachable', { service: service.name, detail: code ?? text(err) });
    }
    // A provider that does not rotate refresh tokens keeps the old one valid (RFC 6749 §6).
    await repo.refreshed(row.service_id, row.owner_id, row.version, this.sealed(tokens, row.refresh_token_enc));
    const fresh = await repo.token(row.service_id, row.owner_id);
    if (!fresh) throw await missing(this.deps, row.service_id, row.owner_id);
    return fresh;
  }

  /** Another replica holds the refresh: its result is read once the row's version moves on. */
  private async awaitOther(row: TokenRow): Promise<TokenRow> {
    const until = Date.now() + WAIT_FOR_OTHER_MS;
    while (Date.now() < until) {
      await sleep(100);
      const now = await this.deps.repo.token(row.service_id, row.owner_id);
      if (!now) throw await missing(this.deps, row.service_id, row.owner_id);
      if (now.version !== row.version) return now;
      // The other replica gave up (or died holding the claim): try it here, within this same refresh.
      if (now.refreshing_until < Date.now()) return this.refreshOnce(now);
    }
    throw new LocalisedError('upstream_oauth.provider_unreachable', { service: String(row.service_id), detail: 'refresh did not finish' });
  }

  private secret(row: TokenRow): string {
    return this.deps.secrets.decrypt(row.access_token_enc);
  }
}
