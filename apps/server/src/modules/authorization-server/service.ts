import { createHash } from 'node:crypto';
import { UserStatus } from '@toolport/contract';
import { jwtVerify, SignJWT } from 'jose';
import type { AccessTokenPort, ProxyEndpoint, VerifiedToken } from '../../gateway/index.js';
import type { Principal } from '../../http/principals.js';
import { type MessageKey, translate } from '../../i18n/index.js';
import type { ConfigEvents } from '../../infra/events.js';
import { randomToken, sha256 } from '../../infra/secrets.js';
import { ApprovalsCookie } from './approvals.js';
import type { OAuthClient, OAuthClients } from './clients.js';
import { OAuthError, type OAuthErrorCode } from './errors.js';
import type { GrantRow, OAuthServerRepo } from './repo.js';

/** Lifetimes (docs/decisions/0028-oauth-authorization-server.md). */
export const ACCESS_TOKEN_SECONDS = 15 * 60;
export const REFRESH_TOKEN_MS = 30 * 24 * 60 * 60_000;
export const CODE_MS = 60_000;
export const REQUEST_MS = 10 * 60_000;
/** Grant state and users are re-read at most this late (docs/architecture.md §8: a few seconds at most). */
const CACHE_MS = 3000;
/** `last_used_at` is written at most once a minute per grant. */
const TOUCH_MS = 60_000;
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;
const CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

export interface OAuthServerDeps {
  repo: OAuthServerRepo;
  clients: OAuthClients;
  tokenKey: Uint8Array;
  principals: { byId(id: number): Promise<Principal | null> };
  /** The services a user switched off for themselves (issue 14): a token's user carries them like a key's. */
  switchedOffBy(userId: number): Promise<ReadonlySet<number>>;
  /**
   * Whether a user may use an endpoint: the service (or group) exists and is enabled, and its access list lets
   * the user in (the gateway's own rule, decision 0040). A token is never issued for an endpoint that is not.
   */
  endpoints: { access(user: Principal, kind: 'proxy' | 'group', name: string): Promise<EndpointAccess> };
  /** A revoked grant is announced as a change of its user: the proxy's cached token answers drop at once, on every replica. */
  events?: Pick<ConfigEvents, 'emit'>;
  now?: () => number;
}

/** Whether a user may use an endpoint, and if not, why: it does not exist (or is disabled), or it is not theirs to use. */
export type EndpointAccess = 'allowed' | 'unknown_endpoint' | 'no_access';

/** A resource indicator (RFC 8707) reduced to what it names: one endpoint, or every endpoint (`*`). */
export type Audience = '*' | `proxy:${string}` | `group:${string}`;

/** The endpoint a resource URL names under `base`, or undefined (invalid_target). */
export function audienceOf(resource: string, base: string): Audience | undefined {
  let url: URL;
  let root: URL;
  try {
    url = new URL(resource);
    root = new URL(`${base}/`);
  } catch {
    return undefined;
  }
  if (url.origin !== root.origin || url.search || url.hash) return undefined;
  const prefix = root.pathname.replace(/\/$/, '');
  if (!url.pathname.startsWith(prefix)) return undefined;
  const rest = url.pathname.slice(prefix.length).replace(/\/+$/, '');
  if (rest === '') return '*';
  const m = /^\/(proxy|group)\/([^/]+)(?:\/(mcp|sse))?$/.exec(rest);
  if (!m?.[1] || !m[2]) return undefined;
  if (m[1] === 'group' && m[3] === 'sse') return undefined;
  let name: string;
  try {
    name = decodeURIComponent(m[2]);
  } catch {
    return undefined;
  }
  return `${m[1] as 'proxy' | 'group'}:${name}`;
}

/** Who asks at the authorization endpoint: the address fetches count against, and the Cookie header. */
export interface AuthorizeContext {
  requester?: string;
  cookie?: string;
}

/** What the consent page shows about a pending request. */
export interface ConsentView {
  clientId: string;
  clientName: string;
  redirectHost: string;
  logoUri: string;
  resource: string;
  /** Every endpoint of the user, or the one named. */
  endpoint: { kind: 'all' } | { kind: 'proxy' | 'group'; name: string };
  /** False when the user may not use the endpoint: the page then offers Deny only, and `refusal` says why. */
  allowed: boolean;
  refusal?: Exclude<EndpointAccess, 'allowed'>;
  scope: string;
}

interface TokenAnswer {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope?: string;
}

const matchesRedirect = (registered: string, given: string): boolean => {
  if (registered === given) return true;
  // RFC 8252 §7.3: a loopback redirect may use any port.
  try {
    const a = new URL(registered);
    const b = new URL(given);
    const loopback = a.protocol === 'http:' && (a.hostname === '127.0.0.1' || a.hostname === '[::1]' || a.hostname === 'localhost');
    const plain = b.hash === '' && b.username === '' && b.password === '';
    return loopback && plain && b.protocol === 'http:' && a.hostname === b.hostname && a.pathname === b.pathname && a.search === b.search;
  } catch {
    return false;
  }
};

const one = (v: unknown): string | undefined => {
  if (Array.isArray(v)) return v.length === 1 && typeof v[0] === 'string' ? v[0] : undefined;
  return typeof v === 'string' ? v : undefined;
};

const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

/**
 * The authorization server's rules: authorize requests, consent, codes, tokens, refresh rotation
 * with reuse detection, revocation, and the verification of access tokens for the proxy.
 */
export class AuthorizationServerService implements AccessTokenPort {
  private readonly grantCache = new Map<number, { at: number; active: boolean }>();
  private readonly touched = new Map<number, number>();
  private readonly now: () => number;
  private readonly approvals: ApprovalsCookie;

  constructor(private readonly deps: OAuthServerDeps) {
    this.now = deps.now ?? Date.now;
    this.approvals = new ApprovalsCookie(deps.tokenKey);
  }

  // --- authorization endpoint ------------------------------------------------------------------

  /**
   * Checks an authorization request (RFC 6749 §4.1.1 with PKCE and RFC 8707) and stores it for the
   * consent page. An unknown client or an unregistered redirect URI is never sent back to the client
   * (RFC 6749 §4.1.2.1): it is thrown, for the browser. A later error goes back to the redirect URI only
   * when that URI is trusted (`trusted`); otherwise it is thrown too (RFC 9700 §4.11.2: no open redirector).
   */
  async authorize(
    query: Record<string, unknown>,
    base: string,
    ctx: AuthorizeContext = {},
  ): Promise<{ consentUrl: string } | { errorRedirect: string }> {
    const clientId = one(query.client_id);
    if (!clientId) throw new OAuthError('invalid_request', 'oauth_server.missing_param', { param: 'client_id' });
    const client = await this.deps.clients.resolve(clientId, this.now(), ctx.requester);
    const given = one(query.redirect_uri);
    let redirectUri: string | undefined;
    if (given === undefined) redirectUri = client.redirectUris.length === 1 ? client.redirectUris[0] : undefined;
    else redirectUri = client.redirectUris.some((r) => matchesRedirect(r, given)) ? given : undefined;
    if (!redirectUri) throw new OAuthError('invalid_request', 'oauth_server.redirect_mismatch');
    const target = redirectUri;

    const state = one(query.state) ?? '';
    const refuse = async (code: OAuthErrorCode, key: MessageKey) => {
      if (!(await this.trusted(client, target, ctx.cookie))) throw new OAuthError(code, key);
      return { errorRedirect: errorRedirect(target, base, state.slice(0, 2000), code, translate('en', key)) };
    };
    if (state.length > 2000) return refuse('invalid_request', 'oauth_server.state_too_long');
    if (one(query.response_type) !== 'code') return refuse('unsupported_response_type', 'oauth_server.response_type_code');
    const challenge = one(query.code_challenge);
    if (!challenge) return refuse('invalid_request', 'oauth_server.pkce_required');
    if (one(query.code_challenge_method) !== 'S256') return refuse('invalid_request', 'oauth_server.pkce_s256');
    if (!CHALLENGE.test(challenge)) return refuse('invalid_request', 'oauth_server.bad_challenge');
    const resources = query.resource === undefined ? [] : Array.isArray(query.resource) ? query.resource : [query.resource];
    if (resources.length > 1) return refuse('invalid_target', 'oauth_server.one_resource');
    const resource = resources.length === 1 ? String(resources[0]) : `${base}/`;
    if (!audienceOf(resource, base)) return refuse('invalid_target', 'oauth_server.bad_resource');
    const scope = (one(query.scope) ?? '').slice(0, 500);

    const id = randomToken(24);
    await this.deps.repo.addRequest({
      id_hash: sha256(id),
      client_id: client.clientId,
      redirect_uri: target,
      state,
      code_challenge: challenge,
      resource,
      scope,
      expires_at: this.now() + REQUEST_MS,
    });
    return { consentUrl: `${base}/oauth/consent?request=${encodeURIComponent(id)}` };
  }

  /**
   * Whether an error may be sent to `redirectUri` without asking anyone (decision 0041): the client was
   * registered by an admin, or this browser's user approved this client with this redirect URI and that
   * approval is still in force (the cookie `rememberApproval` set, checked against its grant).
   */
  private async trusted(client: OAuthClient, redirectUri: string, cookie: string | undefined): Promise<boolean> {
    if (client.admin) return true;
    const grantId = this.approvals.grantFor(cookie, client.clientId, redirectUri);
    const grant = grantId === undefined ? undefined : await this.deps.repo.grant(grantId);
    return grant !== undefined && grant.revoked_at === null && grant.client_id === client.clientId;
  }

  /**
   * The Set-Cookie that remembers, in this browser, the approval an Allow answered with `redirectTo`
   * (which carries the new code); undefined for a Deny or anything else. `secure` when Toolport is on https.
   */
  async rememberApproval(redirectTo: string, secure: boolean): Promise<string | undefined> {
    let code: string | null;
    try {
      code = new URL(redirectTo).searchParams.get('code');
    } catch {
      return undefined;
    }
    const row = code ? await this.deps.repo.code(sha256(code)) : undefined;
    const grant = row ? await this.deps.repo.grant(row.grant_id) : undefined;
    if (!row || !grant) return undefined;
    return this.approvals.cookie(grant.client_id, row.redirect_uri, grant.id, secure);
  }

  /** The pending request for the consent page, or undefined when unknown or expired. */
  async consentView(requestId: string, user: Principal, base: string): Promise<ConsentView | undefined> {
    const row = await this.deps.repo.request(sha256(requestId));
    if (!row || row.expires_at < this.now()) return undefined;
    const client = await this.deps.clients.resolve(row.client_id, this.now()).catch(() => undefined);
    if (!client) return undefined;
    const audience = audienceOf(row.resource, base);
    if (!audience) return undefined;
    const access = await this.access(user, audience);
    return {
      clientId: client.clientId,
      clientName: client.name,
      redirectHost: hostOf(row.redirect_uri),
      logoUri: client.logoUri,
      resource: row.resource,
      endpoint: audience === '*' ? { kind: 'all' } : splitAudience(audience),
      allowed: access === 'allowed',
      ...(access === 'allowed' ? {} : { refusal: access }),
      scope: row.scope,
    };
  }

  /** Allow or Deny: where the browser goes next (the client's redirect URI with a code or an error). */
  async decide(requestId: string, user: Principal, allow: boolean, base: string): Promise<string | undefined> {
    const idHash = sha256(requestId);
    const row = await this.deps.repo.request(idHash);
    if (!row || row.expires_at < this.now()) return undefined;
    if (!(await this.deps.repo.takeRequest(idHash))) return undefined;
    const audience = audienceOf(row.resource, base);
    if (!allow || !audience) return errorRedirect(row.redirect_uri, base, row.state, 'access_denied', 'the user denied access');
    // An Allow the page did not offer (a forged or replayed decision) gives nothing: RFC 6749 §4.1.2.1's access_denied.
    if ((await this.access(user, audience)) !== 'allowed')
      return errorRedirect(row.redirect_uri, base, row.state, 'access_denied', 'the user may not use this endpoint');
    const client = await this.deps.clients.resolve(row.client_id, this.now());
    const now = this.now();
    const grantId = await this.deps.repo.addGrant({
      user_id: user.id,
      client_id: client.clientId,
      client_name: client.name,
      resource: row.resource,
      scope: row.scope,
      created_at: now,
    });
    const code = randomToken(32);
    await this.deps.repo.addCode({
      code_hash: sha256(code),
      grant_id: grantId,
      redirect_uri: row.redirect_uri,
      code_challenge: row.code_challenge,
      expires_at: now + CODE_MS,
    });
    const url = new URL(row.redirect_uri);
    url.searchParams.set('code', code);
    if (row.state) url.searchParams.set('state', row.state);
    url.searchParams.set('iss', base);
    return url.href;
  }

  /** Whether the user may use the endpoint (every endpoint: each is checked when it is called). */
  private async access(user: Principal, audience: Audience): Promise<EndpointAccess> {
    if (user.status !== UserStatus.Enabled) return 'no_access';
    if (audience === '*') return 'allowed';
    const { kind, name } = splitAudience(audience);
    return this.deps.endpoints.access(user, kind, name);
  }

  /**
   * Before a token is issued for a grant (a code or a refresh): its user is enabled and may use its endpoint
   * now. Access lists change after approvals, and a decision the page did not offer must not end in a token:
   * an endpoint the user may not use is not an acceptable resource (RFC 8707 §2, invalid_target).
   */
  private async checkHolder(grant: GrantRow, base: string): Promise<void> {
    const audience = audienceOf(grant.resource, base);
    if (!audience) throw new OAuthError('invalid_target', 'oauth_server.resource_mismatch');
    const user = await this.deps.principals.byId(grant.user_id);
    if (user?.status !== UserStatus.Enabled) throw new OAuthError('invalid_grant', 'oauth_server.grant_revoked');
    if ((await this.access(user, audience)) !== 'allowed') throw new OAuthError('invalid_target', 'oauth_server.endpoint_not_allowed');
  }

  // --- token endpoint --------------------------------------------------------------------------

  async token(body: Record<string, unknown>, base: string): Promise<TokenAnswer> {
    const grantType = one(body.grant_type);
    if (!grantType) throw new OAuthError('invalid_request', 'oauth_server.missing_param', { param: 'grant_type' });
    if (grantType === 'authorization_code') return this.exchangeCode(body, base);
    if (grantType === 'refresh_token') return this.refresh(body, base);
    throw new OAuthError('unsupported_grant_type', 'oauth_server.unsupported_grant_type', { grant: grantType.slice(0, 60) });
  }

  private async exchangeCode(body: Record<string, unknown>, base: string): Promise<TokenAnswer> {
    const code = required(body, 'code');
    const clientId = required(body, 'client_id');
    const verifier = required(body, 'code_verifier');
    const redirectUri = one(body.redirect_uri);
    const codeHash = sha256(code);
    const row = await this.deps.repo.code(codeHash);
    const grant = row ? await this.deps.repo.grant(row.grant_id) : undefined;
    if (!row || !grant || grant.client_id !== clientId) throw new OAuthError('invalid_grant', 'oauth_server.bad_code');
    if (row.used_at !== null) {
      // RFC 6749 §4.1.2: a code used twice may have been stolen; what it gave is withdrawn.
      await this.revokeGrant(grant.id);
      throw new OAuthError('invalid_grant', 'oauth_server.code_reused');
    }
    if (row.expires_at < this.now()) throw new OAuthError('invalid_grant', 'oauth_server.bad_code');
    if (grant.revoked_at !== null) throw new OAuthError('invalid_grant', 'oauth_server.grant_revoked');
    if (redirectUri !== undefined && redirectUri !== row.redirect_uri)
      throw new OAuthError('invalid_grant', 'oauth_server.redirect_mismatch');
    if (!VERIFIER.test(verifier) || s256(verifier) !== row.code_challenge)
      throw new OAuthError('invalid_grant', 'oauth_server.bad_verifier');
    this.checkResource(body, grant);
    await this.checkHolder(grant, base);
    if (!(await this.deps.repo.useCode(codeHash, this.now()))) {
      await this.revokeGrant(grant.id);
      throw new OAuthError('invalid_grant', 'oauth_server.code_reused');
    }
    return this.issue(grant, base);
  }

  private async refresh(body: Record<string, unknown>, base: string): Promise<TokenAnswer> {
    const token = required(body, 'refresh_token');
    const clientId = required(body, 'client_id');
    const hash = sha256(token);
    const row = await this.deps.repo.refreshToken(hash);
    const grant = row ? await this.deps.repo.grant(row.grant_id) : undefined;
    if (!row || !grant || grant.client_id !== clientId) throw new OAuthError('invalid_grant', 'oauth_server.bad_refresh');
    if (row.used_at !== null) {
      // A rotated refresh token presented again: one of the two holders is a thief. The family ends.
      await this.revokeGrant(grant.id);
      throw new OAuthError('invalid_grant', 'oauth_server.refresh_reused');
    }
    if (row.expires_at < this.now()) throw new OAuthError('invalid_grant', 'oauth_server.bad_refresh');
    if (grant.revoked_at !== null) throw new OAuthError('invalid_grant', 'oauth_server.grant_revoked');
    this.checkResource(body, grant);
    await this.checkHolder(grant, base);
    if (!(await this.deps.repo.useRefreshToken(hash, this.now()))) {
      await this.revokeGrant(grant.id);
      throw new OAuthError('invalid_grant', 'oauth_server.refresh_reused');
    }
    return this.issue(grant, base);
  }

  private checkResource(body: Record<string, unknown>, grant: GrantRow): void {
    if (body.resource === undefined) return;
    const resource = one(body.resource);
    if (resource !== grant.resource) throw new OAuthError('invalid_target', 'oauth_server.resource_mismatch');
  }

  private async issue(grant: GrantRow, base: string): Promise<TokenAnswer> {
    const audience = audienceOf(grant.resource, base);
    if (!audience) throw new OAuthError('invalid_target', 'oauth_server.resource_mismatch');
    const access = await new SignJWT({
      ep: audience,
      gid: grant.id,
      client_id: grant.client_id,
      ...(grant.scope ? { scope: grant.scope } : {}),
    })
      .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt' })
      .setIssuer(base)
      .setSubject(String(grant.user_id))
      .setAudience(grant.resource)
      .setIssuedAt(Math.floor(this.now() / 1000))
      .setExpirationTime(Math.floor(this.now() / 1000) + ACCESS_TOKEN_SECONDS)
      .setJti(randomToken(12))
      .sign(this.deps.tokenKey);
    const refresh = randomToken(32);
    await this.deps.repo.addRefreshToken({ token_hash: sha256(refresh), grant_id: grant.id, expires_at: this.now() + REFRESH_TOKEN_MS });
    await this.touch(grant.id);
    return {
      access_token: access,
      token_type: 'Bearer',
      expires_in: ACCESS_TOKEN_SECONDS,
      refresh_token: refresh,
      ...(grant.scope ? { scope: grant.scope } : {}),
    };
  }

  // --- revocation (RFC 7009) -------------------------------------------------------------------

  /** Revokes the grant behind a refresh or access token; unknown tokens are not an error (RFC 7009 §2.2). */
  async revokeToken(body: Record<string, unknown>): Promise<void> {
    const token = required(body, 'token');
    const clientId = one(body.client_id);
    const refresh = await this.deps.repo.refreshToken(sha256(token));
    let grantId = refresh?.grant_id;
    if (grantId === undefined && token.split('.').length === 3) {
      // An expired access token needs no revoking; a valid one ends its whole grant.
      const claims = await jwtVerify(token, this.deps.tokenKey, { typ: 'at+jwt', algorithms: ['HS256'] }).catch(() => undefined);
      grantId = typeof claims?.payload.gid === 'number' ? claims.payload.gid : undefined;
    }
    if (grantId === undefined) return;
    const grant = await this.deps.repo.grant(grantId);
    // A client may revoke only its own tokens.
    if (!grant || (clientId !== undefined && grant.client_id !== clientId)) return;
    await this.revokeGrant(grant.id);
  }

  async revokeGrant(id: number, userId?: number): Promise<boolean> {
    const done = await this.deps.repo.revokeGrant(id, this.now(), userId);
    this.grantCache.delete(id);
    if (done && this.deps.events) {
      const grant = await this.deps.repo.grant(id);
      if (grant) this.deps.events.emit({ type: 'user.changed', userId: grant.user_id });
    }
    return done;
  }

  grantsOf(userId: number): Promise<GrantRow[]> {
    return this.deps.repo.grantsOf(userId);
  }

  /**
   * The user's Connected apps (decision 0054): one entry per client identity — the same client name, the same
   * redirect URIs and the same endpoint — however often the client registered anew (mcp-remote does on every
   * start). Grants are never merged across users: the list is one user's. Newest approval first.
   */
  async appsOf(userId: number): Promise<ConnectedAppEntry[]> {
    const apps = new Map<string, GrantRow[]>();
    for (const grant of await this.deps.repo.grantsWithRedirects(userId)) {
      const key = appIdentity(grant);
      apps.set(key, [...(apps.get(key) ?? []), grant]);
    }
    return [...apps.values()].map((grants) => ({ newest: grants[0] as GrantRow, grants }));
  }

  /** Revokes the app a grant of the user belongs to: every grant of that identity. False when the grant is not theirs or gone. */
  async revokeApp(grantId: number, userId: number): Promise<boolean> {
    const app = (await this.appsOf(userId)).find((a) => a.grants.some((g) => g.id === grantId));
    if (!app) return false;
    let any = false;
    for (const grant of app.grants) any = (await this.revokeGrant(grant.id, userId)) || any;
    return any;
  }

  // --- the proxy's port ------------------------------------------------------------------------

  async verify(token: string, endpoint: ProxyEndpoint, issuer: string): Promise<VerifiedToken | undefined> {
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(token, this.deps.tokenKey, { issuer, typ: 'at+jwt', algorithms: ['HS256'] }));
    } catch {
      return undefined;
    }
    const ep = payload.ep;
    if (ep !== '*' && ep !== `${endpoint.kind}:${endpoint.name}`) return undefined;
    const gid = payload.gid;
    const userId = Number(payload.sub);
    if (typeof gid !== 'number' || !Number.isInteger(userId) || typeof payload.exp !== 'number') return undefined;
    if (!(await this.grantActive(gid))) return undefined;
    const user = await this.deps.principals.byId(userId);
    if (user?.status !== UserStatus.Enabled) return undefined;
    await this.touch(gid);
    return {
      user: { id: user.id, username: user.username, role: user.role, enabled: true, switchedOff: await this.deps.switchedOffBy(user.id) },
      expiresAt: payload.exp * 1000,
    };
  }

  private async grantActive(id: number): Promise<boolean> {
    const hit = this.grantCache.get(id);
    if (hit && this.now() - hit.at < CACHE_MS) return hit.active;
    const grant = await this.deps.repo.grant(id);
    const active = grant !== undefined && grant.revoked_at === null;
    if (this.grantCache.size > 10_000) this.grantCache.clear();
    this.grantCache.set(id, { at: this.now(), active });
    return active;
  }

  private async touch(id: number): Promise<void> {
    const now = this.now();
    const last = this.touched.get(id);
    if (last !== undefined && now - last < TOUCH_MS) return;
    if (this.touched.size > 10_000) this.touched.clear();
    this.touched.set(id, now);
    await this.deps.repo.touchGrant(id, now);
  }

  async purge(): Promise<void> {
    await this.deps.repo.purgeExpired(this.now());
  }
}

function required(body: Record<string, unknown>, param: string): string {
  const v = one(body[param]);
  if (!v) throw new OAuthError('invalid_request', 'oauth_server.missing_param', { param });
  if (v.length > 4096) throw new OAuthError('invalid_request', 'oauth_server.param_too_long', { param });
  return v;
}

function splitAudience(audience: Exclude<Audience, '*'>): { kind: 'proxy' | 'group'; name: string } {
  const colon = audience.indexOf(':');
  return { kind: audience.slice(0, colon) as 'proxy' | 'group', name: audience.slice(colon + 1) };
}

function hostOf(uri: string): string {
  try {
    const url = new URL(uri);
    return url.host || `${url.protocol}${url.pathname}`;
  } catch {
    return uri;
  }
}

/** The client's redirect URI with an error (RFC 6749 §4.1.2.1) and `iss` (RFC 9207). */
function errorRedirect(redirectUri: string, base: string, state: string, code: string, description: string): string {
  const url = new URL(redirectUri);
  url.searchParams.set('error', code);
  url.searchParams.set('error_description', description);
  if (state) url.searchParams.set('state', state);
  url.searchParams.set('iss', base);
  return url.href;
}

export type { OAuthClient };

/** One Connected app as the console lists it: the grants of one client identity, the newest first. */
export interface ConnectedAppEntry {
  newest: GrantRow;
  grants: GrantRow[];
}

/** Who a client is to its user: its name, its redirect URIs (in any order) and the endpoint it was approved for. */
function appIdentity(grant: GrantRow & { redirect_uris: string | null }): string {
  let uris: string[] = [];
  try {
    const parsed: unknown = JSON.parse(grant.redirect_uris ?? '[]');
    if (Array.isArray(parsed)) uris = parsed.filter((u): u is string => typeof u === 'string').sort();
  } catch {
    uris = [];
  }
  // A client whose registration is gone is known by its id alone: it merges with nothing.
  const who = grant.redirect_uris === null ? ['id', grant.client_id] : ['name', grant.client_name, ...uris];
  return JSON.stringify([grant.resource, ...who]);
}
