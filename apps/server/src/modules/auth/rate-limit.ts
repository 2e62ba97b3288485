import { type RateLimiterAbstract, RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { tooMany } from '../../http/errors.js';
import type { RedisHub } from '../../infra/redis.js';

export interface Limit {
  keyPrefix: string;
  points: number;
  duration: number;
}

const PER_IP: Limit = { keyPrefix: 'login_ip', points: 30, duration: 60 };
const FAILURES_PER_USER: Limit = { keyPrefix: 'login_user', points: 10, duration: 15 * 60 };

/**
 * One replica counts in memory; several (REDIS_URL) count in Redis, so the limit holds however the
 * load balancer spreads the attempts. While Redis is away each replica counts in memory again (the
 * insurance limiter) rather than refusing or waving through every sign-in.
 */
export function limiter(limit: Limit, redis: RedisHub | undefined): RateLimiterAbstract {
  if (!redis) return new RateLimiterMemory(limit);
  return new RateLimiterRedis({
    ...limit,
    keyPrefix: redis.key(limit.keyPrefix),
    storeClient: redis.client,
    useRedisPackage: true,
    rejectIfRedisNotReady: true,
    insuranceLimiter: new RateLimiterMemory(limit),
  });
}

/**
 * Sign-in throttling: every attempt counts per IP; failures count per username, so guessing one
 * account's password is slow from any number of addresses, and one address cannot spray many.
 */
export class LoginLimiter {
  private readonly perIp: RateLimiterAbstract;
  private readonly failuresPerUser: RateLimiterAbstract;

  constructor(redis?: RedisHub) {
    this.perIp = limiter(PER_IP, redis);
    this.failuresPerUser = limiter(FAILURES_PER_USER, redis);
  }

  async beforeAttempt(ip: string, username: string): Promise<void> {
    await this.consume(this.perIp, ip);
    const state = await this.failuresPerUser.get(username.toLowerCase());
    if (state && state.remainingPoints <= 0) throw tooMany('auth.login_rate_limited', Math.ceil(state.msBeforeNext / 1000));
  }

  async failed(username: string): Promise<void> {
    await this.failuresPerUser.penalty(username.toLowerCase(), 1).catch(() => undefined);
  }

  async succeeded(username: string): Promise<void> {
    await this.failuresPerUser.delete(username.toLowerCase());
  }

  private async consume(limiter: RateLimiterAbstract, key: string): Promise<void> {
    try {
      await limiter.consume(key);
    } catch (res) {
      if (res instanceof RateLimiterRes) throw tooMany('auth.login_rate_limited', Math.ceil(res.msBeforeNext / 1000));
      throw res;
    }
  }
}
