import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import { BurstyRateLimiter, RateLimiterRes } from 'rate-limiter-flexible';
import type { AbuseLimits } from '../../config.js';
import { type MessageKey, type MessageParams, translate } from '../../i18n/index.js';
import type { AbuseLimit, Metrics } from '../../infra/metrics.js';
import { addressKey, FailureLimiter, limiter } from '../../infra/rate-limit.js';
import type { RedisHub } from '../../infra/redis.js';
import { type BufferBound, localeOf } from './http-io.js';
import { type ParsedPost, readMessages } from './messages.js';
import { type ProxyFailure, RpcCode } from './rpc-errors.js';

/** A refusal of one limit for one subject (user, address) is logged at most this often. */
const LOG_EVERY_MS = 60_000;
const MAX_LOGGED = 10_000;

const text = (req: IncomingMessage, key: MessageKey, params: MessageParams): string => translate(localeOf(req), key, params);

const tooMany = (message: string, seconds: number): ProxyFailure => ({
  status: 429,
  code: RpcCode.ServerError,
  message,
  headers: { 'retry-after': String(seconds) },
});

export interface AbuseDeps {
  metrics: Pick<Metrics, 'abuseRefused'>;
  logger: Logger;
  redis?: RedisHub;
}

/**
 * The proxy's abuse limits (docs/operations.md, "Abuse limits"), in one place: counted calls in
 * flight per user and service, new sessions per user, refused authentications per client address,
 * the bound on what a stream may hold for a client that does not read, and the deadline of a POST
 * body. Every refusal is counted (`toolport_abuse_refusals_total`) and logged, at most once a minute
 * per limit and subject.
 */
export class AbuseGuard {
  /** This guard's own copy: tests change a limit on a live gateway. */
  readonly limits: AbuseLimits;
  private readonly inFlight = new Map<string, number>();
  /** Calls waiting for a slot, per user and service. */
  private readonly queues = new Map<string, FairQueue>();
  private readonly newSessions: Pick<RateLimiterAbstract, 'consume'>;
  private readonly authFailures: FailureLimiter;
  private readonly logged = new Map<string, number>();

  constructor(
    limits: AbuseLimits,
    private readonly deps: AbuseDeps,
  ) {
    this.limits = { ...limits };
    const steady = limiter({ keyPrefix: 'proxy_new_sessions', points: limits.newSessionsPerMinute, duration: 60 }, deps.redis);
    // Clients that open a session per invocation (the Inspector CLI, mcp-remote's two per start) come in
    // bursts: a second allowance, refilled over ten minutes, takes what the steady rate refuses.
    this.newSessions =
      limits.newSessionsBurst > 0
        ? new BurstyRateLimiter(
            steady,
            limiter({ keyPrefix: 'proxy_new_sessions_burst', points: limits.newSessionsBurst, duration: 600 }, deps.redis),
          )
        : steady;
    this.authFailures = new FailureLimiter({ keyPrefix: 'proxy_auth_ip', points: limits.authFailuresPerMinute, duration: 60 }, deps.redis);
  }

  /** Hears the addresses other replicas block (with REDIS_URL). */
  start(): Promise<void> {
    return this.authFailures.start();
  }

  /** Counts and logs a refusal. */
  refused(limit: AbuseLimit, subject: string, details: Record<string, unknown> = {}): void {
    this.deps.metrics.abuseRefused(limit);
    const key = `${limit} ${subject}`;
    const now = Date.now();
    const last = this.logged.get(key);
    if (last !== undefined && now - last < LOG_EVERY_MS) return;
    if (this.logged.size >= MAX_LOGGED) this.logged.clear();
    this.logged.set(key, now);
    this.deps.logger.warn({ limit, ...details }, `abuse limit: ${limit}`);
  }

  /**
   * A slot for one counted call of `userId` on `serviceId`, or undefined when all are taken (this
   * replica's count). The returned function gives it back; calling it again does nothing.
   */
  takeCall(userId: number, serviceId: number): (() => void) | undefined {
    const key = `${userId}:${serviceId}`;
    const now = this.inFlight.get(key) ?? 0;
    if (now >= this.limits.callsInFlight) return undefined;
    this.inFlight.set(key, now + 1);
    return this.slot(key);
  }

  /**
   * A slot as takeCall gives it, or, when all are taken, a place in the short queue of `userId` on
   * `serviceId`: slots freed go to the waiting sessions in turn (one session's burst does not starve
   * another's call), each waits at most PROXY_CALL_QUEUE_MS, and at most PROXY_CALL_QUEUE_LENGTH wait.
   * Undefined when the queue is full or the wait ran out: the call is then refused.
   */
  async waitForCall(userId: number, serviceId: number, sessionId: string): Promise<(() => void) | undefined> {
    const now = this.takeCall(userId, serviceId);
    if (now || this.limits.callQueueMs <= 0) return now;
    const key = `${userId}:${serviceId}`;
    let queue = this.queues.get(key);
    if (!queue) {
      queue = new FairQueue();
      this.queues.set(key, queue);
    }
    if (queue.size >= this.limits.callQueueLength) return undefined;
    const waiting = queue;
    return new Promise((resolve) => {
      const waiter: Waiter = {
        grant: (release) => {
          clearTimeout(timer);
          resolve(release);
        },
      };
      const timer = setTimeout(() => {
        waiting.remove(sessionId, waiter);
        if (waiting.size === 0 && this.queues.get(key) === waiting) this.queues.delete(key);
        resolve(undefined);
      }, this.limits.callQueueMs);
      waiting.push(sessionId, waiter);
    });
  }

  /** Gives a slot back: straight to the next waiting call when there is one, else to the count. */
  private slot(key: string): () => void {
    let given = false;
    return () => {
      if (given) return;
      given = true;
      const queue = this.queues.get(key);
      const next = queue?.shift();
      if (queue && queue.size === 0) this.queues.delete(key);
      if (next) {
        next.grant(this.slot(key));
        return;
      }
      const left = (this.inFlight.get(key) ?? 1) - 1;
      if (left <= 0) this.inFlight.delete(key);
      else this.inFlight.set(key, left);
    };
  }

  /** The JSON-RPC error of a counted call refused for the calls in flight (and counts it). */
  tooManyCalls(locale: ReturnType<typeof localeOf>, userId: number, service: string): string {
    this.refused('calls_in_flight', `${userId}:${service}`, { userId, service, max: this.limits.callsInFlight });
    return translate(locale, 'proxy.too_many_calls', { limit: this.limits.callsInFlight });
  }

  /** Counts a new session of `userId`; the failure to answer with when it opens too many a minute. */
  async newSession(req: IncomingMessage, userId: number, service: string): Promise<ProxyFailure | undefined> {
    try {
      await this.newSessions.consume(String(userId));
      return undefined;
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) throw err;
      const seconds = Math.max(1, Math.ceil(err.msBeforeNext / 1000));
      this.refused('new_sessions', String(userId), { userId, service, perMinute: this.limits.newSessionsPerMinute });
      return tooMany(text(req, 'proxy.too_many_new_sessions', { limit: this.limits.newSessionsPerMinute, seconds }), seconds);
    }
  }

  /** 429 without looking at the request when its address had too many refused authentications. */
  blockedAddress(req: IncomingMessage, ip: string): ProxyFailure | undefined {
    const seconds = this.authFailures.retryAfter(addressKey(ip));
    if (seconds === undefined) return undefined;
    this.refused('proxy_auth_ip', ip, { ip, perMinute: this.limits.authFailuresPerMinute });
    return tooMany(text(req, 'proxy.too_many_failures', { seconds }), seconds);
  }

  /** A refused authentication (401, 403, 404) from `ip`. */
  async authFailed(ip: string): Promise<void> {
    await this.authFailures.failed(addressKey(ip));
  }

  /** The body of a proxy POST, within half of HTTP_REQUEST_TIMEOUT_MS (a trickled body is cut off). */
  async readMessages(req: IncomingMessage, ip: string): Promise<ParsedPost | ProxyFailure> {
    const deadlineMs = Math.floor(this.limits.requestTimeoutMs / 2);
    const post = await readMessages(req, deadlineMs);
    if ('status' in post && post.status === 408) this.refused('body_timeout', ip, { ip, deadlineMs });
    return post;
  }

  /** The bound of one stream or streamed reply; past it the stream is dropped and `onDrop` called. */
  streamBound(details: Record<string, unknown>, onDrop?: () => void): BufferBound {
    return {
      maxBytes: this.limits.streamBufferBytes,
      overflow: (buffered) => {
        this.refused('slow_reader', String(details.userId ?? ''), { ...details, buffered, max: this.limits.streamBufferBytes });
        onDrop?.();
      },
    };
  }
}

interface Waiter {
  grant(release: () => void): void;
}

/** Waiting calls of one user on one service, served one session at a time in turn, each session's in order. */
class FairQueue {
  private readonly bySession = new Map<string, Waiter[]>();
  size = 0;

  push(sessionId: string, waiter: Waiter): void {
    const list = this.bySession.get(sessionId);
    if (list) list.push(waiter);
    else this.bySession.set(sessionId, [waiter]);
    this.size += 1;
  }

  shift(): Waiter | undefined {
    for (const [sessionId, list] of this.bySession) {
      const waiter = list.shift();
      // The session goes to the back of the turn order (or leaves it when it has nobody waiting).
      this.bySession.delete(sessionId);
      if (list.length > 0) this.bySession.set(sessionId, list);
      if (waiter) {
        this.size -= 1;
        return waiter;
      }
    }
    return undefined;
  }

  remove(sessionId: string, waiter: Waiter): void {
    const list = this.bySession.get(sessionId);
    const at = list?.indexOf(waiter) ?? -1;
    if (!list || at < 0) return;
    list.splice(at, 1);
    this.size -= 1;
    if (list.length === 0) this.bySession.delete(sessionId);
  }
}
