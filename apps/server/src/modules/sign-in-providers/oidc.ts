import type { OidcProviderSettings } from '@toolport/contract';
import {
  createLocalJWKSet,
  decodeProtectedHeader,
  type JSONWebKeySet,
  type JWTPayload,
  type JWTVerifyGetKey,
  errors as joseErrors,
  jwtVerify,
} from 'jose';
import { z } from 'zod';
import { AppError } from '../../http/errors.js';
import type { ProviderProfile } from './provider-client.js';
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
    const headers: Record<string, string> = {
      accept: 'application/json',
      'content-type': 'application/x-www-form-urlencoded',
      'user-agent': USER_AGENT,
    };
    const methods = doc.token_endpoint_auth_methods_supported;
    if (!methods || methods.includes('client_secret_basic')) {
      // RFC 6749 §2.3.1: both parts form-encoded before they are joined.
      const enc = (s: string) => encodeURIComponent(s).replace(/%20/g, '+');
      headers.authorization = `Basic ${Buffer.from(`${enc(req.clientId)}:${enc(req.clientSecret)}`).toString('base64')}`;
    } else {
      form.set('client_id', req.clientId);
      form.set('client_secret', req.clientSecret);
    }
    const answer = await callProvider(this.label, doc.token_endpoint, { method: 'POST', headers, body: form });
    const body = asRecord(answer.body);
    if (body.error !== undefined) throw refused(this.label, body.error, body.error_description);
    if (answer.status !== 200) throw badAnswer(this.label, `HTTP ${answer.status} from the token endpoint`);
    if (typeof body.id_token !== 'string' || !body.id_token) throw badAnswer(this.label, 'no id_token in the token answer');
    const claims = await this.verifyIdToken(body.id_token, req.clientId, req.clientSecret, req.nonce);
    const accessToken = typeof body.access_token === 'string' ? body.access_token : '';
    return this.profileOf(claims, accessToken, doc);
  }

  /** Every check of OpenID Connect Core §3.1.3.7 that applies to a confidential client. */
  async verifyIdToken(idToken: string, clientId: string, clientSecret: string, nonce: string): Promise<JWTPayload> {
    const doc = await this.metadata();
    const algorithms = (doc.id_token_signing_alg_values_supported ?? DEFAULT_ALGS).filter((a) => a !== 'none');
    let alg: string | undefined;
    try {
      alg = decodeProtectedHeader(idToken).alg;
    } catch {
      throw idTokenInvalid(this.label, 'not a signed JWT');
    }
    const getKey: JWTVerifyGetKey = async (header, token) => {
      // HS* tokens are signed with the client secret (Authing's and Casdoor's option), only when the provider lists them.
      if (header.alg?.startsWith('HS')) return new TextEncoder().encode(clientSecret);
      return this.keyFor(header, token);
    };
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(idToken, getKey, {
        issuer: doc.issuer,
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
    if (payload.nonce !== nonce) {
      throw new AppError(400, 'oidc.nonce_mismatch', { provider: this.label }, { code: 'oidc_nonce_mismatch' });
    }
    return payload;
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
    // Discovery §4.3: the issuer in the document is exactly the one it was fetched for.
    if (parsed.data.issuer.replace(/\/+$/, '') !== this.settings.issuer.replace(/\/+$/, '')) {
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
