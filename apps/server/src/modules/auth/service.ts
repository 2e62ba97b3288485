import { type TokenPair, UserStatus } from '@toolport/contract';
import type { UserRow } from '../../db/schema.js';
import { ACCESS_TOKEN_TTL_SECONDS, signAccessToken } from '../../http/access-tokens.js';
import { AppError, unauthorized } from '../../http/errors.js';
import type { Metrics } from '../../infra/metrics.js';
import { burnPasswordCheck, verifyPassword } from '../../infra/passwords.js';
import { LoginLimiter } from '../../infra/rate-limit.js';
import type { RedisHub } from '../../infra/redis.js';
import type { Secrets } from '../../infra/secrets.js';
import { randomToken, sha256 } from '../../infra/secrets.js';
import { toPublicUser, type UsersRepo } from '../users/index.js';
import type { RefreshTokensRepo } from './repo.js';

const REFRESH_TOKEN_TTL_MS = 30 * 24 * 60 * 60 * 1000;

/** What password sign-in and the tokens read and write. */
export interface AuthDeps {
  refreshTokens: RefreshTokensRepo;
  usersRepo: Pick<UsersRepo, 'byUsername' | 'byId' | 'identitiesOf'>;
  secrets: Pick<Secrets, 'jwtKey'>;
  /** Shares the sign-in limits between replicas when REDIS_URL is set. */
  redis?: RedisHub;
  metrics: Pick<Metrics, 'abuseRefused'>;
  /**
   * Asks the sign-in providers, at each refresh, whether they still vouch for the user (decision 0063):
   * the provider that no longer does, and whether the account was disabled for it.
   */
  providerCheck?: (user: UserRow) => Promise<{ provider: string; disabled: boolean } | undefined>;
}

/** Password sign-in, token refresh with rotation, and sign-out. */
export class AuthService {
  readonly refreshTokens: RefreshTokensRepo;
  private readonly limiter: LoginLimiter;

  constructor(private readonly deps: AuthDeps) {
    this.refreshTokens = deps.refreshTokens;
    this.limiter = new LoginLimiter(deps.redis, (limit) => deps.metrics.abuseRefused(limit));
  }

  async login(username: string, password: string, ip: string): Promise<TokenPair> {
    await this.limiter.beforeAttempt(ip, username);
    const user = await this.deps.usersRepo.byUsername(username);
    if (!user) {
      await burnPasswordCheck(password);
      await this.limiter.failed(username);
      throw new AppError(401, 'auth.invalid_credentials', undefined, { code: 'invalid_credentials' });
    }
    if (!(await verifyPassword(user.password_hash, password))) {
      await this.limiter.failed(username);
      throw new AppError(401, 'auth.invalid_credentials', undefined, { code: 'invalid_credentials' });
    }
    if (user.status !== UserStatus.Enabled) throw new AppError(403, 'auth.user_disabled', undefined, { code: 'user_disabled' });
    await this.limiter.succeeded(username);
    return this.issue(user);
  }

  /** Signs a user in after the caller proved who they are (password or a provider). */
  async issue(user: UserRow): Promise<TokenPair> {
    const refresh = randomToken(32);
    await this.refreshTokens.insert(user.id, sha256(refresh), Date.now() + REFRESH_TOKEN_TTL_MS);
    const identities = await this.deps.usersRepo.identitiesOf([user.id]);
    return {
      access_token: await signAccessToken(this.deps.secrets.jwtKey, { userId: user.id, authVersion: user.auth_version }),
      refresh_token: refresh,
      expires_in: ACCESS_TOKEN_TTL_SECONDS,
      user: toPublicUser(user, identities),
    };
  }

  /**
   * A new token pair for a valid refresh token, which is used up. Presenting a token that was
   * already used means it leaked: every refresh token of that user is revoked.
   */
  async refresh(token: string): Promise<TokenPair> {
    const row = await this.refreshTokens.byHash(sha256(token));
    if (!row) throw unauthorized('auth.refresh_invalid');
    if (row.revoked_at !== null) {
      await this.refreshTokens.revokeAllOf(row.user_id);
      throw unauthorized('auth.refresh_invalid');
    }
    if (row.expires_at <= Date.now()) throw unauthorized('auth.refresh_invalid');
    const user = await this.deps.usersRepo.byId(row.user_id);
    if (!user) throw unauthorized('auth.refresh_invalid');
    if (user.status !== UserStatus.Enabled) throw new AppError(401, 'auth.user_disabled', undefined, { code: 'user_disabled' });
    if (!(await this.refreshTokens.revoke(row.id))) {
      await this.refreshTokens.revokeAllOf(row.user_id);
      throw unauthorized('auth.refresh_invalid');
    }
    const gone = await this.deps.providerCheck?.(user);
    if (gone) {
      // The provider no longer vouches for the person: every session of theirs ends, not only this one.
      await this.refreshTokens.revokeAllOf(user.id);
      if (gone.disabled) throw new AppError(401, 'auth.user_disabled', undefined, { code: 'user_disabled' });
      throw new AppError(401, 'auth.provider_session_ended', { provider: gone.provider }, { code: 'provider_session_ended' });
    }
    return this.issue(user);
  }

  /** Revokes the given refresh token of the caller, or all of them when none is given. */
  async logout(userId: number, token: string | undefined): Promise<void> {
    if (!token) return this.refreshTokens.revokeAllOf(userId);
    const row = await this.refreshTokens.byHash(sha256(token));
    if (row && row.user_id === userId) await this.refreshTokens.revoke(row.id);
  }
}
