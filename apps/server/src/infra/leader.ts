import type { Logger } from 'pino';
import type { RedisHub } from './redis.js';

/**
 * What a periodic job asks before a round (docs/decisions/0017-leader-election.md):
 * - `exclusive`: runs on the leader only. While Redis is away nobody leads, so it waits.
 * - `guarded`: harmless when two replicas run it at once (idempotent, or behind a lock of its own,
 *   such as the retention purge's PostgreSQL advisory lock): runs on the leader, and on every replica
 *   while nobody can tell who leads (Redis away) rather than not at all.
 */
export type JobKind = 'exclusive' | 'guarded';

/** Leadership as the jobs read it. */
export interface Leadership {
  /** This replica holds the lease (always true for a single instance, without Redis). */
  isLeader(): boolean;
  /** Redis cannot be reached (or did not answer the last renewal): nobody can tell who leads. */
  readonly uncertain: boolean;
  /** Whether a job of this kind runs on this replica now. */
  runs(kind: JobKind): boolean;
  /** Called with the new value whenever `isLeader()` changes; returns the unsubscribe function. */
  onChange(listener: (leading: boolean) => void): () => void;
}

export interface LeaderOptions {
  logger: Logger;
  /** Lease time: a replica that died is replaced within about this long (1⅓ × at most). Default 15 s. */
  ttlMs?: number;
  /** Reports leadership (the toolport_leader gauge). */
  report?: (leading: boolean) => void;
}

export const DEFAULT_LEADER_TTL_MS = 15_000;

/** Extends the lease only while this replica still holds it. */
const RENEW = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end`;
/** Gives the lease up only while this replica still holds it. */
const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;

/**
 * Which replica runs the cluster-wide periodic jobs. With Redis: a lease `SET <prefix>leader <replica
 * id> NX PX ttl`, renewed by a compare-and-extend script every ttl/3 and given up on close by a
 * compare-and-delete, after which a message on `<prefix>leader` lets the others take over at once.
 * A replica that dies keeps the lease until it expires; the others try to take it every ttl/3. A
 * renewal that fails or is not answered before the lease would run out steps this replica down at
 * once, so two replicas never both believe they lead for longer than a renewal round trip.
 * Without Redis (one instance) this replica always leads.
 */
export class Leader implements Leadership {
  private leading: boolean;
  private unknown = false;
  private readonly listeners = new Set<(leading: boolean) => void>();
  private timer: NodeJS.Timeout | undefined;
  private busy: Promise<void> | undefined;
  /** Until when the lease certainly holds (counted from when the last successful command was sent). */
  private validUntil = 0;
  private closed = false;
  readonly ttlMs: number;

  private constructor(
    private readonly hub: RedisHub | undefined,
    private readonly opts: LeaderOptions,
  ) {
    this.ttlMs = Math.max(300, opts.ttlMs ?? DEFAULT_LEADER_TTL_MS);
    this.leading = hub === undefined;
  }

  /** A single instance: always the leader. */
  static solo(opts: LeaderOptions): Leader {
    const leader = new Leader(undefined, opts);
    opts.report?.(true);
    return leader;
  }

  /** Joins the election: tries once at once (the first replica up leads from its start), then every ttl/3. */
  static async start(hub: RedisHub, opts: LeaderOptions): Promise<Leader> {
    const leader = new Leader(hub, opts);
    opts.report?.(false);
    await hub.subscribe(leader.channel, (message) => {
      // The leader stepped down cleanly: whoever hears it first takes over now, not after the TTL.
      if ((message as { released?: unknown })?.released === true && !leader.leading) leader.tick();
    });
    // A broken connection steps the leader down at once, without waiting for the next renewal.
    hub.client.on('error', leader.onConnectionError);
    leader.tick();
    await leader.busy;
    return leader;
  }

  get replicaId(): string | undefined {
    return this.hub?.replicaId;
  }

  isLeader(): boolean {
    return this.leading;
  }

  get uncertain(): boolean {
    return this.unknown;
  }

  runs(kind: JobKind): boolean {
    return this.leading || (kind === 'guarded' && this.unknown);
  }

  onChange(listener: (leading: boolean) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Steps down (giving the lease up so another replica takes over at once) and stops campaigning. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.hub?.client.off('error', this.onConnectionError);
    await this.busy;
    const hub = this.hub;
    if (!hub || !this.leading) return;
    this.set(false, 'stopping');
    try {
      const released = await hub.client.eval(RELEASE, { keys: [this.key], arguments: [hub.replicaId] });
      if (Number(released) === 1) await hub.publish(this.channel, { released: true });
    } catch {
      // Redis is away: the lease runs out by itself.
    }
  }

  /** Stops renewing without giving the lease up, as a process that died would (tests). */
  abandon(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.hub?.client.off('error', this.onConnectionError);
    if (this.leading) this.set(false, 'abandoned');
  }

  private readonly onConnectionError = (err: unknown): void => {
    if (this.closed) return;
    this.unreachable(err);
    this.lost('the connection to Redis broke');
  };

  private get key(): string {
    return (this.hub as RedisHub).key('leader');
  }

  private get channel(): string {
    return (this.hub as RedisHub).key('leader');
  }

  private tick(): void {
    if (this.closed || !this.hub) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.tick(), Math.floor(this.ttlMs / 3));
    this.timer.unref();
    if (this.busy) {
      // The previous command is still unanswered: the lease may run out meanwhile.
      if (this.leading && Date.now() >= this.validUntil) this.lost('the lease renewal was not answered in time');
      return;
    }
    const sent = Date.now();
    const work = (this.leading ? this.renew(sent) : this.campaign(sent)).finally(() => {
      if (this.busy === work) this.busy = undefined;
    });
    this.busy = work;
  }

  private async campaign(sent: number): Promise<void> {
    const hub = this.hub as RedisHub;
    try {
      const reply = await hub.client.set(this.key, hub.replicaId, { condition: 'NX', expiration: { type: 'PX', value: this.ttlMs } });
      this.reachable();
      if (reply === 'OK' && !this.closed) {
        this.validUntil = sent + this.ttlMs;
        this.set(true, 'took the lease');
      }
    } catch (err) {
      this.unreachable(err);
    }
  }

  private async renew(sent: number): Promise<void> {
    const hub = this.hub as RedisHub;
    try {
      const extended = await hub.client.eval(RENEW, { keys: [this.key], arguments: [hub.replicaId, String(this.ttlMs)] });
      this.reachable();
      if (Number(extended) === 1) this.validUntil = sent + this.ttlMs;
      else this.lost('the lease was taken by another replica or expired');
    } catch (err) {
      this.unreachable(err);
      this.lost('Redis did not answer the lease renewal');
    }
  }

  private lost(reason: string): void {
    if (this.leading) this.set(false, reason);
  }

  private reachable(): void {
    if (!this.unknown) return;
    this.unknown = false;
    this.opts.logger.info('leader election: Redis reachable again');
  }

  private unreachable(err: unknown): void {
    if (this.unknown) return;
    this.unknown = true;
    this.opts.logger.warn(
      { err },
      'leader election: Redis unreachable, no replica leads until it is back (only jobs guarded by their own locks run)',
    );
  }

  private set(leading: boolean, reason: string): void {
    if (this.leading === leading) return;
    this.leading = leading;
    this.opts.logger.info(
      { leader: leading, replica: this.hub?.replicaId, reason },
      leading ? 'this replica is now the leader' : 'this replica is no longer the leader',
    );
    this.opts.report?.(leading);
    for (const listener of this.listeners) {
      try {
        listener(leading);
      } catch (err) {
        this.opts.logger.error({ err }, 'a leadership listener failed');
      }
    }
  }
}
