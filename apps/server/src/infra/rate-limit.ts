import { isIP } from 'node:net';
import { type RateLimiterAbstract, RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { tooMany } from '../http/errors.js';
import type { AbuseLimit } from './metrics.js';
import type { RedisHub } from './redis.js';

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
 * What per-address limits count: an IPv4 address (also when written IPv4-mapped, `::ffff:a.b.c.d`),
 * or an IPv6 address's /64 network — one subscriber, one LAN or one host usually holds a whole /64,
 * and counting its 2^64 addresses one by one would let it choose a fresh one per attempt.
 */
export function addressKey(ip: string): string {
  if (isIP(ip) !== 6) return ip;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped?.[1]) return mapped[1];
  const [head = '', tail = ''] = ip.split('::');
  const left = head ? head.split(':') : [];
  const right = ip.includes('::') ? (tail ? tail.split(':') : []) : [];
  // An embedded IPv4 tail (…:1.2.3.4) takes two groups; it never reaches the first four.
  const width = (groups: string[]) => groups.reduce((n, g) => n + (g.includes('.') ? 2 : 1), 0);
  const groups = ip.includes('::') ? [...left, ...Array(8 - width(left) - width(right)).fill('0'), ...right] : left;
  return `${groups
    .slice(0, 4)
    .map((g) => Number.parseInt(g || '0', 16).toString(16))
    .join(':')}::/64`;
}

/** Seconds to wait, rounded up, never 0 (a Retry-After of 0 invites an immediate retry). */
const secondsOf = (ms: number): number => Math.max(1, Math.ceil(ms / 1000));

/**
 * A plain per-key allowance (`limit.points` a `limit.duration`): resolves undefined while `key` may go
 * on, else the seconds it has to wait. A failing store (Redis away without its insurance) lets the
 * request through rather than refusing everyone, and is told to `storeFailed`.
 */
export function admission(
  limit: Limit,
  redis: RedisHub | undefined,
  storeFailed: (err: unknown) => void,
): (key: string) => Promise<number | undefined> {
  const counter = limiter(limit, redis);
  return (key) =>
    counter.consume(key).then(
      () => undefined,
      (res: unknown) => {
        if (res instanceof RateLimiterRes) return secondsOf(res.msBeforeNext);
        storeFailed(res);
        return undefined;
      },
    );
}

/**
 * Sign-in throttling: every attempt counts per IP; failures count per username, so guessing one
 * account's password is slow from any number of addresses, and one address cannot spray many.
 */
export class LoginLimiter {
  private readonly perIp: RateLimiterAbstract;
  private readonly failuresPerUser: RateLimiterAbstract;

  constructor(
    redis?: RedisHub,
    private readonly refused: (limit: AbuseLimit) => void = () => undefined,
  ) {
    this.perIp = limiter(PER_IP, redis);
    this.failuresPerUser = limiter(FAILURES_PER_USER, redis);
  }

  async beforeAttempt(ip: string, username: string): Promise<void> {
    await this.consume(this.perIp, addressKey(ip));
    const state = await this.failuresPerUser.get(username.toLowerCase());
    if (state && state.remainingPoints <= 0) {
      this.refused('login_user');
      throw tooMany('auth.login_rate_limited', secondsOf(state.msBeforeNext));
    }
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
      if (res instanceof RateLimiterRes) {
        this.refused('login_ip');
        throw tooMany('auth.login_rate_limited', secondsOf(res.msBeforeNext));
      }
      throw res;
    }
  }
}

/** Keys refused at once held in memory at most; beyond it the expired ones, then the oldest, go. */
const MAX_BLOCKED = 100_000;

/**
 * Failures per key (a client address) within a window: once a key has had `points` of them, it is
 * refused outright until the window ends, without looking at what it sent. The failures are counted
 * like the sign-in limits (`limiter`: in Redis across replicas, in memory otherwise); the refusal
 * itself is decided from memory so that requests that pass cost no Redis round trip, and a replica
 * that blocks a key tells the others over Redis at once. A replica that missed the message blocks the
 * key on its next failure from it.
 */
export class FailureLimiter {
  private readonly failures: RateLimiterAbstract;
  /** Key → when its refusal ends (ms since the epoch). */
  private readonly blocked = new Map<string, number>();
  private readonly channel: string | undefined;

  constructor(
    private readonly limit: Limit,
    private readonly redis?: RedisHub,
  ) {
    this.failures = limiter(limit, redis);
    this.channel = redis?.key(`${limit.keyPrefix}:blocked`);
  }

  /** Hears the blocks other replicas decide (with REDIS_URL). */
  async start(): Promise<void> {
    if (!this.redis || !this.channel) return;
    await this.redis.subscribe(this.channel, (message) => {
      const m = message as { key?: unknown; ms?: unknown };
      if (typeof m.key === 'string' && typeof m.ms === 'number' && m.ms > 0) this.block(m.key, Math.min(m.ms, this.limit.duration * 1000));
    });
  }

  /** The seconds `key` has to wait when it is refused now; undefined when it may go on. */
  retryAfter(key: string, now = Date.now()): number | undefined {
    const until = this.blocked.get(key);
    if (until === undefined) return undefined;
    if (until <= now) {
      this.blocked.delete(key);
      return undefined;
    }
    return secondsOf(until - now);
  }

  /** Counts one failure of `key`; returns the seconds to wait when this one used up its allowance. */
  async failed(key: string): Promise<number | undefined> {
    let res: RateLimiterRes;
    try {
      res = await this.failures.consume(key);
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) return undefined;
      res = err;
    }
    if (res.consumedPoints < this.limit.points) return undefined;
    this.block(key, res.msBeforeNext);
    if (this.channel) void this.redis?.publish(this.channel, { key, ms: res.msBeforeNext });
    return secondsOf(res.msBeforeNext);
  }

  private block(key: string, ms: number): void {
    const now = Date.now();
    if (this.blocked.size >= MAX_BLOCKED) {
      for (const [k, until] of this.blocked) if (until <= now) this.blocked.delete(k);
      for (const k of this.blocked.keys()) {
        if (this.blocked.size < MAX_BLOCKED) break;
        this.blocked.delete(k);
      }
    }
    this.blocked.set(key, Math.max(this.blocked.get(key) ?? 0, now + ms));
  }
}
