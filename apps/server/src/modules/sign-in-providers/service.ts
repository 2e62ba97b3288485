import {
  type HeldIdentity,
  HeldReason,
  type LinkedIdentity,
  type LinkIdentityRequest,
  type OAuthCallbackQuery,
  type OAuthCallbackResult,
  type OAuthProvider,
  type OidcGrant,
  OidcProviderList,
  type OidcProviderSettings,
  type OidcPublicProvider,
  oauthProviderLabels,
  type PublicUser,
  Role,
  UserStatus,
} from '@toolport/contract';
import type { Logger } from 'pino';
import { type RateLimiterAbstract, RateLimiterRes } from 'rate-limiter-flexible';
import type { Config } from '../../config.js';
import type { UserRow } from '../../db/schema.js';
import { AppError, badRequest, conflict, forbidden, notFound, tooMany } from '../../http/errors.js';
import type { Principal } from '../../http/principals.js';
import type { ConfigEvents } from '../../infra/events.js';
import { addressKey, limiter } from '../../infra/rate-limit.js';
import type { RedisHub } from '../../infra/redis.js';
import { randomToken, type Secrets, sha256 } from '../../infra/secrets.js';
import type { AuthService } from '../auth/index.js';
import type { OptionsService } from '../options/index.js';
import { issueApiKey, mayChangeSignIn, toPublicUser, type UsersRepo } from '../users/index.js';
import { OidcClient } from './oidc.js';
import { codeChallengeOf, createCodeVerifier } from './pkce.js';
import type { ProviderClient, ProviderProfile, ProviderTokens } from './provider-client.js';
import { providerClients } from './providers.js';
import type { OAuthRepo, OAuthStateRow } from './repo.js';
import { usernameBase, usernameCandidates } from './usernames.js';

/**
 * A refresh asks the provider about an identity at most this often (decision 0063): concurrent refreshes of one
 * person (two devices) must not present one rotating refresh token twice; the ones in between go on unasked.
 */
export const RECHECK_INTERVAL_MS = 30 * 1000;

/** How long a user has on the provider's page before the sign-in must start again. */
export const STATE_TTL_SECONDS = 10 * 60;

const credentialKeys = {
  github: { id: 'GitHubClientId', secret: 'GitHubClientSecret' },
  google: { id: 'GoogleClientId', secret: 'GoogleClientSecret' },
} as const;

export interface StartedSignIn {
  /** The provider's authorize page to send the browser to. */
  url: string;
  /** Goes into the browser's cookie; its hash is kept with the pending sign-in. */
  browserNonce: string;
}

/**
 * A provider sign-in or link: where to send the browser and how to learn who came back. GitHub and
 * Google wrap their ProviderClient; an OpenID Connect provider is an OidcClient.
 */
interface SignInSource {
  /** What `oauth_states.provider` and `provider_identities.provider` say: `github`, `google`, `oidc:{slug}`. */
  key: string;
  label: string;
  clientId: string;
  clientSecret: string;
  /** The console page the provider sends the browser back to. */
  returnPath: string;
  authorizeUrl(req: { clientId: string; redirectUri: string; state: string; codeChallenge: string; nonce: string }): Promise<string>;
  complete(req: {
    clientId: string;
    clientSecret: string;
    code: string;
    redirectUri: string;
    codeVerifier: string;
    nonce: string;
  }): Promise<ProviderProfile>;
  oidc?: OidcProviderSettings;
}

/** Role numbers of the names a role map uses. */
const roleNumber = { user: Role.User, admin: Role.Admin } as const;

/** What provider sign-in reads and writes besides its own table. */
export interface SignInProvidersDeps {
  config: Pick<Config, 'oauth'> & { oidcProviders?: OidcProviderSettings[] };
  options: Pick<OptionsService, 'get' | 'bool' | 'providerUsable'>;
  secrets: Secrets;
  usersRepo: UsersRepo;
  /** Issues the token pair once the provider vouched for the user. */
  auth: Pick<AuthService, 'issue'>;
  events: ConfigEvents;
  /** Shares the start limit between replicas when REDIS_URL is set. */
  redis?: RedisHub;
  /** Refused OpenID Connect sign-ins are logged with their reason. */
  logger?: Pick<Logger, 'warn' | 'info'>;
}

/**
 * Sign-in with GitHub and Google: the redirect with state and PKCE, the return, finding or
 * creating the account, and linking or unlinking providers on an existing account.
 */
export class SignInProvidersService {
  private readonly clients: Record<OAuthProvider, ProviderClient>;
  // Every start writes a row before anyone is signed in: bounded per address, across replicas with Redis.
  private readonly starts: RateLimiterAbstract;

  constructor(
    private readonly deps: SignInProvidersDeps,
    private readonly repo: OAuthRepo,
  ) {
    this.starts = limiter({ keyPrefix: 'oauth_start', points: 60, duration: 60 }, deps.redis);
    this.clients = providerClients(deps.config.oauth);
  }

  async start(provider: OAuthProvider, opts: { origin: string; ip: string; bindUserId?: number }): Promise<StartedSignIn> {
    return this.startWith(this.builtIn(provider), opts);
  }

  /** The provider sent the browser back: check it, swap the code, and sign in (or link). */
  async finish(provider: OAuthProvider, query: OAuthCallbackQuery, browserNonce: string | undefined): Promise<OAuthCallbackResult> {
    return this.finishWith(this.builtIn(provider), query, browserNonce);
  }

  async startOidc(slug: string, opts: { origin: string; ip: string; bindUserId?: number }): Promise<StartedSignIn> {
    return this.startWith(this.oidcSource(slug), opts);
  }

  /** Every refusal of an OpenID Connect sign-in is logged with its reason, and never gives a session. */
  async finishOidc(slug: string, query: OAuthCallbackQuery, browserNonce: string | undefined, ip: string): Promise<OAuthCallbackResult> {
    try {
      return await this.finishWith(this.oidcSource(slug), query, browserNonce);
    } catch (err) {
      if (err instanceof AppError) {
        this.deps.logger?.warn({ provider: `oidc:${slug}`, reason: err.key, detail: err.params, ip }, 'OpenID Connect sign-in refused');
      }
      throw err;
    }
  }

  /** The enabled OpenID Connect providers as anyone may see them, with the return address to register. */
  publicOidcProviders(origin: string): OidcPublicProvider[] {
    const base = this.deps.options.get('ServerAddress') || origin;
    return this.oidcSettings()
      .filter((p) => p.enabled)
      .map((p) => ({ slug: p.slug, label: p.label, icon: p.icon, redirect_uri: `${base}/oauth/oidc/${p.slug}` }));
  }

  /** Providers from OIDC_PROVIDERS and from Preferences; a slug in both is the environment's. */
  oidcSettings(): OidcProviderSettings[] {
    const fromEnv = this.deps.config.oidcProviders ?? [];
    const stored = this.deps.options.get('OIDCProviders');
    let fromPreferences: OidcProviderSettings[] = [];
    if (stored) {
      const parsed = OidcProviderList.safeParse(JSON.parse(stored));
      if (parsed.success) fromPreferences = parsed.data;
    }
    const envSlugs = new Set(fromEnv.map((p) => p.slug));
    return [...fromEnv, ...fromPreferences.filter((p) => !envSlugs.has(p.slug))];
  }

  private async startWith(source: SignInSource, opts: { origin: string; ip: string; bindUserId?: number }): Promise<StartedSignIn> {
    await this.limitStarts(opts.ip);
    const state = randomToken(32);
    const verifier = createCodeVerifier();
    const browserNonce = randomToken(32);
    // The return address is the console route, which calls the API's callback with code and state.
    const redirectUri = `${this.deps.options.get('ServerAddress') || opts.origin}${source.returnPath}`;
    // Discovery first: a provider that cannot be discovered leaves no pending row behind.
    const url = await source.authorizeUrl({
      clientId: source.clientId,
      redirectUri,
      state,
      codeChallenge: codeChallengeOf(verifier),
      nonce: this.nonceOf(state),
    });
    const now = Date.now();
    await this.repo.purgeExpiredStates(now);
    await this.repo.insertState({
      state_hash: sha256(state),
      provider: source.key,
      code_verifier_enc: this.deps.secrets.encrypt(verifier),
      browser_hash: sha256(browserNonce),
      redirect_uri: redirectUri,
      bind_user_id: opts.bindUserId ?? null,
      created_at: now,
      expires_at: now + STATE_TTL_SECONDS * 1000,
    });
    return { url, browserNonce };
  }

  private async finishWith(
    source: SignInSource,
    query: OAuthCallbackQuery,
    browserNonce: string | undefined,
  ): Promise<OAuthCallbackResult> {
    if (query.error) {
      // The user said no, or the provider refused the request: that sign-in is over.
      if (query.state) await this.repo.takeState(sha256(query.state));
      throw badRequest('oauth.authorization_failed', { provider: source.label }, 'oauth_authorization_failed');
    }
    if (!query.code) throw badRequest('oauth.code_missing', undefined, 'oauth_code_missing');
    const pending = await this.takeState(source, query.state, browserNonce);
    const profile = await source.complete({
      clientId: source.clientId,
      clientSecret: source.clientSecret,
      code: query.code,
      redirectUri: pending.redirect_uri,
      codeVerifier: this.deps.secrets.decrypt(pending.code_verifier_enc),
      // The nonce is derived from the state (which is single-use), so nothing more is stored.
      nonce: this.nonceOf(query.state ?? ''),
    });
    if (pending.bind_user_id !== null) {
      const user = await this.bind(pending.bind_user_id, source, profile);
      await this.keepTokens(source, profile);
      return { ...(await this.deps.auth.issue(user)), mode: 'bind' };
    }
    const user = await this.signInOrRegister(source, profile);
    await this.keepTokens(source, profile);
    return { ...(await this.deps.auth.issue(user)), mode: 'login' };
  }

  /**
   * The provider's tokens are kept (encrypted) only for a provider that deprovisions at refresh, and
   * forgotten when it no longer does: Toolport holds no credential it has no use for.
   */
  private async keepTokens(source: SignInSource, profile: ProviderProfile): Promise<void> {
    if (!source.oidc) return;
    const tokens: ProviderTokens | undefined = source.oidc.deprovision === 'off' ? undefined : profile.tokens;
    await this.repo.setTokens(source.key, profile.id, { ...this.sealed(tokens), checked_at: 0 });
  }

  private sealed(tokens: ProviderTokens | undefined) {
    const enc = (v: string | undefined) => (v ? this.deps.secrets.encrypt(v) : '');
    return {
      refresh_token_enc: enc(tokens?.refresh),
      access_token_enc: enc(tokens?.access),
      access_expires_at: tokens?.accessExpiresAt ?? 0,
    };
  }

  /** The nonce sent with a state: an HMAC under the server's key, so only this server can tell it. */
  private nonceOf(state: string): string {
    return this.deps.secrets.signSession(`oidc-nonce:${state}`);
  }

  private builtIn(provider: OAuthProvider): SignInSource {
    const { clientId, clientSecret } = this.credentials(provider);
    const client = this.clients[provider];
    return {
      key: provider,
      label: oauthProviderLabels[provider],
      clientId,
      clientSecret,
      returnPath: `/oauth/${provider}`,
      authorizeUrl: async (req) => client.authorizeUrl(req),
      complete: async (req) => client.fetchProfile(await client.exchangeCode(req)),
    };
  }

  private readonly oidcClients = new Map<string, { json: string; client: OidcClient }>();

  /** An enabled provider by slug; its client (with its cached discovery and keys) lives as long as its settings. */
  private oidcSource(slug: string): SignInSource {
    const settings = this.oidcSettings().find((p) => p.slug === slug && p.enabled);
    if (!settings) throw notFound('oidc.unknown_provider', { slug: slug.slice(0, 40) });
    const client = this.clientFor(settings);
    return {
      key: `oidc:${slug}`,
      label: settings.label,
      clientId: settings.client_id,
      clientSecret: settings.client_secret,
      returnPath: `/oauth/oidc/${slug}`,
      authorizeUrl: (req) => client.authorizeUrl(req),
      complete: (req) => client.complete(req),
      oidc: settings,
    };
  }

  private clientFor(settings: OidcProviderSettings): OidcClient {
    const json = JSON.stringify(settings);
    let entry = this.oidcClients.get(settings.slug);
    if (!entry || entry.json !== json) {
      entry = { json, client: new OidcClient(settings) };
      this.oidcClients.set(settings.slug, entry);
    }
    return entry.client;
  }

  /** The client of an OpenID Connect provider, for tests that look at its key cache. */
  oidcClient(slug: string): OidcClient | undefined {
    return this.oidcClients.get(slug)?.client;
  }

  /** A provider key's name as people read it: GitHub, Google, a configured provider's label, or the key. */
  private labelOf(key: string): string {
    if (key === 'github' || key === 'google') return oauthProviderLabels[key];
    const slug = key.startsWith('oidc:') ? key.slice(5) : '';
    return this.oidcSettings().find((p) => p.slug === slug)?.label ?? key;
  }

  private async linked(userId: number): Promise<LinkedIdentity[]> {
    return (await this.repo.identitiesOfUser(userId)).map((r) => ({
      id: r.id,
      provider: r.provider,
      provider_label: this.labelOf(r.provider),
      subject: r.provider_user_id,
      email: r.email,
      created_at: r.created_at,
    }));
  }

  /** The account an administrator acts on, refused unless the role rule allows it (users/manage-rules.ts). */
  private async targetFor(actor: Principal, userId: number): Promise<UserRow> {
    const user = await this.deps.usersRepo.byId(userId);
    if (!user) throw notFound('user.not_found');
    if (!mayChangeSignIn(actor, user)) throw forbidden('user.role_too_high');
    return user;
  }

  /** The identities linked to a user: any administrator may read them, as the users list shows the bindings. */
  async identitiesOf(userId: number): Promise<LinkedIdentity[]> {
    if (!(await this.deps.usersRepo.byId(userId))) throw notFound('user.not_found');
    return this.linked(userId);
  }

  /**
   * An administrator links a provider identity to a user (decision 0063): a held sign-in's, or one typed in.
   * The provider must be GitHub, Google or a configured OpenID Connect provider; the identity belongs to nobody
   * else, and the user has no other identity of that provider. A held sign-in of the identity is used up.
   */
  async linkAs(actor: Principal, userId: number, req: LinkIdentityRequest): Promise<LinkedIdentity[]> {
    const user = await this.targetFor(actor, userId);
    const known =
      req.provider === 'github' || req.provider === 'google' || this.oidcSettings().some((p) => `oidc:${p.slug}` === req.provider);
    if (!known) throw badRequest('oauth.unknown_identity_provider', { provider: req.provider }, 'unknown_identity_provider');
    const label = this.labelOf(req.provider);
    const owner = await this.repo.identity(req.provider, req.subject);
    if (owner && owner.user_id !== user.id) {
      throw new AppError(409, 'oauth.identity_taken', { provider: label }, { code: 'oauth_identity_taken' });
    }
    if (!owner) {
      if (await this.repo.identityOf(user.id, req.provider)) {
        throw new AppError(409, 'oauth.user_already_bound', { provider: label, user: user.username }, { code: 'oauth_already_bound' });
      }
      const held = await this.repo.heldIdentity(req.provider, req.subject);
      try {
        await this.repo.addIdentity(user.id, {
          provider: req.provider,
          provider_user_id: req.subject,
          email: held?.email ?? '',
          created_at: Date.now(),
        });
      } catch (err) {
        // Another link of the same identity or provider won the race: say which.
        if (await this.repo.identity(req.provider, req.subject))
          throw new AppError(409, 'oauth.identity_taken', { provider: label }, { code: 'oauth_identity_taken' });
        throw err;
      }
      this.changed(user.id);
    }
    await this.repo.forgetHeld(req.provider, req.subject);
    return this.linked(user.id);
  }

  /** An administrator unlinks an identity from a user, unless it is the user's last way to sign in. */
  async unlinkAs(actor: Principal, userId: number, identityId: number): Promise<LinkedIdentity[]> {
    const user = await this.targetFor(actor, userId);
    const identity = await this.repo.identityById(user.id, identityId);
    if (!identity) throw notFound('oauth.identity_not_found');
    const label = this.labelOf(identity.provider);
    await this.repo.removeIdentity(user.id, identity.provider, (methods) => {
      const others = methods.providers.filter((p) => p !== identity.provider);
      if (!methods.hasPassword && others.length === 0) {
        throw badRequest('oauth.last_sign_in_method_of', { provider: label, user: user.username }, 'last_sign_in_method');
      }
    });
    this.changed(user.id);
    return this.linked(user.id);
  }

  /** Held provider sign-ins, the latest first. */
  async heldIdentities(): Promise<HeldIdentity[]> {
    const rows = await this.repo.heldIdentities(200);
    const names = new Map<number, string>();
    for (const id of new Set(rows.map((r) => r.user_id).filter((id): id is number => id !== null))) {
      const user = await this.deps.usersRepo.byId(id);
      if (user) names.set(id, user.username);
    }
    return rows.map((r) => ({
      id: r.id,
      provider: r.provider,
      provider_label: this.labelOf(r.provider),
      subject: r.provider_user_id,
      email: r.email,
      display_name: r.display_name,
      reason: HeldReason.catch('signup_closed').parse(r.reason),
      user_id: r.user_id,
      user_username: r.user_id === null ? '' : (names.get(r.user_id) ?? ''),
      attempts: r.attempts,
      created_at: r.created_at,
      last_seen_at: r.last_seen_at,
    }));
  }

  async dismissHeld(id: number): Promise<void> {
    if (!(await this.repo.dismissHeld(id))) throw notFound('oauth.held_not_found');
  }

  /**
   * At a console refresh: asks each OpenID Connect provider with deprovisioning on, of which the user holds
   * tokens, whether it still vouches for them (decision 0063). A "no" forgets the tokens and ends the session;
   * with `disable`, an account that signs in only through that provider is disabled too. An "unknown" (the
   * provider down, slow, answering 5xx) is logged and lets the refresh through: an outage locks nobody out.
   * Answers the provider that said no, or undefined.
   */
  async checkAtRefresh(user: UserRow): Promise<{ provider: string; disabled: boolean } | undefined> {
    const rows = await this.repo.identitiesWithTokens(user.id);
    for (const row of rows) {
      const slug = row.provider.slice('oidc:'.length);
      const settings = this.oidcSettings().find((p) => p.slug === slug && p.enabled);
      if (!settings || settings.deprovision === 'off') continue;
      if (!(await this.repo.claimCheck(row.id, Date.now(), RECHECK_INTERVAL_MS))) continue;
      const verdict = await this.clientFor(settings).recheck({
        clientId: settings.client_id,
        clientSecret: settings.client_secret,
        subject: row.provider_user_id,
        refreshToken: this.open(row.refresh_token_enc),
        accessToken: this.open(row.access_token_enc),
        accessExpiresAt: row.access_expires_at,
      });
      if (verdict.kind === 'yes') {
        await this.repo.setTokens(row.provider, row.provider_user_id, this.sealed(verdict.tokens));
        continue;
      }
      if (verdict.kind === 'unknown') {
        this.deps.logger?.warn(
          { provider: row.provider, userId: user.id, reason: verdict.reason },
          'OpenID Connect provider not asked at refresh: the session goes on',
        );
        continue;
      }
      await this.repo.setTokens(row.provider, row.provider_user_id, this.sealed(undefined));
      const disable =
        settings.deprovision === 'disable' && user.role < Role.SuperAdmin && (await this.repo.onlyThrough(user.id, row.provider));
      if (disable) {
        await this.deps.usersRepo.update(user.id, { status: UserStatus.Disabled, updated_at: Date.now() });
        this.changed(user.id);
      }
      this.deps.logger?.info(
        { provider: row.provider, userId: user.id, reason: verdict.reason, disabled: disable },
        disable ? 'account disabled: the provider no longer vouches for it' : 'session ended: the provider no longer vouches for it',
      );
      return { provider: settings.label, disabled: disable };
    }
    return undefined;
  }

  /** A stored secret, or '' when it cannot be read (a rotated key): then nothing is asked with it. */
  private open(enc: string): string {
    if (!enc) return '';
    try {
      return this.deps.secrets.decrypt(enc);
    } catch {
      return '';
    }
  }

  /** Unlinks a provider, unless it is the only way left to sign in. */
  async unbind(userId: number, provider: OAuthProvider): Promise<PublicUser> {
    const label = oauthProviderLabels[provider];
    if (!(await this.repo.identityOf(userId, provider))) throw notFound('oauth.not_bound', { provider: label });
    await this.repo.removeIdentity(userId, provider, (methods) => {
      const others = methods.providers.filter((p) => p !== provider);
      if (!methods.hasPassword && others.length === 0) {
        throw badRequest('oauth.last_sign_in_method', { provider: label }, 'last_sign_in_method');
      }
    });
    this.changed(userId);
    const row = await this.deps.usersRepo.byId(userId);
    if (!row) throw notFound('user.not_found');
    return toPublicUser(row, await this.deps.usersRepo.identitiesOf([userId]));
  }

  /** Switched on, with a client id and a secret; anything less cannot finish a sign-in. */
  private credentials(provider: OAuthProvider): { clientId: string; clientSecret: string } {
    const keys = credentialKeys[provider];
    const clientSecret = this.deps.options.get(keys.secret);
    if (!this.deps.options.providerUsable(provider) || !clientSecret) {
      throw badRequest('oauth.not_configured', { provider: oauthProviderLabels[provider] }, 'oauth_not_configured');
    }
    return { clientId: this.deps.options.get(keys.id), clientSecret };
  }

  /** The pending sign-in named by `state`, used up whatever happens next. */
  private async takeState(source: SignInSource, state: string | undefined, browserNonce: string | undefined): Promise<OAuthStateRow> {
    const label = source.label;
    const row = state ? await this.repo.takeState(sha256(state)) : undefined;
    if (!row || row.provider !== source.key) throw badRequest('oauth.state_invalid', { provider: label }, 'oauth_state_invalid');
    if (row.expires_at <= Date.now()) throw badRequest('oauth.state_expired', { provider: label }, 'oauth_state_expired');
    if (!browserNonce || sha256(browserNonce) !== row.browser_hash) {
      throw badRequest('oauth.state_other_browser', { provider: label }, 'oauth_state_other_browser');
    }
    return row;
  }

  /**
   * The account linked to this provider identity, or a new one when registration is open. For GitHub and
   * Google an existing account with the same email is never linked implicitly: the address may be
   * someone else's, and its owner links the provider from the profile instead. An OpenID Connect
   * provider is the company's directory: an address it says it verified links (decision 0048).
   */
  private async signInOrRegister(source: SignInSource, profile: ProviderProfile): Promise<UserRow> {
    const identity = await this.repo.identity(source.key, profile.id);
    if (identity) {
      const user = await this.deps.usersRepo.byId(identity.user_id);
      if (!user) throw notFound('user.not_found');
      assertEnabled(user);
      if (profile.email && profile.email !== identity.email) await this.repo.setIdentityEmail(identity.id, profile.email);
      return this.applyGrants(source, user, profile);
    }
    if (source.oidc) {
      const linked = await this.linkByEmail(source, profile);
      if (linked) return this.applyGrants(source, linked, profile);
      if (!source.oidc.allow_signup) {
        // Held for an admin, who may link it to an account (decision 0063).
        await this.hold(source, profile, 'signup_closed', null);
        throw new AppError(403, 'oidc.signup_closed', { provider: source.label }, { code: 'oidc_signup_closed' });
      }
      // Refused before the account exists: nobody is created only to be disabled.
      this.grantsOf(source.oidc, profile);
    } else if (!this.deps.options.bool('RegistrationEnabled')) {
      throw new AppError(403, 'oauth.registration_closed', { provider: source.label }, { code: 'registration_closed' });
    }
    const created = await this.register(source, profile);
    await this.repo.forgetHeld(source.key, profile.id);
    return this.applyGrants(source, created, profile);
  }

  /**
   * An existing account with the provider's verified address gets the identity; an unverified address
   * that belongs to an account is refused, never linked and never shadowed by a second account.
   */
  private async linkByEmail(source: SignInSource, profile: ProviderProfile): Promise<UserRow | undefined> {
    const label = source.label;
    if (!profile.email) {
      const owners = profile.unverifiedEmail ? await this.repo.usersByEmail(profile.unverifiedEmail) : [];
      if (owners.length > 0) {
        // Never linked by itself: held, with the account it names, for an admin to link (decision 0063).
        await this.hold(source, profile, 'email_unverified', owners.length === 1 ? (owners[0]?.id ?? null) : null);
        throw new AppError(
          403,
          'oidc.email_unverified',
          { provider: label, email: profile.unverifiedEmail ?? '' },
          { code: 'oidc_email_unverified' },
        );
      }
      return undefined;
    }
    const matches = await this.repo.usersByEmail(profile.email);
    if (matches.length === 0) return undefined;
    const user = matches[0];
    if (matches.length > 1 || !user) {
      await this.hold(source, profile, 'email_ambiguous', null);
      throw new AppError(409, 'oidc.email_ambiguous', { provider: label, email: profile.email }, { code: 'oidc_email_ambiguous' });
    }
    // The super admin is linked only by themselves, from the profile: a directory must not hand out root.
    if (user.role >= Role.SuperAdmin) {
      throw new AppError(403, 'oidc.super_admin_link', { provider: label }, { code: 'oidc_super_admin_link' });
    }
    assertEnabled(user);
    if (await this.repo.identityOf(user.id, source.key)) {
      throw new AppError(409, 'oauth.already_bound', { provider: label }, { code: 'oauth_already_bound' });
    }
    await this.repo.addIdentity(user.id, {
      provider: source.key,
      provider_user_id: profile.id,
      email: profile.email,
      created_at: Date.now(),
    });
    await this.repo.forgetHeld(source.key, profile.id);
    this.changed(user.id);
    return user;
  }

  private async hold(source: SignInSource, profile: ProviderProfile, reason: HeldReason, userId: number | null): Promise<void> {
    await this.repo.hold({
      provider: source.key,
      provider_user_id: profile.id,
      email: profile.email || profile.unverifiedEmail || '',
      display_name: profile.displayName,
      reason,
      user_id: userId,
    });
  }

  /**
   * What the provider's roles claim gives, by the role map: the highest role and the services and groups
   * whose access lists the user is on. Nothing to apply without a claim and a map. No matching value
   * (and no `*` entry) refuses the sign-in.
   */
  private grantsOf(settings: OidcProviderSettings, profile: ProviderProfile) {
    const map = settings.role_map;
    if (!settings.roles_claim || Object.keys(map).length === 0) return undefined;
    const entries: OidcGrant[] = [];
    for (const value of profile.groups ?? []) {
      const grant = Object.hasOwn(map, value) ? map[value] : undefined;
      if (grant !== undefined) entries.push(grant);
    }
    const everyone = Object.hasOwn(map, '*') ? map['*'] : undefined;
    if (entries.length === 0 && everyone === undefined) {
      throw new AppError(403, 'oidc.no_role', { provider: settings.label, claim: settings.roles_claim }, { code: 'oidc_no_role' });
    }
    if (everyone !== undefined) entries.push(everyone);
    const asObject = (g: OidcGrant) => (typeof g === 'string' ? { role: g } : g);
    let role: number = Role.User;
    const services = new Set<string>();
    const groups = new Set<string>();
    for (const g of entries.map(asObject)) {
      if (g.role) role = Math.max(role, roleNumber[g.role]);
      for (const name of g.services ?? []) services.add(name);
      for (const name of g.groups ?? []) groups.add(name);
    }
    const managedServices = new Set<string>();
    const managedGroups = new Set<string>();
    for (const g of Object.values(map).map(asObject)) {
      for (const name of g.services ?? []) managedServices.add(name);
      for (const name of g.groups ?? []) managedGroups.add(name);
    }
    return { role, services, groups, managedServices, managedGroups };
  }

  /**
   * Applies the role map at each sign-in: the role (the super admin's is never touched) and the access
   * lists the map names. A user the provider no longer grants anything is refused; when the account can
   * sign in only through this provider it is disabled as well.
   */
  private async applyGrants(source: SignInSource, user: UserRow, profile: ProviderProfile): Promise<UserRow> {
    if (!source.oidc) return user;
    let grants: ReturnType<SignInProvidersService['grantsOf']>;
    try {
      grants = this.grantsOf(source.oidc, profile);
    } catch (err) {
      if (err instanceof AppError && err.key === 'oidc.no_role' && (await this.repo.onlyThrough(user.id, source.key))) {
        await this.deps.usersRepo.update(user.id, { status: UserStatus.Disabled, updated_at: Date.now() });
        this.changed(user.id);
        this.deps.logger?.info({ provider: source.key, userId: user.id }, 'account disabled: the provider no longer grants it a role');
      }
      throw err;
    }
    if (!grants) return user;
    let current = user;
    if (user.role < Role.SuperAdmin && user.role !== grants.role) {
      await this.deps.usersRepo.update(user.id, { role: grants.role, updated_at: Date.now() });
      current = { ...user, role: grants.role };
      this.changed(user.id);
    }
    const managed = await this.repo.subjectIds([...grants.managedServices], [...grants.managedGroups]);
    const granted = new Set(
      managed.filter((m) => (m.subject === 'service' ? grants.services : grants.groups).has(m.name)).map((m) => `${m.subject}:${m.id}`),
    );
    if (await this.repo.syncAccess(user.id, managed, granted)) this.deps.events.emit({ type: 'access.changed' });
    return current;
  }

  private async register(source: SignInSource, profile: ProviderProfile): Promise<UserRow> {
    const base = usernameBase(profile.login, source.key.replace(/^oidc:/, ''));
    for (const username of usernameCandidates(base)) {
      if (await this.deps.usersRepo.byUsername(username)) continue;
      const key = issueApiKey(this.deps.secrets);
      const now = Date.now();
      try {
        return await this.repo.createUserWithIdentity(
          {
            username,
            display_name: profile.displayName.slice(0, 64),
            email: profile.email,
            password_hash: null,
            role: Role.User,
            status: UserStatus.Enabled,
            api_key_hash: key.hash,
            api_key_enc: key.encrypted,
            created_at: now,
            updated_at: now,
          },
          { provider: source.key, provider_user_id: profile.id, email: profile.email, created_at: now },
        );
      } catch (err) {
        // A unique index refused: the same person signing in twice at once, or the name just taken.
        const raced = await this.repo.identity(source.key, profile.id);
        if (raced) {
          const user = await this.deps.usersRepo.byId(raced.user_id);
          if (!user) throw notFound('user.not_found');
          return user;
        }
        if (!(await this.deps.usersRepo.byUsername(username))) throw err;
      }
    }
    throw conflict('user.username_taken', { username: base });
  }

  private async bind(userId: number, source: SignInSource, profile: ProviderProfile): Promise<UserRow> {
    const label = source.label;
    const provider = source.key;
    const user = await this.deps.usersRepo.byId(userId);
    if (!user) throw notFound('user.not_found');
    assertEnabled(user);
    const owner = await this.repo.identity(provider, profile.id);
    if (owner) {
      if (owner.user_id === userId) return user;
      throw new AppError(409, 'oauth.identity_taken', { provider: label }, { code: 'oauth_identity_taken' });
    }
    if (await this.repo.identityOf(userId, provider)) {
      throw new AppError(409, 'oauth.already_bound', { provider: label }, { code: 'oauth_already_bound' });
    }
    try {
      await this.repo.addIdentity(userId, { provider, provider_user_id: profile.id, email: profile.email, created_at: Date.now() });
    } catch (err) {
      // Lost a race against another link of the same identity or provider: say which one won.
      if (await this.repo.identity(provider, profile.id))
        throw new AppError(409, 'oauth.identity_taken', { provider: label }, { code: 'oauth_identity_taken' });
      if (await this.repo.identityOf(userId, provider))
        throw new AppError(409, 'oauth.already_bound', { provider: label }, { code: 'oauth_already_bound' });
      throw err;
    }
    await this.repo.forgetHeld(provider, profile.id);
    this.changed(userId);
    return user;
  }

  private async limitStarts(ip: string): Promise<void> {
    try {
      await this.starts.consume(addressKey(ip));
    } catch (res) {
      if (res instanceof RateLimiterRes) throw tooMany('auth.login_rate_limited', Math.ceil(res.msBeforeNext / 1000));
      throw res;
    }
  }

  private changed(userId: number): void {
    this.deps.events.emit({ type: 'user.changed', userId });
  }
}

function assertEnabled(user: UserRow): void {
  if (user.status !== UserStatus.Enabled) throw new AppError(403, 'auth.user_disabled', undefined, { code: 'user_disabled' });
}
