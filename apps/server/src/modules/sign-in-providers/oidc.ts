import type { OidcProviderSettings } from '@toolport/contract';
import {
  createLocalJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  type JSONWebKeySet,
  type JWTPayload,
  type JWTVerifyGetKey,
  errors as joseErrors,
  jwtVerify,
} from 'jose';
import { z } from 'zod';
import { AppError } from '../../http/errors.js';
import type { ProviderProfile, ProviderTokens } from './provider-client.js';
import { asRecord, badAnswer, callProvider, refused, USER_AGENT } from './provider-http.js';

/** How far the provider's clock may be off ours when exp, nbf and iat are checked. */
export const CLOCK_SKEW_SECONDS = 60;
/** How long a discovery document is believed before it is read again. */
const DISCOVERY_TTL_MS = 60 * 60 * 1000;
/** An unknown `kid` refetches the keys at once, but not again for this long: a stranger's tokens must not make us hammer the provider. */
export const JWKS_REFETCH_COOLDOWN_MS = 30 * 1000;

const Discovery = z.object({
  issuer: z.string().min(1),
  authorization_endpoint: z.string().url(),
  token_endpoint: z.string().url(),
  jwks_uri: z.string().url(),
  userinfo_endpoint: z.string().url().optional(),
  id_token_signing_alg_values_supported: z.array(z.string()).optional(),
  token_endpoint_auth_methods_supported: z.array(z.string()).optional(),
});
type Discovery = z.infer<typeof Discovery>;

/** The asymmetric algorithms accepted unless the provider names its own; `none` never is. */
const DEFAULT_ALGS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];

const discoveryFailed = (label: string, detail: string) =>
  new AppError(502, 'oidc.discovery_failed', { provider: label, detail: detail.slice(0, 300) }, { code: 'oidc_discovery_failed' });

export const idTokenInvalid = (label: string, detail: string) =>
  new AppError(400, 'oidc.id_token_invalid', { provider: label, detail: detail.slice(0, 300) }, { code: 'oidc_id_token_invalid' });

const tenantRefused = (label: string, tenant: string) =>
  new AppError(403, 'oidc.tenant_not_allowed', { provider: label, tenant: tenant.slice(0, 64) }, { code: 'oidc_tenant_not_allowed' });

/** Microsoft Entra ID's multi-tenant discovery (`common`, `organizations`) names its issuer with this placeholder. */
const TENANT_PLACEHOLDER = '{tenantid}';

/** What a refresh-time check learnt from the provider (decision 0063). */
export type Recheck =
  /** The provider still vouches for the person; its new tokens, when it gave any. */
  | { kind: 'yes'; tokens: ProviderTokens }
  /** The provider said no about this person (invalid_grant, a revoked access token). */
  | { kind: 'no'; reason: string }
  /** No answer that says either (unreachable, 5xx, our own client refused, nothing to ask with): not held against anyone. */
  | { kind: 'unknown'; reason: string };

const claimsMissing = (label: string, claim: string) =>
  new AppError(502, 'oidc.claims_missing', { provider: label, claim }, { code: 'oidc_claims_missing' });

/** The issuer's discovery document URL (OpenID Connect Discovery 1.0 §4). */
export const discoveryUrl = (issuer: string): string => `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;

/** The values of the roles claim, which providers send as a string, an array, or (Entra, Logto) an array of strings. */
export function claimValues(value: unknown): string[] | undefined {
  if (typeof value === 'string') return value ? [value] : [];
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string');
  return undefined;
}

const isVerified = (v: unknown) => v === true || v === 'true';

/**
 * A claim by name; a name that is not a claim itself is read as a dotted path into nested objects
 * (Keycloak's `realm_access.roles`). Okta's URL-shaped claim names are found as they are.
 */
export function claimAt(claims: Record<string, unknown>, name: string): unknown {
  if (name in claims) return claims[name];
  let value: unknown = claims;
  for (const part of name.split('.')) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/**
 * One OpenID Connect provider: discovery from its issuer, the authorization code flow with PKCE and
 * nonce, the ID token checked with jose (issuer, audience and azp, signature from the provider's JWKS,
 * exp / nbf / iat with bounded skew, nonce), and userinfo when the ID token lacks the claims.
 * The discovery document and the keys are kept between sign-ins; an unknown `kid` refetches the keys
 * once per cooldown, which is how a provider's key rotation is picked up.
 */
export class OidcClient {
  readonly label: string;
  private discovery?: { doc: Discovery; at: number };
  private keys?: { set: JSONWebKeySet; local: JWTVerifyGetKey; at: number };
  private lastRefetch = Number.NEGATIVE_INFINITY;
  /** How many times the keys were fetched (tests read it to see the cooldown hold). */
  keyFetches = 0;

  constructor(
    readonly settings: OidcProviderSettings,
    private readonly clock: () => number = Date.now,
  ) {
    this.label = settings.label;
  }

  async authorizeUrl(req: {
    clientId: string;
    redirectUri: string;
    state: string;
    codeChallenge: string;
    nonce?: string;
  }): Promise<string> {
    const doc = await this.metadata();
    const url = new URL(doc.authorization_endpoint);
    const params = new URLSearchParams(url.search);
    for (const [k, v] of Object.entries({
      client_id: req.clientId,
      redirect_uri: req.redirectUri,
      response_type: 'code',
      scope: this.scopes(),
      state: req.state,
      nonce: req.nonce ?? '',
      code_challenge: req.codeChallenge,
      code_challenge_method: 'S256',
    })) {
      params.set(k, v);
    }
    url.search = params.toString();
    return url.toString();
  }

  /** The scopes asked for: the configured ones, always with `openid`. */
  scopes(): string {
    const list = this.settings.scopes.split(/[\s,]+/).filter(Boolean);
    return (list.includes('openid') ? list : ['openid', ...list]).join(' ');
  }

  /** Swaps the code for tokens, checks the ID token, and says who signed in. */
  async complete(req: {
    clientId: string;
    clientSecret: string;
    code: string;
    redirectUri: string;
    codeVerifier: string;
    nonce: string;
  }): Promise<ProviderProfile> {
    const doc = await this.metadata();
    const form = new URLSearchParams({
      grant_type: 'authorization_code',
      code: req.code,
      redirect_uri: req.redirectUri,
      code_verifier: req.codeVerifier,
    });
    const answer = await this.tokenRequest(doc, form, req.clientId, req.clientSecret);
    const body = asRecord(answer.body);
    if (body.error !== undefined) throw refused(this.label, body.error, body.error_description);
    if (answer.status !== 200) throw badAnswer(this.label, `HTTP ${answer.status} from the token endpoint`);
    if (typeof body.id_token !== 'string' || !body.id_token) throw badAnswer(this.label, 'no id_token in the token answer');
    const claims = await this.verifyIdToken(body.id_token, req.clientId, req.clientSecret, req.nonce);
    const tokens = this.tokensOf(body, '');
    return { ...(await this.profileOf(claims, tokens.access, doc)), tokens };
  }

  /** A POST to the token endpoint, the client authenticated the way the provider lists (basic first). */
  private tokenRequest(doc: Discovery, form: URLSearchParams, clientId: string, clientSecret: string) {
    const headers: Record<string, string> = {
      accept: 'application/json',
      'content-type': 'application/x-www-form-urlencoded',
      'user-agent': USER_AGENT,
    };
    const methods = doc.token_endpoint_auth_methods_supported;
    if (!methods || methods.includes('client_secret_basic')) {
      // RFC 6749 §2.3.1: both parts form-encoded before they are joined.
      const enc = (s: string) => encodeURIComponent(s).replace(/%20/g, '+');
      headers.authorization = `Basic ${Buffer.from(`${enc(clientId)}:${enc(clientSecret)}`).toString('base64')}`;
    } else {
      form.set('client_id', clientId);
      form.set('client_secret', clientSecret);
    }
    return callProvider(this.label, doc.token_endpoint, { method: 'POST', headers, body: form });
  }

  /** The tokens of a token answer; a refresh answer without a new refresh token keeps the old one (RFC 6749 §6). */
  private tokensOf(body: Record<string, unknown>, previousRefresh: string): ProviderTokens {
    const access = typeof body.access_token === 'string' ? body.access_token : '';
    const expiresIn = typeof body.expires_in === 'number' ? body.expires_in : Number(body.expires_in);
    return {
      refresh: typeof body.refresh_token === 'string' && body.refresh_token ? body.refresh_token : previousRefresh,
      access,
      accessExpiresAt: access && Number.isFinite(expiresIn) && expiresIn > 0 ? this.clock() + expiresIn * 1000 : 0,
    };
  }

  /**
   * Whether the provider still vouches for `subject` (decision 0063): a refresh token grant when a refresh token
   * is held, otherwise userinfo with an access token that has not expired yet. Only the provider's own refusal
   * about this person is a "no" (invalid_grant; a 401 for an unexpired access token); an outage, a 5xx, a refusal
   * of our client or nothing to ask with is "unknown", which nobody is signed out for.
   */
  async recheck(req: {
    clientId: string;
    clientSecret: string;
    subject: string;
    refreshToken: string;
    accessToken: string;
    accessExpiresAt: number;
  }): Promise<Recheck> {
    let doc: Discovery;
    try {
      doc = await this.metadata();
    } catch (err) {
      return { kind: 'unknown', reason: reasonOf(err) };
    }
    if (req.refreshToken) {
      const form = new URLSearchParams({ grant_type: 'refresh_token', refresh_token: req.refreshToken });
      let answer: Awaited<ReturnType<typeof callProvider>>;
      try {
        answer = await this.tokenRequest(doc, form, req.clientId, req.clientSecret);
      } catch (err) {
        return { kind: 'unknown', reason: reasonOf(err) };
      }
      const body = asRecord(answer.body);
      // RFC 6749 §5.2: invalid_grant is the provider saying this grant (and so this person's access) is over.
      if (body.error === 'invalid_grant') {
        return {
          kind: 'no',
          reason: `invalid_grant${typeof body.error_description === 'string' ? ` (${body.error_description.slice(0, 200)})` : ''}`,
        };
      }
      if (body.error !== undefined || answer.status !== 200)
        return { kind: 'unknown', reason: `HTTP ${answer.status} ${String(body.error ?? '')}`.trim() };
      if (typeof body.id_token === 'string' && body.id_token) {
        try {
          // Core §12.2: a refreshed ID token is about the same person, without a nonce to check.
          const claims = await this.verifyIdToken(body.id_token, req.clientId, req.clientSecret, undefined);
          if (claims.sub !== req.subject) return { kind: 'unknown', reason: 'the refreshed ID token is about another subject' };
        } catch (err) {
          return { kind: 'unknown', reason: reasonOf(err) };
        }
      }
      return { kind: 'yes', tokens: this.tokensOf(body, req.refreshToken) };
    }
    // An expired access token is refused whether or not the person is still there: it cannot tell.
    if (!req.accessToken || !doc.userinfo_endpoint) return { kind: 'unknown', reason: 'no refresh token, no userinfo' };
    if (req.accessExpiresAt !== 0 && req.accessExpiresAt <= this.clock())
      return { kind: 'unknown', reason: 'the access token has expired' };
    let answer: Awaited<ReturnType<typeof callProvider>>;
    try {
      answer = await callProvider(this.label, doc.userinfo_endpoint, {
        headers: { accept: 'application/json', authorization: `Bearer ${req.accessToken}`, 'user-agent': USER_AGENT },
      });
    } catch (err) {
      return { kind: 'unknown', reason: reasonOf(err) };
    }
    if (answer.status === 401) return { kind: 'no', reason: 'userinfo refused the access token (401)' };
    const info = asRecord(answer.body);
    if (answer.status === 200 && info.sub === req.subject) {
      return { kind: 'yes', tokens: { refresh: '', access: req.accessToken, accessExpiresAt: req.accessExpiresAt } };
    }
    return { kind: 'unknown', reason: `HTTP ${answer.status} from userinfo` };
  }

  /** Every check of OpenID Connect Core §3.1.3.7 that applies to a confidential client. */
  async verifyIdToken(idToken: string, clientId: string, clientSecret: string, nonce: string | undefined): Promise<JWTPayload> {
    const doc = await this.metadata();
    const algorithms = (doc.id_token_signing_alg_values_supported ?? DEFAULT_ALGS).filter((a) => a !== 'none');
    let alg: string | undefined;
    try {
      alg = decodeProtectedHeader(idToken).alg;
    } catch {
      throw idTokenInvalid(this.label, 'not a signed JWT');
    }
    const issuer = this.expectedIssuer(doc, idToken);
    const getKey: JWTVerifyGetKey = async (header, token) => {
      // HS* tokens are signed with the client secret (Authing's and Casdoor's option), only when the provider lists them.
      if (header.alg?.startsWith('HS')) return new TextEncoder().encode(clientSecret);
      return this.keyFor(header, token);
    };
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(idToken, getKey, {
        issuer,
        audience: clientId,
        algorithms,
        clockTolerance: CLOCK_SKEW_SECONDS,
        requiredClaims: ['sub', 'iat', 'exp'],
        currentDate: new Date(this.clock()),
      }));
    } catch (err) {
      if (err instanceof AppError) throw err;
      throw idTokenInvalid(this.label, joseReason(err, alg));
    }
    const now = this.clock() / 1000;
    if (typeof payload.iat === 'number' && payload.iat > now + CLOCK_SKEW_SECONDS) {
      throw idTokenInvalid(this.label, 'issued in the future (iat)');
    }
    const audiences = Array.isArray(payload.aud) ? payload.aud : [payload.aud];
    // Core §3.1.3.7 (4, 5): with several audiences azp must be there, and when there it must be us.
    if (audiences.length > 1 && payload.azp === undefined) throw idTokenInvalid(this.label, 'several audiences and no azp');
    if (payload.azp !== undefined && payload.azp !== clientId) throw idTokenInvalid(this.label, 'azp is another client');
    if (issuer !== doc.issuer) {
      // A tenant template: the signed tid is the one the issuer was built from; the list says who may come in.
      const allowed = this.settings.allowed_tenants;
      if (allowed.length > 0 && !allowed.some((t) => t.toLowerCase() === String(payload.tid).toLowerCase())) {
        throw tenantRefused(this.label, String(payload.tid));
      }
    }
    if (nonce !== undefined && payload.nonce !== nonce) {
      throw new AppError(400, 'oidc.nonce_mismatch', { provider: this.label }, { code: 'oidc_nonce_mismatch' });
    }
    return payload;
  }

  /**
   * The issuer the token must name. Usually the discovery document's. Microsoft Entra ID's multi-tenant
   * documents (`common`, `organizations`) name `https://login.microsoftonline.com/{tenantid}/v2.0`, and each
   * token is issued by its person's tenant: the issuer is the template filled with the token's `tid`, which
   * is signed with the rest, so `iss` and `tid` must agree (Microsoft identity platform, "Validate the issuer").
   * The tid is read before the signature is checked only to build the expected value; jose then checks both.
   */
  private expectedIssuer(doc: Discovery, idToken: string): string {
    if (!doc.issuer.includes(TENANT_PLACEHOLDER)) return doc.issuer;
    let tid: unknown;
    try {
      tid = decodeJwt(idToken).tid;
    } catch {
      throw idTokenInvalid(this.label, 'malformed token');
    }
    if (typeof tid !== 'string' || !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(tid)) {
      throw idTokenInvalid(this.label, 'no tenant (tid) for the issuer template');
    }
    return doc.issuer.replace(TENANT_PLACEHOLDER, tid);
  }

  /** The key for a token's header from the cached JWKS; an unknown kid refetches once per cooldown. */
  private async keyFor(header: Parameters<JWTVerifyGetKey>[0], token: Parameters<JWTVerifyGetKey>[1]) {
    const keys = this.keys ?? (await this.fetchKeys());
    try {
      return await keys.local(header, token);
    } catch (err) {
      if (!(err instanceof joseErrors.JWKSNoMatchingKey || err instanceof joseErrors.JWKSMultipleMatchingKeys)) throw err;
      if (this.clock() - this.lastRefetch < JWKS_REFETCH_COOLDOWN_MS) throw err;
      this.lastRefetch = this.clock();
      const fresh = await this.fetchKeys();
      return fresh.local(header, token);
    }
  }

  private async fetchKeys() {
    const doc = await this.metadata();
    this.keyFetches++;
    const answer = await callProvider(this.label, doc.jwks_uri, { headers: { accept: 'application/json', 'user-agent': USER_AGENT } });
    const body = asRecord(answer.body);
    if (answer.status !== 200 || !Array.isArray(body.keys))
      throw discoveryFailed(this.label, `HTTP ${answer.status} from jwks_uri without keys`);
    const set = body as unknown as JSONWebKeySet;
    let local: JWTVerifyGetKey;
    try {
      local = createLocalJWKSet(set);
    } catch (err) {
      throw discoveryFailed(this.label, `unusable JWKS: ${err instanceof Error ? err.message : String(err)}`);
    }
    this.keys = { set, local, at: this.clock() };
    return this.keys;
  }

  /** The discovery document, read again after an hour; its issuer must be the configured one. */
  async metadata(): Promise<Discovery> {
    if (this.discovery && this.clock() - this.discovery.at < DISCOVERY_TTL_MS) return this.discovery.doc;
    const url = discoveryUrl(this.settings.issuer);
    let answer: Awaited<ReturnType<typeof callProvider>>;
    try {
      answer = await callProvider(this.label, url, { headers: { accept: 'application/json', 'user-agent': USER_AGENT } });
    } catch (err) {
      throw discoveryFailed(
        this.label,
        err instanceof AppError ? String(err.params?.detail ?? err.params?.seconds ?? err.key) : String(err),
      );
    }
    if (answer.status !== 200) throw discoveryFailed(this.label, `HTTP ${answer.status} from ${url}`);
    const parsed = Discovery.safeParse(answer.body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw discoveryFailed(this.label, `${issue?.path.join('.') || 'document'}: ${issue?.message ?? 'invalid'}`);
    }
    // Discovery §4.3: the issuer in the document is exactly the one it was fetched for; a `{tenantid}` template
    // (Entra's common / organizations / consumers) stands for the configured tenant segment.
    if (!issuerMatches(parsed.data.issuer, this.settings.issuer)) {
      throw discoveryFailed(this.label, `the document names the issuer ${parsed.data.issuer}`);
    }
    this.discovery = { doc: parsed.data, at: this.clock() };
    return parsed.data;
  }

  /** Who signed in: from the ID token, with userinfo asked when the token lacks what is needed. */
  private async profileOf(claims: JWTPayload, accessToken: string, doc: Discovery): Promise<ProviderProfile> {
    let all: Record<string, unknown> = { ...claims };
    const rolesClaim = this.settings.roles_claim;
    const lacking = all.email === undefined || all.name === undefined || (rolesClaim !== '' && claimAt(all, rolesClaim) === undefined);
    if (lacking && doc.userinfo_endpoint && accessToken) {
      const answer = await callProvider(this.label, doc.userinfo_endpoint, {
        headers: { accept: 'application/json', authorization: `Bearer ${accessToken}`, 'user-agent': USER_AGENT },
      });
      const info = asRecord(answer.body);
      if (answer.status === 200) {
        // Core §5.3.2: a userinfo answer about someone else must not be used.
        if (info.sub !== claims.sub) throw idTokenInvalid(this.label, 'userinfo is about another subject');
        // The signed ID token wins; userinfo fills what it lacks.
        all = { ...info, ...all };
      }
    }
    const sub = String(claims.sub);
    const email = typeof all.email === 'string' ? all.email.trim() : '';
    const verified = email !== '' && isVerified(all.email_verified);
    let groups: string[] | undefined;
    if (rolesClaim) {
      groups = claimValues(claimAt(all, rolesClaim));
      // A mapping that cannot be applied must not sign anyone in with a guessed role.
      if (groups === undefined && Object.keys(this.settings.role_map).some((k) => k !== '*')) throw claimsMissing(this.label, rolesClaim);
    }
    const preferred = typeof all.preferred_username === 'string' ? all.preferred_username : '';
    const name = typeof all.name === 'string' ? all.name : '';
    return {
      id: sub,
      login: preferred || (email ? (email.split('@')[0] ?? '') : name),
      displayName: name || preferred || email || `${this.label} user ${sub.slice(-6)}`,
      email: verified ? email : '',
      unverifiedEmail: verified ? '' : email,
      groups: groups ?? [],
    };
  }
}

/** The discovery document's issuer is the configured one, or a `{tenantid}` template the configured one fills. */
function issuerMatches(documented: string, configured: string): boolean {
  const doc = documented.replace(/\/+$/, '');
  const mine = configured.replace(/\/+$/, '');
  if (doc === mine) return true;
  if (!doc.includes(TENANT_PLACEHOLDER)) return false;
  const [before = '', after = ''] = doc.split(TENANT_PLACEHOLDER);
  return mine.startsWith(before) && mine.endsWith(after) && /^[\w.-]+$/.test(mine.slice(before.length, mine.length - after.length));
}

/** A failure in a few words for the log. */
const reasonOf = (err: unknown): string =>
  err instanceof AppError ? `${err.key} ${JSON.stringify(err.params ?? {})}` : err instanceof Error ? err.message : String(err);

/** What jose's refusal means, in a few words for the message and the log. */
function joseReason(err: unknown, alg: string | undefined): string {
  if (err instanceof joseErrors.JWTExpired) return 'expired (exp)';
  if (err instanceof joseErrors.JWTClaimValidationFailed)
    return `claim ${err.claim} ${err.reason === 'check_failed' ? 'does not match' : err.reason}`;
  if (err instanceof joseErrors.JWSSignatureVerificationFailed) return 'the signature does not verify';
  if (err instanceof joseErrors.JWKSNoMatchingKey) return 'no key of the provider matches the token (kid)';
  if (err instanceof joseErrors.JOSEAlgNotAllowed) return `algorithm ${alg ?? '?'} is not allowed`;
  if (err instanceof joseErrors.JWTInvalid || err instanceof joseErrors.JWSInvalid) return 'malformed token';
  if (err instanceof joseErrors.JOSEError) return err.code;
  return err instanceof Error ? err.message : String(err);
}
