import { exchangeAuthorization, startAuthorization } from '@modelcontextprotocol/sdk/client/auth.js';
import type { AuthorizationServerMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import {
  isAdminRole,
  type OAuthMode,
  type OAuthStatus,
  UPSTREAM_OAUTH_RESULT_PAGE,
  type UpdateUpstreamOAuthRequest,
  type UpstreamOAuthResult,
  type UpstreamOAuthState,
} from '@toolport/contract';
import type { ServiceSpec } from '../../gateway/catalog.js';
import type { HealthResult } from '../../gateway/link-api.js';
import { badRequest, forbidden, notFound } from '../../http/errors.js';
import type { Principal } from '../../http/principals.js';
import { randomToken, sha256 } from '../../infra/secrets.js';
import type { ServiceOAuthView } from '../services/index.js';
import { baseOf, CALLBACK_PATH, oauthCode, text, type UpstreamOAuthDeps } from './common.js';
import type { ProviderClient } from './provider-client.js';
import type { OAuthServiceRow, TokenRow } from './repo.js';
import type { TokenKeeper } from './token-keeper.js';

/** How long the provider's return waits for the health check of the new connection. */
const RECHECK_WAIT_MS = 15_000;

/** How long an authorization started from the console may take. */
const STATE_TTL_MS = 10 * 60_000;

/**
 * The console's connect flow (docs/decisions/0030-upstream-oauth.md): a connection's state and settings,
 * the authorization code flow with PKCE and a resource indicator (start, the provider's return with
 * its single-use state), and disconnect. Implements the services module's ServiceOAuthPort.
 */
export class ConnectFlow {
  constructor(
    private readonly deps: UpstreamOAuthDeps,
    private readonly provider: ProviderClient,
    private readonly keeper: TokenKeeper,
  ) {}

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
  async viewsFor(caller: Principal): Promise<Map<number, ServiceOAuthView>> {
    const [settings, tokens] = await Promise.all([this.deps.repo.allSettings(), this.deps.repo.tokensVisibleTo(caller.id)]);
    const have = new Map(tokens.map((t) => [`${t.service_id}:${t.owner_id}`, t]));
    const views = new Map<number, ServiceOAuthView>();
    for (const row of settings) {
      const owner = row.mode === 'per_user' ? caller.id : 0;
      const token = have.get(`${row.service_id}:${owner}`);
      const view: ServiceOAuthView = { mode: row.mode as OAuthMode, status: token ? 'connected' : 'needs_authorization' };
      // The caller's own connection, once checked: the list shows its health and tool count (issue 29).
      if (owner !== 0 && token?.check_status && token.checked_at !== null) {
        view.own = {
          status: token.check_status,
          details: token.check_details ?? '',
          toolCount: token.tool_count,
          checkedAt: token.checked_at,
        };
      }
      views.set(row.service_id, view);
    }
    return views;
  }

  /** The user's own connection, when the service is in per-user mode and they made one (their checks go through it). */
  async connectionOf(serviceId: number, userId: number): Promise<{ toolCount: number | null } | undefined> {
    const row = await this.deps.repo.settings(serviceId);
    if (row?.mode !== 'per_user') return undefined;
    const token = await this.deps.repo.token(serviceId, userId);
    return token ? { toolCount: token.tool_count } : undefined;
  }

  /** Keeps a check of the user's own connection with it (nothing when the connection went meanwhile). */
  async recordCheck(serviceId: number, userId: number, result: HealthResult): Promise<void> {
    await this.deps.repo.recordCheck(serviceId, userId, {
      status: result.status,
      details: result.details,
      checkedAt: result.checkedAt,
      ...(result.toolCount !== undefined ? { toolCount: result.toolCount } : {}),
    });
  }

  async setMode(serviceId: number, mode: OAuthMode): Promise<void> {
    const service = await this.mustGet(serviceId);
    if (service.type === 'stdio' || service.type === 'openapi') throw badRequest('upstream_oauth.not_remote');
    await this.deps.repo.saveSettings(service.id, { mode });
    this.keeper.changed(service.id);
  }

  async update(serviceId: number, req: UpdateUpstreamOAuthRequest, caller: Principal): Promise<UpstreamOAuthState> {
    const service = await this.mustGet(serviceId);
    if (service.type === 'stdio' || service.type === 'openapi') throw badRequest('upstream_oauth.not_remote');
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
    this.keeper.changed(service.id);
    return this.state(service.id, caller);
  }

  /**
   * Starts a connection: the shared one (admins) or, in per-user mode, the caller's own. Discovers and
   * registers when needed, and answers the provider's authorize URL.
   */
  async connect(serviceId: number, caller: Principal, origin: string): Promise<{ authorize_url: string }> {
    const service = await this.mustUse(serviceId, caller);
    if (service.type === 'stdio' || service.type === 'openapi') throw badRequest('upstream_oauth.not_remote');
    let row = await this.deps.repo.settings(service.id);
    // Shared until an admin says otherwise: only admins start the first connection of a service.
    const owner = row?.mode === 'per_user' ? caller.id : 0;
    if (owner === 0 && !isAdminRole(caller.role)) throw forbidden('upstream_oauth.shared_admin_only');
    if (!row?.issuer) row = await this.provider.discover(service, undefined);
    const redirectUri = `${baseOf(this.deps, origin)}${CALLBACK_PATH}`;
    const client = await this.provider.client(service, row, redirectUri);
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
      `${baseOf(this.deps, origin)}${UPSTREAM_OAUTH_RESULT_PAGE}?${new URLSearchParams({ result, ...extra }).toString()}`;
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
      const client = await this.provider.client(service, row, state.redirect_uri);
      const tokens = await exchangeAuthorization(row.issuer, {
        metadata: JSON.parse(row.metadata_json) as AuthorizationServerMetadata,
        clientInformation: client,
        authorizationCode: query.code,
        codeVerifier: this.deps.secrets.decrypt(state.code_verifier_enc),
        redirectUri: state.redirect_uri,
        resource: new URL(row.resource),
        fetchFn: this.deps.fetch,
      });
      await this.deps.repo.saveToken({
        service_id: service.id,
        owner_id: state.owner_id,
        ...this.keeper.sealed(tokens, null),
        subject: subjectOf(tokens),
        connected_by: state.user_id,
      });
      this.keeper.changed(service.id);
      await this.recheck(service.id, state.owner_id);
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
      this.keeper.changed(service.id);
      await this.keeper.revoke(service, row, token);
    }
    return this.state(service.id, caller);
  }

  /**
   * The new connection is checked before the browser returns to the console, so the card it shows has the new
   * health, reason and tool count without anyone pressing the health check: the shared one as the service's check,
   * a user's own (per-user mode) through that user's link, kept with their connection. A slow service does not hold the
   * browser longer than RECHECK_WAIT_MS (its check goes on and is stored when it ends); a failed check is logged.
   */
  private async recheck(serviceId: number, ownerId: number): Promise<void> {
    if (!this.deps.recheck) return;
    let timer: NodeJS.Timeout | undefined;
    const check = this.deps
      .recheck(serviceId, ownerId === 0 ? undefined : { id: ownerId })
      .catch((err) => this.deps.logger.warn({ err: text(err), serviceId }, 'health check after connecting failed'));
    await Promise.race([check, new Promise((done) => (timer = setTimeout(done, RECHECK_WAIT_MS)))]);
    clearTimeout(timer);
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
