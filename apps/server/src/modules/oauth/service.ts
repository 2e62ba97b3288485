import {
  type OAuthCallbackQuery,
  type OAuthCallbackResult,
  type OAuthProvider,
  oauthProviderLabels,
  type PublicUser,
  Role,
  UserStatus,
} from '@toolport/contract';
import { type RateLimiterAbstract, RateLimiterRes } from 'rate-limiter-flexible';
import type { Config } from '../../config.js';
import type { UserRow } from '../../db/schema.js';
import { AppError, badRequest, conflict, notFound, tooMany } from '../../http/errors.js';
import type { ConfigEvents } from '../../infra/events.js';
import { addressKey, limiter } from '../../infra/rate-limit.js';
import type { RedisHub } from '../../infra/redis.js';
import { randomToken, type Secrets, sha256 } from '../../infra/secrets.js';
import type { AuthService } from '../auth/index.js';
import type { OptionsService } from '../options/index.js';
import { issueApiKey, toPublicUser, type UsersRepo } from '../users/index.js';
import { codeChallengeOf, createCodeVerifier } from './pkce.js';
import type { ProviderClient, ProviderProfile } from './provider-client.js';
import { providerClients } from './providers.js';
import type { OAuthRepo, OAuthStateRow } from './repo.js';
import { usernameBase, usernameCandidates } from './usernames.js';

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

/** What provider sign-in reads and writes besides its own table. */
export interface OAuthDeps {
  config: Pick<Config, 'oauth'>;
  options: Pick<OptionsService, 'get' | 'bool' | 'providerUsable'>;
  secrets: Secrets;
  usersRepo: UsersRepo;
  /** Issues the token pair once the provider vouched for the user. */
  auth: Pick<AuthService, 'issue'>;
  events: ConfigEvents;
  /** Shares the start limit between replicas when REDIS_URL is set. */
  redis?: RedisHub;
}

/**
 * Sign-in with GitHub and Google: the redirect with state and PKCE, the return, finding or
 * creating the account, and linking or unlinking providers on an existing account.
 */
export class OAuthService {
  private readonly clients: Record<OAuthProvider, ProviderClient>;
  // Every start writes a row before anyone is signed in: bounded per address, across replicas with Redis.
  private readonly starts: RateLimiterAbstract;

  constructor(
    private readonly deps: OAuthDeps,
    private readonly repo: OAuthRepo,
  ) {
    this.starts = limiter({ keyPrefix: 'oauth_start', points: 60, duration: 60 }, deps.redis);
    this.clients = providerClients(deps.config.oauth);
  }

  async start(provider: OAuthProvider, opts: { origin: string; ip: string; bindUserId?: number }): Promise<StartedSignIn> {
    const { clientId } = this.credentials(provider);
    await this.limitStarts(opts.ip);
    const state = randomToken(32);
    const verifier = createCodeVerifier();
    const browserNonce = randomToken(32);
    // The return address is the console route, which calls the API's callback with code and state.
    const redirectUri = `${this.deps.options.get('ServerAddress') || opts.origin}/oauth/${provider}`;
    const now = Date.now();
    await this.repo.purgeExpiredStates(now);
    await this.repo.insertState({
      state_hash: sha256(state),
      provider,
      code_verifier_enc: this.deps.secrets.encrypt(verifier),
      browser_hash: sha256(browserNonce),
      redirect_uri: redirectUri,
      bind_user_id: opts.bindUserId ?? null,
      created_at: now,
      expires_at: now + STATE_TTL_SECONDS * 1000,
    });
    const url = this.clients[provider].authorizeUrl({ clientId, redirectUri, state, codeChallenge: codeChallengeOf(verifier) });
    return { url, browserNonce };
  }

  /** The provider sent the browser back: check it, swap the code, and sign in (or link). */
  async finish(provider: OAuthProvider, query: OAuthCallbackQuery, browserNonce: string | undefined): Promise<OAuthCallbackResult> {
    const credentials = this.credentials(provider);
    const label = oauthProviderLabels[provider];
    if (query.error) {
      // The user said no, or the provider refused the request: that sign-in is over.
      if (query.state) await this.repo.takeState(sha256(query.state));
      throw badRequest('oauth.authorization_failed', { provider: label }, 'oauth_authorization_failed');
    }
    if (!query.code) throw badRequest('oauth.code_missing', undefined, 'oauth_code_missing');
    const pending = await this.takeState(provider, query.state, browserNonce);
    const client = this.clients[provider];
    const accessToken = await client.exchangeCode({
      ...credentials,
      code: query.code,
      redirectUri: pending.redirect_uri,
      codeVerifier: this.deps.secrets.decrypt(pending.code_verifier_enc),
    });
    const profile = await client.fetchProfile(accessToken);
    if (pending.bind_user_id !== null) {
      const user = await this.bind(pending.bind_user_id, provider, profile);
      return { ...(await this.deps.auth.issue(user)), mode: 'bind' };
    }
    const user = await this.signInOrRegister(provider, profile);
    return { ...(await this.deps.auth.issue(user)), mode: 'login' };
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
  private async takeState(provider: OAuthProvider, state: string | undefined, browserNonce: string | undefined): Promise<OAuthStateRow> {
    const label = oauthProviderLabels[provider];
    const row = state ? await this.repo.takeState(sha256(state)) : undefined;
    if (!row || row.provider !== provider) throw badRequest('oauth.state_invalid', { provider: label }, 'oauth_state_invalid');
    if (row.expires_at <= Date.now()) throw badRequest('oauth.state_expired', { provider: label }, 'oauth_state_expired');
    if (!browserNonce || sha256(browserNonce) !== row.browser_hash) {
      throw badRequest('oauth.state_other_browser', { provider: label }, 'oauth_state_other_browser');
    }
    return row;
  }

  /**
   * The account linked to this provider identity, or a new one when registration is open. An
   * existing password account with the same email is never linked implicitly: the address may be
   * someone else's, and its owner links the provider from the profile instead.
   */
  private async signInOrRegister(provider: OAuthProvider, profile: ProviderProfile): Promise<UserRow> {
    const identity = await this.repo.identity(provider, profile.id);
    if (identity) {
      const user = await this.deps.usersRepo.byId(identity.user_id);
      if (!user) throw notFound('user.not_found');
      assertEnabled(user);
      if (profile.email && profile.email !== identity.email) await this.repo.setIdentityEmail(identity.id, profile.email);
      return user;
    }
    if (!this.deps.options.bool('RegistrationEnabled')) {
      throw new AppError(403, 'oauth.registration_closed', { provider: oauthProviderLabels[provider] }, { code: 'registration_closed' });
    }
    return this.register(provider, profile);
  }

  private async register(provider: OAuthProvider, profile: ProviderProfile): Promise<UserRow> {
    for (const username of usernameCandidates(usernameBase(profile.login, provider))) {
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
          { provider, provider_user_id: profile.id, email: profile.email, created_at: now },
        );
      } catch (err) {
        // A unique index refused: the same person signing in twice at once, or the name just taken.
        const raced = await this.repo.identity(provider, profile.id);
        if (raced) return this.signInOrRegister(provider, profile);
        if (!(await this.deps.usersRepo.byUsername(username))) throw err;
      }
    }
    throw conflict('user.username_taken', { username: usernameBase(profile.login, provider) });
  }

  private async bind(userId: number, provider: OAuthProvider, profile: ProviderProfile): Promise<UserRow> {
    const label = oauthProviderLabels[provider];
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
