import {
  discoverOAuthServerInfo,
  exchangeAuthorization,
  extractWWWAuthenticateParams,
  refreshAuthorization,
  registerClient,
  startAuthorization,
} from '@modelcontextprotocol/sdk/client/auth.js';
import type { AuthorizationServerMetadata, OAuthClientInformationMixed, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { resourceUrlFromServerUrl } from '@modelcontextprotocol/sdk/shared/auth-utils.js';
import {
  isAdminRole,
  type OAuthMode,
  type OAuthStatus,
  UPSTREAM_OAUTH_RESULT_PAGE,
  type UpdateUpstreamOAuthRequest,
  type UpstreamOAuthResult,
  type UpstreamOAuthState,
} from '@toolport/contract';
import type { Logger } from 'pino';
import type { ServiceCatalog, ServiceSpec } from '../../gateway/catalog.js';
import { type UpstreamAuthorization, UpstreamConnectionMissing } from '../../gateway/upstream-auth.js';
import { badRequest, forbidden, notFound } from '../../http/errors.js';
import type { Principal } from '../../http/principals.js';
import type { MessageKey } from '../../i18n/en.js';
import { LocalisedError } from '../../i18n/localised-error.js';
import type { ConfigEvents } from '../../infra/events.js';
import { type FetchLike, remoteFetch } from '../../infra/outbound.js';
import { randomToken, type Secrets, sha256 } from '../../infra/secrets.js';
import type { OAuthServiceRow, TokenRow, UpstreamOAuthRepo } from './repo.js';

/** How long an authorization started from the console may take. */
const STATE_TTL_MS = 10 * 60_000;
/** A token this close to its end is refreshed before it is sent. */
const REFRESH_AHEAD_MS = 60_000;
/** The background refresher renews tokens this close to their end, so calls rarely wait for a refresh. */
const BACKGROUND_AHEAD_MS = 5 * 60_000;
/** How long one replica holds a refresh before another may try. */
const CLAIM_MS = 30_000;
/** How long a replica waits for another's refresh to land. */
const WAIT_FOR_OTHER_MS = 15_000;
const CALLBACK_PATH = '/api/upstream_oauth/callback';
const CLIENT_METADATA_PATH = '/api/upstream_oauth/client_metadata.json';
/** The console page where services are connected, named in errors MCP clients see. */
const SERVICES_PAGE = '/services';

export interface UpstreamOAuthDeps {
  repo: UpstreamOAuthRepo;
  secrets: Secrets;
  events: ConfigEvents;
  options: { get(key: 'ServerAddress'): string };
  catalog: Pick<ServiceCatalog, 'byId'>;
  /** Who may use a service (the groups module's access lists): without it every service is open. */
  access?: { mayUse(user: { id: number; role: number }, subject: 'service', id: number): Promise<boolean> };
  logger: Logger;
  /** Every call to a provider goes through the outbound rules (infra/outbound.ts); tests may wrap it. */
  fetch?: FetchLike;
}

interface CachedToken {
  token: string;
  expiresAt: number | null;
  version: number;
}

/** A provider's OAuth error (RFC 6749 §5.2) as the SDK throws it. */
const oauthCode = (err: unknown): string | undefined =>
  err && typeof err === 'object' && 'errorCode' in err && typeof err.errorCode === 'string' ? err.errorCode : undefined;
const text = (err: unknown): string => (err instanceof Error ? err.message : String(err)).slice(0, 300);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Toolport as the OAuth client of remote MCP services (issue 19, docs/decisions/0030-upstream-oauth.md):
 * discovery, registration, the authorization code flow with PKCE and a resource indicator, tokens
 * encrypted at rest, refresh ahead of expiry and once on a 401 (one replica wins), revocation on
 * disconnect. Implements the gateway's UpstreamAuthorization port.
 */
export class UpstreamOAuth implements UpstreamAuthorization {
  private readonly modes = new Map<number, OAuthMode | undefined>();
  private readonly tokens = new Map<string, CachedToken>();
  private readonly refreshing = new Map<string, Promise<string>>();
  private readonly discovering = new Map<number, Promise<unknown>>();
  private readonly fetch: FetchLike;

  constructor(private readonly deps: UpstreamOAuthDeps) {
    this.fetch = deps.fetch ?? remoteFetch;
  }

  /** Cached reads are dropped when a service changes (on any replica: events are relayed). */
  forget(serviceId: number): void {
    this.modes.delete(serviceId);
    for (const key of this.tokens.keys()) if (key.startsWith(`${serviceId}:`)) this.tokens.delete(key);
  }

  // ---- the gateway's port ----

  async modeOf(serviceId: number): Promise<OAuthMode | undefined> {
    if (this.modes.has(serviceId)) return this.modes.get(serviceId);
    const row = await this.deps.repo.settings(serviceId);
    const mode = row ? (row.mode as OAuthMode) : undefined;
    this.modes.set(serviceId, mode);
    return mode;
  }

  async token(serviceId: number, owner: number): Promise<string> {
    const key = `${serviceId}:${owner}`;
    const cached = this.tokens.get(key);
    if (cached && !this.endingSoon(cached.expiresAt, REFRESH_AHEAD_MS)) return cached.token;
    const row = await this.deps.repo.token(serviceId, owner);
    if (!row) {
      this.tokens.delete(key);
      throw await this.missing(serviceId, owner);
    }
    if (this.endingSoon(row.expires_at, REFRESH_AHEAD_MS) && row.refresh_token_enc) return this.refresh(row);
    return this.remember(row);
  }

  async renew(serviceId: number, owner: number, rejected: string): Promise<string> {
    this.tokens.delete(`${serviceId}:${owner}`);
    const row = await this.deps.repo.token(serviceId, owner);
    if (!row) throw await this.missing(serviceId, owner);
    const current = this.deps.secrets.decrypt(row.access_token_enc);
    // Another replica (or an earlier call here) has refreshed it meanwhile: that token is the answer.
    if (current !== rejected) return this.remember(row);
    if (!row.refresh_token_enc) {
      // Refused and nothing to refresh it with: the connection must be made again.
      await this.deps.repo.deleteToken(serviceId, owner, row.version);
      this.changed(serviceId);
      throw await this.missing(serviceId, owner);
    }
    return this.refresh(row);
  }

  unauthorized(serviceId: number, wwwAuthenticate: string): void {
    if (this.discovering.has(serviceId)) return;
    const work = this.discoverAfter401(serviceId, wwwAuthenticate)
      .catch((err) => this.deps.logger.warn({ err, serviceId }, 'upstream OAuth discovery failed'))
      .finally(() => this.discovering.delete(serviceId));
    this.discovering.set(serviceId, work);
  }

  /** Settles once the discoveries started by 401 answers have finished (tests, shutdown). */
  async idle(): Promise<void> {
    await Promise.all([...this.discovering.values()]);
  }

  // ---- the API ----

  async state(serviceId: number, caller: Principal): Promise<UpstreamOAuthState> {
    const service = await this.mustUse(serviceId, caller);
    const row = await this.deps.repo.settings(service.id);
    const mode = row ? (row.mode as OAuthMode) : null;
    const owner = mode === 'per_user' ? caller.id : 0;
    const token = row ? await this.deps.repo.token(service.id, owner) : undefined;
    const admin = isAdminRole(caller.role);
    return {
      service_id: service.id,
      oauth_mode: mode,
      oauth_status: statusOf(row, token),
      issuer: row?.issuer ?? '',
      registration: (row?.registration ?? '') as UpstreamOAuthState['registration'],
      client_id: admin ? (row?.client_id ?? '') : '',
      has_client_secret: Boolean(row?.client_secret_enc),
      connected_as: token?.subject ?? '',
      expires_at: token?.expires_at ?? null,
      connected_at: token ? token.updated_at : null,
    };
  }

  /** `oauth_status` and `oauth_mode` of every service, for the list as this caller sees it. */
  async viewsFor(caller: Principal): Promise<Map<number, { mode: OAuthMode; status: OAuthStatus }>> {
    const [settings, tokens] = await Promise.all([this.deps.repo.allSettings(), this.deps.repo.tokensVisibleTo(caller.id)]);
    const have = new Set(tokens.map((t) => `${t.service_id}:${t.owner_id}`));
    const views = new Map<number, { mode: OAuthMode; status: OAuthStatus }>();
    for (const row of settings) {
      const owner = row.mode === 'per_user' ? caller.id : 0;
      views.set(row.service_id, {
        mode: row.mode as OAuthMode,
        status: have.has(`${row.service_id}:${owner}`) ? 'connected' : 'needs_authorization',
      });
    }
    return views;
  }

  async setMode(serviceId: number, mode: OAuthMode): Promise<void> {
    const service = await this.mustGet(serviceId);
    if (service.type === 'stdio') throw badRequest('upstream_oauth.not_remote');
    await this.deps.repo.saveSettings(service.id, { mode });
    this.changed(service.id);
  }

  async update(serviceId: number, req: UpdateUpstreamOAuthRequest, caller: Principal): Promise<UpstreamOAuthState> {
    const service = await this.mustGet(serviceId);
    if (service.type === 'stdio') throw badRequest('upstream_oauth.not_remote');
    const patch: Partial<OAuthServiceRow> = {};
    if (req.oauth_mode) patch.mode = req.oauth_mode;
    if (req.client_id !== undefined) {
      const clientId = req.client_id.trim();
      // A hand-entered client replaces whatever was registered; an empty one lets registration run again.
      Object.assign(patch, {
        client_id: clientId,
        registration: clientId ? 'manual' : '',
        client_secret_enc: clientId && req.client_secret ? this.deps.secrets.encrypt(req.client_secret) : null,
        redirect_uri: '',
      });
    }
    await this.deps.repo.saveSettings(service.id, patch);
    this.changed(service.id);
    return this.state(service.id, caller);
  }

  /**
   * Starts a connection: the shared one (admins) or, in per-user mode, the caller's own. Discovers and
   * registers when needed, and answers the provider's authorize URL.
   */
  async connect(serviceId: number, caller: Principal, origin: string): Promise<{ authorize_url: string }> {
    const service = await this.mustUse(serviceId, caller);
    if (service.type === 'stdio') throw badRequest('upstream_oauth.not_remote');
    let row = await this.deps.repo.settings(service.id);
    // Shared until an admin says otherwise: only admins start the first connection of a service.
    const owner = row?.mode === 'per_user' ? caller.id : 0;
    if (owner === 0 && !isAdminRole(caller.role)) throw forbidden('upstream_oauth.shared_admin_only');
    if (!row?.issuer) row = await this.discover(service, undefined);
    const redirectUri = `${this.base(origin)}${CALLBACK_PATH}`;
    const client = await this.client(service, row, redirectUri);
    const state = randomToken();
    const metadata = JSON.parse(row.metadata_json) as AuthorizationServerMetadata;
    const { authorizationUrl, codeVerifier } = await startAuthorization(row.issuer, {
      metadata,
      clientInformation: client,
      redirectUrl: redirectUri,
      state,
      resource: new URL(row.resource),
      ...(row.scope ? { scope: row.scope } : {}),
    });
    const now = Date.now();
    await this.deps.repo.purgeStates(now);
    await this.deps.repo.addState({
      state_hash: sha256(state),
      service_id: service.id,
      user_id: caller.id,
      owner_id: owner,
      code_verifier_enc: this.deps.secrets.encrypt(codeVerifier),
      redirect_uri: redirectUri,
      created_at: now,
      expires_at: now + STATE_TTL_MS,
    });
    return { authorize_url: authorizationUrl.toString() };
  }

  /**
   * The provider's return: the state is taken (single use) before anything else, so a replayed or
   * forged return changes nothing. Answers where the browser goes next: the console's result page.
   */
  async callback(query: { state?: string; code?: string; error?: string; error_description?: string }, origin: string): Promise<string> {
    const page = (result: UpstreamOAuthResult, extra: Record<string, string> = {}) =>
      `${this.base(origin)}${UPSTREAM_OAUTH_RESULT_PAGE}?${new URLSearchParams({ result, ...extra }).toString()}`;
    const state = query.state ? await this.deps.repo.takeState(sha256(query.state)) : undefined;
    if (!state || state.expires_at < Date.now()) return page('invalid_state');
    const service = await this.deps.catalog.byId(state.service_id);
    const row = await this.deps.repo.settings(state.service_id);
    if (!service || !row) return page('invalid_state');
    const named = { service: service.displayName || service.name, service_id: String(service.id) };
    if (query.error || !query.code) {
      return page('denied', { ...named, reason: (query.error_description || query.error || 'no code').slice(0, 200) });
    }
    try {
      const client = await this.client(service, row, state.redirect_uri);
      const tokens = await exchangeAuthorization(row.issuer, {
        metadata: JSON.parse(row.metadata_json) as AuthorizationServerMetadata,
        clientInformation: client,
        authorizationCode: query.code,
        codeVerifier: this.deps.secrets.decrypt(state.code_verifier_enc),
        redirectUri: state.redirect_uri,
        resource: new URL(row.resource),
        fetchFn: this.fetch,
      });
      await this.deps.repo.saveToken({
        service_id: service.id,
        owner_id: state.owner_id,
        ...this.sealed(tokens, null),
        subject: subjectOf(tokens),
        connected_by: state.user_id,
      });
      this.changed(service.id);
      return page('connected', named);
    } catch (err) {
      this.deps.logger.warn({ err: text(err), serviceId: service.id }, 'upstream OAuth code exchange failed');
      return page('failed', { ...named, reason: oauthCode(err) ?? text(err) });
    }
  }

  async disconnect(serviceId: number, caller: Principal): Promise<UpstreamOAuthState> {
    const service = await this.mustUse(serviceId, caller);
    const row = await this.deps.repo.settings(service.id);
    if (!row) throw badRequest('upstream_oauth.not_configured');
    const owner = row.mode === 'per_user' ? caller.id : 0;
    if (owner === 0 && !isAdminRole(caller.role)) throw forbidden('upstream_oauth.shared_admin_only');
    const token = await this.deps.repo.token(service.id, owner);
    if (token) {
      await this.deps.repo.deleteToken(service.id, owner);
      this.changed(service.id);
      await this.revoke(service, row, token);
    }
    return this.state(service.id, caller);
  }

  /** Toolport's Client ID Metadata Document, served at the URL that is its client id. */
  clientMetadata(origin: string) {
    const base = this.base(origin);
    return {
      client_id: `${base}${CLIENT_METADATA_PATH}`,
      client_name: 'Toolport',
      redirect_uris: [`${base}${CALLBACK_PATH}`],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
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

  // ---- discovery, registration, refresh, revocation ----

  private async discoverAfter401(serviceId: number, wwwAuthenticate: string): Promise<void> {
    const existing = await this.deps.repo.settings(serviceId);
    if (existing?.issuer) return;
    const service = await this.deps.catalog.byId(serviceId);
    if (!service || service.type === 'stdio') return;
    await this.discover(service, wwwAuthenticate);
  }

  /**
   * RFC 9728 protected resource metadata (from the 401's `resource_metadata`, else the well-known
   * paths), then the authorization server's RFC 8414 metadata, else its OpenID configuration.
   */
  private async discover(service: ServiceSpec, wwwAuthenticate: string | undefined): Promise<OAuthServiceRow> {
    let www = wwwAuthenticate;
    if (www === undefined) www = await this.challenge(service);
    const hints = www ? extractWWWAuthenticateParams(new Response(null, { status: 401, headers: { 'www-authenticate': www } })) : {};
    let info: Awaited<ReturnType<typeof discoverOAuthServerInfo>>;
    try {
      info = await discoverOAuthServerInfo(service.command, {
        ...(hints.resourceMetadataUrl ? { resourceMetadataUrl: hints.resourceMetadataUrl } : {}),
        fetchFn: this.fetch,
      });
    } catch (err) {
      throw new LocalisedError('upstream_oauth.discovery_failed', { service: service.name, detail: text(err) });
    }
    if (!info.authorizationServerMetadata) {
      throw new LocalisedError('upstream_oauth.discovery_failed', { service: service.name, detail: 'no authorization server metadata' });
    }
    const resource = info.resourceMetadata?.resource ?? resourceUrlFromServerUrl(service.command).href;
    const scope = hints.scope ?? info.resourceMetadata?.scopes_supported?.join(' ') ?? '';
    const patch = {
      issuer: info.authorizationServerMetadata.issuer || info.authorizationServerUrl,
      metadata_json: JSON.stringify(info.authorizationServerMetadata),
      resource,
      scope,
    };
    const before = await this.deps.repo.settings(service.id);
    // Another authorization server: whatever was registered with the old one is of no use.
    const reset = before?.issuer && before.issuer !== patch.issuer && before.registration !== 'manual';
    await this.deps.repo.saveSettings(
      service.id,
      reset ? { ...patch, registration: '', client_id: '', client_secret_enc: null, redirect_uri: '' } : patch,
    );
    this.changed(service.id);
    const row = await this.deps.repo.settings(service.id);
    if (!row) throw notFound();
    return row;
  }

  /** An unauthenticated initialize, to read the service's WWW-Authenticate challenge. */
  private async challenge(service: ServiceSpec): Promise<string> {
    try {
      const response = await this.fetch(service.command, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...service.headers },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 0,
          method: 'initialize',
          params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'toolport', version: '0' } },
        }),
        signal: AbortSignal.timeout(10_000),
      });
      await response.body?.cancel().catch(() => undefined);
      return response.status === 401 ? (response.headers.get('www-authenticate') ?? '') : '';
    } catch {
      return '';
    }
  }

  /**
   * Toolport's client at this authorization server: the admin's hand-entered client when there is one,
   * else a Client ID Metadata Document (ServerAddress https and the server supports it), else dynamic
   * registration (RFC 7591), registered again when the redirect URI changed.
   */
  private async client(service: ServiceSpec, row: OAuthServiceRow, redirectUri: string): Promise<OAuthClientInformationMixed> {
    const secret = row.client_secret_enc ? this.deps.secrets.decrypt(row.client_secret_enc) : undefined;
    if (row.registration === 'manual' && row.client_id) return { client_id: row.client_id, ...(secret ? { client_secret: secret } : {}) };
    if (row.client_id && row.redirect_uri === redirectUri)
      return { client_id: row.client_id, ...(secret ? { client_secret: secret } : {}) };
    const metadata = JSON.parse(row.metadata_json) as AuthorizationServerMetadata & { client_id_metadata_document_supported?: boolean };
    const base = redirectUri.slice(0, -CALLBACK_PATH.length);
    if (base.startsWith('https://') && metadata.client_id_metadata_document_supported) {
      const clientId = `${base}${CLIENT_METADATA_PATH}`;
      await this.deps.repo.saveSettings(service.id, {
        registration: 'cimd',
        client_id: clientId,
        client_secret_enc: null,
        redirect_uri: redirectUri,
      });
      return { client_id: clientId };
    }
    if (!metadata.registration_endpoint) throw new LocalisedError('upstream_oauth.no_registration', { service: service.name });
    let registered: Awaited<ReturnType<typeof registerClient>>;
    try {
      registered = await registerClient(row.issuer, {
        metadata,
        clientMetadata: {
          client_name: 'Toolport',
          redirect_uris: [redirectUri],
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          ...(row.scope ? { scope: row.scope } : {}),
        },
        fetchFn: this.fetch,
      });
    } catch (err) {
      throw new LocalisedError('upstream_oauth.registration_failed', { service: service.name, detail: text(err) });
    }
    await this.deps.repo.saveSettings(service.id, {
      registration: 'dynamic',
      client_id: registered.client_id,
      client_secret_enc: registered.client_secret ? this.deps.secrets.encrypt(registered.client_secret) : null,
      redirect_uri: redirectUri,
    });
    return { client_id: registered.client_id, ...(registered.client_secret ? { client_secret: registered.client_secret } : {}) };
  }

  /** One refresh per connection at a time here, and across replicas the one that claims the row. */
  private refresh(row: TokenRow): Promise<string> {
    const key = `${row.service_id}:${row.owner_id}`;
    const running = this.refreshing.get(key);
    if (running) return running;
    const work = this.refreshOnce(row).finally(() => this.refreshing.delete(key));
    this.refreshing.set(key, work);
    return work;
  }

  private async refreshOnce(row: TokenRow): Promise<string> {
    const { repo, secrets } = this.deps;
    const now = Date.now();
    if (!(await repo.claimRefresh(row.service_id, row.owner_id, row.version, now, now + CLAIM_MS))) return this.awaitOther(row);
    const service = await this.deps.catalog.byId(row.service_id);
    const settings = await repo.settings(row.service_id);
    if (!service || !settings || !row.refresh_token_enc) {
      await repo.releaseClaim(row.service_id, row.owner_id, row.version);
      throw await this.missing(row.service_id, row.owner_id);
    }
    let tokens: OAuthTokens;
    try {
      const client = await this.client(service, settings, settings.redirect_uri || `${this.base('')}${CALLBACK_PATH}`);
      tokens = await refreshAuthorization(settings.issuer, {
        metadata: JSON.parse(settings.metadata_json) as AuthorizationServerMetadata,
        clientInformation: client,
        refreshToken: secrets.decrypt(row.refresh_token_enc),
        resource: new URL(settings.resource),
        fetchFn: this.fetch,
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
        throw await this.missing(row.service_id, row.owner_id);
      }
      await repo.releaseClaim(row.service_id, row.owner_id, row.version);
      throw new LocalisedError('upstream_oauth.provider_unreachable', { service: service.name, detail: code ?? text(err) });
    }
    // A provider that does not rotate refresh tokens keeps the old one valid (RFC 6749 §6).
    await repo.refreshed(row.service_id, row.owner_id, row.version, this.sealed(tokens, row.refresh_token_enc));
    const fresh = await repo.token(row.service_id, row.owner_id);
    if (!fresh) throw await this.missing(row.service_id, row.owner_id);
    return this.remember(fresh);
  }

  /** Another replica holds the refresh: its result is read once the row's version moves on. */
  private async awaitOther(row: TokenRow): Promise<string> {
    const until = Date.now() + WAIT_FOR_OTHER_MS;
    while (Date.now() < until) {
      await sleep(100);
      const now = await this.deps.repo.token(row.service_id, row.owner_id);
      if (!now) throw await this.missing(row.service_id, row.owner_id);
      if (now.version !== row.version) return this.remember(now);
      // The other replica gave up (or died holding the claim): try it here, within this same refresh.
      if (now.refreshing_until < Date.now()) return this.refreshOnce(now);
    }
    throw new LocalisedError('upstream_oauth.provider_unreachable', { service: String(row.service_id), detail: 'refresh did not finish' });
  }

  private async revoke(service: ServiceSpec, row: OAuthServiceRow, token: TokenRow): Promise<void> {
    const metadata = JSON.parse(row.metadata_json) as { revocation_endpoint?: string };
    const endpoint = metadata.revocation_endpoint;
    if (!endpoint) return;
    const secret = row.client_secret_enc ? this.deps.secrets.decrypt(row.client_secret_enc) : undefined;
    const revokeOne = async (value: string, hint: string) => {
      const body = new URLSearchParams({ token: value, token_type_hint: hint, client_id: row.client_id });
      if (secret) body.set('client_secret', secret);
      const response = await this.fetch(endpoint, {
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

  // ---- helpers ----

  private sealed(tokens: OAuthTokens, previousRefresh: string | null) {
    return {
      access_token_enc: this.deps.secrets.encrypt(tokens.access_token),
      refresh_token_enc: tokens.refresh_token ? this.deps.secrets.encrypt(tokens.refresh_token) : previousRefresh,
      expires_at: typeof tokens.expires_in === 'number' ? Date.now() + tokens.expires_in * 1000 : null,
    };
  }

  private remember(row: TokenRow): string {
    const token = this.deps.secrets.decrypt(row.access_token_enc);
    this.tokens.set(`${row.service_id}:${row.owner_id}`, { token, expiresAt: row.expires_at, version: row.version });
    return token;
  }

  private endingSoon(expiresAt: number | null, within: number): boolean {
    return expiresAt !== null && expiresAt - within < Date.now();
  }

  /** The error a call without a usable connection gets: who must connect, and where. */
  private async missing(serviceId: number, owner: number): Promise<LocalisedError> {
    const service = await this.deps.catalog.byId(serviceId);
    const key: MessageKey = owner === 0 ? 'upstream_oauth.needs_authorization' : 'upstream_oauth.not_connected';
    return new NeedsAuthorizationError(key, {
      service: service?.displayName || service?.name || String(serviceId),
      page: `${this.base('')}${SERVICES_PAGE}`,
    });
  }

  private base(origin: string): string {
    return (this.deps.options.get('ServerAddress') || origin).replace(/\/+$/, '');
  }

  private changed(serviceId: number): void {
    this.forget(serviceId);
    this.deps.events.emit({ type: 'service.changed', serviceId });
  }

  private async mustGet(serviceId: number): Promise<ServiceSpec> {
    const service = await this.deps.catalog.byId(serviceId);
    if (!service) throw notFound('service.not_found');
    return service;
  }

  /** The service, when the caller may use it (decision 0040): a connection's state tells its provider, by id only. */
  private async mustUse(serviceId: number, caller: Principal): Promise<ServiceSpec> {
    const service = await this.mustGet(serviceId);
    if (this.deps.access && !(await this.deps.access.mayUse(caller, 'service', serviceId)))
      throw forbidden('access.no_access_service_id', { id: serviceId });
    return service;
  }
}

/** A call that needs a connection nobody has made: the JSON-RPC error names the console page. */
export class NeedsAuthorizationError extends UpstreamConnectionMissing {}

function statusOf(row: OAuthServiceRow | undefined, token: TokenRow | undefined): OAuthStatus {
  if (!row) return 'none';
  return token ? 'connected' : 'needs_authorization';
}

/** Who the connection acts as, from an id token's claims (shown only, never trusted for access). */
function subjectOf(tokens: OAuthTokens): string {
  const idToken = (tokens as { id_token?: unknown }).id_token;
  if (typeof idToken !== 'string') return '';
  try {
    const payload = JSON.parse(Buffer.from(idToken.split('.')[1] ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;
    for (const claim of ['email', 'preferred_username', 'name', 'sub']) {
      const value = payload[claim];
      if (typeof value === 'string' && value) return value.slice(0, 200);
    }
  } catch {
    // Not a JWT: nothing to show.
  }
  return '';
}
