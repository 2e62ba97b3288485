import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Logger } from 'pino';
import { createClient } from 'redis';

export type RedisClient = ReturnType<typeof createClient>;

export interface RedisHubOptions {
  url: string;
  /** Prefix of every key and channel: replicas of one deployment share it (REDIS_PREFIX). */
  namespace: string;
  logger: Logger;
  /**
   * Signs every message this replica publishes, and checks every one it receives: replicas of one
   * deployment derive it from their shared SECRET_KEY (`Secrets.replicaKey`).
   */
  signingKey: Buffer;
}

/** A signed message older than this (or from a clock this far ahead) is refused, and an exact replay within it. */
const MESSAGE_MAX_AGE_MS = 60_000;

/** How long close() waits for a graceful QUIT before dropping the connections. */
const CLOSE_MS = 2000;

/**
 * This replica's connections to the Redis all replicas share (docs/architecture.md §7): one client for
 * commands and one subscriber (`client.duplicate()`, as a subscribed connection can run nothing
 * else). Both fail fast while Redis is away (no offline queue: callers fall back to what they do
 * without Redis) and reconnect with backoff; node-redis subscribes again by itself. An outage is
 * logged once when it starts and once when it ends, and `onReconnect` listeners then catch up on
 * what they may have missed. A Redis that cannot be reached at start stops the start.
 */
export class RedisHub {
  /** Identifies this process among the replicas: the origin of what it publishes, the address of its channel. */
  readonly replicaId = randomBytes(9).toString('base64url');
  readonly client: RedisClient;
  private readonly subscriber: RedisClient;
  private everConnected = false;
  private closed = false;
  /** When the subscriber lost its connection; undefined while it is connected. */
  private downSince: number | undefined;
  private readonly reconnectListeners = new Set<(downSince: number) => void>();
  private lastPublishWarning = 0;
  /** Signatures of the messages received within MESSAGE_MAX_AGE_MS, with when each may be forgotten. */
  private readonly seen = new Map<string, number>();
  private readonly listeners = new Map<string, Set<(message: unknown) => void>>();
  private lastRefusalWarning = 0;

  private constructor(private readonly opts: RedisHubOptions) {
    this.client = createClient({
      url: opts.url,
      disableOfflineQueue: true,
      socket: {
        connectTimeout: 5000,
        reconnectStrategy: (retries: number, cause: Error) =>
          this.closed ? false : this.everConnected ? Math.min(100 * 2 ** retries, 5000) : cause,
      },
    });
    this.subscriber = this.client.duplicate();
    // Errors surface on the commands themselves; an unhandled 'error' event would end the process.
    this.client.on('error', () => undefined);
    this.subscriber.on('error', (err: Error) => this.lost(err));
    this.subscriber.on('ready', () => this.restored());
  }

  static async connect(opts: RedisHubOptions): Promise<RedisHub> {
    const hub = new RedisHub(opts);
    try {
      await hub.client.connect();
      await hub.subscriber.connect();
    } catch (err) {
      hub.closed = true;
      hub.client.destroy();
      hub.subscriber.destroy();
      throw err;
    }
    hub.everConnected = true;
    return hub;
  }

  get namespace(): string {
    return this.opts.namespace;
  }

  /** A key or channel name in this deployment's namespace. */
  key(name: string): string {
    return this.opts.namespace + name;
  }

  /** The channel other replicas reach this one on (or `replicaId`'s, when given). */
  replicaChannel(replicaId = this.replicaId): string {
    return this.key(`replica:${replicaId}`);
  }

  /**
   * Publishes a JSON message; resolves to the number of subscribers that received it, or -1 when
   * Redis could not be reached (logged at most once a minute, never thrown).
   */
  async publish(channel: string, message: unknown): Promise<number> {
    if (this.closed) return -1;
    try {
      return await this.client.publish(channel, this.seal(channel, JSON.stringify(message)));
    } catch (err) {
      const now = Date.now();
      if (now - this.lastPublishWarning > 60_000) {
        this.lastPublishWarning = now;
        this.opts.logger.warn({ err, channel }, 'Redis unavailable: a message to the other replicas was not sent');
      }
      return -1;
    }
  }

  /**
   * Calls `listener` with each JSON message on `channel`. Malformed messages, and any not signed with
   * this deployment's key for this channel within the last minute (or seen before), are dropped: whoever
   * can write to Redis without the SECRET_KEY cannot restart services, end sessions or inject client
   * messages through it.
   */
  async subscribe(channel: string, listener: (message: unknown) => void): Promise<void> {
    // One Redis subscription per channel, so each message is checked (and remembered) once.
    const known = this.listeners.get(channel);
    if (known) {
      known.add(listener);
      return;
    }
    const listeners = new Set([listener]);
    this.listeners.set(channel, listeners);
    await this.subscriber.subscribe(channel, (raw: string) => {
      const body = this.open(channel, raw);
      if (body === undefined) return;
      let message: unknown;
      try {
        message = JSON.parse(body);
      } catch {
        return;
      }
      for (const each of listeners) {
        try {
          each(message);
        } catch (err) {
          this.opts.logger.error({ err, channel }, 'handling a message from another replica failed');
        }
      }
    });
  }

  /** `<time>.<mac>.<json>`: the MAC covers the channel, the time and the body. */
  private seal(channel: string, body: string): string {
    const at = String(Date.now());
    return `${at}.${this.mac(channel, at, body)}.${body}`;
  }

  private mac(channel: string, at: string, body: string): string {
    return createHmac('sha256', this.opts.signingKey).update(`${channel}\n${at}\n`).update(body).digest('base64url');
  }

  /** The body of a message signed for `channel`, fresh and not seen before; undefined otherwise. */
  private open(channel: string, raw: string): string | undefined {
    const first = raw.indexOf('.');
    const second = raw.indexOf('.', first + 1);
    const at = raw.slice(0, first);
    const mac = raw.slice(first + 1, second);
    const body = raw.slice(second + 1);
    const now = Date.now();
    const expected = first > 0 && second > first ? this.mac(channel, at, body) : '';
    const signed = expected.length > 0 && mac.length === expected.length && timingSafeEqual(Buffer.from(mac), Buffer.from(expected));
    const age = now - Number(at);
    if (!signed || !(Math.abs(age) <= MESSAGE_MAX_AGE_MS) || this.seen.has(mac)) {
      if (now - this.lastRefusalWarning > 60_000) {
        this.lastRefusalWarning = now;
        this.opts.logger.warn(
          { channel, reason: !signed ? 'bad signature' : this.seen.has(mac) ? 'replayed' : 'stale' },
          'a message on Redis was refused: not signed by a replica of this deployment (same SECRET_KEY), stale or replayed',
        );
      }
      return undefined;
    }
    for (const [seenMac, until] of this.seen) {
      if (until > now) break;
      this.seen.delete(seenMac);
    }
    this.seen.set(mac, now + 2 * MESSAGE_MAX_AGE_MS);
    return body;
  }

  /** Called after the subscriber came back from an outage, with the time the outage began. */
  onReconnect(listener: (downSince: number) => void): () => void {
    this.reconnectListeners.add(listener);
    return () => this.reconnectListeners.delete(listener);
  }

  private lost(err: Error): void {
    if (this.closed || this.downSince !== undefined || !this.everConnected) return;
    this.downSince = Date.now();
    this.opts.logger.warn({ err }, 'Redis connection lost: replicas do not hear of each other’s changes until it is back (reconnecting)');
  }

  private restored(): void {
    const since = this.downSince;
    if (since === undefined || this.closed) return;
    this.downSince = undefined;
    this.opts.logger.info({ downMs: Date.now() - since }, 'Redis connection restored');
    for (const listener of this.reconnectListeners) listener(since);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.reconnectListeners.clear();
    await Promise.all(
      [this.subscriber, this.client].map(async (c) => {
        if (!c.isOpen) return;
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<void>((resolve) => {
          timer = setTimeout(resolve, CLOSE_MS);
        });
        await Promise.race([c.close().catch(() => undefined), late]);
        clearTimeout(timer);
        if (c.isOpen) c.destroy();
      }),
    );
  }
}
