import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { createClient } from 'redis';

export type RedisClient = ReturnType<typeof createClient>;

export interface RedisHubOptions {
  url: string;
  /** Prefix of every key and channel: replicas of one deployment share it (REDIS_PREFIX). */
  namespace: string;
  logger: Logger;
}

/** How long close() waits for a graceful QUIT before dropping the connections. */
const CLOSE_MS = 2000;

/**
 * This replica's connections to the Redis all replicas share (architecture §7): one client for
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
      return await this.client.publish(channel, JSON.stringify(message));
    } catch (err) {
      const now = Date.now();
      if (now - this.lastPublishWarning > 60_000) {
        this.lastPublishWarning = now;
        this.opts.logger.warn({ err, channel }, 'Redis unavailable: a message to the other replicas was not sent');
      }
      return -1;
    }
  }

  /** Calls `listener` with each JSON message on `channel` (malformed ones are dropped). */
  async subscribe(channel: string, listener: (message: unknown) => void): Promise<void> {
    await this.subscriber.subscribe(channel, (raw: string) => {
      let message: unknown;
      try {
        message = JSON.parse(raw);
      } catch {
        return;
      }
      try {
        listener(message);
      } catch (err) {
        this.opts.logger.error({ err, channel }, 'handling a message from another replica failed');
      }
    });
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
