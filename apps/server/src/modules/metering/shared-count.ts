import { createClient } from 'redis';

/** Redis keys of the meter live two days: a day's count is needed until the day is over in every time zone. */
const TTL_S = 172_800;
/** A run whose heartbeat is this old is dead: its counts in Redis are written to the database by a survivor. */
const ALIVE_MS = 10_000;
const TAKEOVER_MS = 30_000;

export type SharedAdmission = { status: 'missing' } | { status: 'admitted' | 'refused'; total: number };

/**
 * The shared daily counts of several replicas (decision 0043). Each (day, service, user) is a Redis hash
 * with one field per meter run (a process start): that run's own count of the day. Every write is
 * `field = max(field, v)` with a `v` the run itself counted, so a count sent twice, late, after Redis
 * restarted empty or with old data, or after a failover, is never added twice; the total is the sum of
 * the fields. Admission is one script: it raises the caller's field to what it counted (the admissions
 * it made while Redis was away arrive here, once), checks the sum against the limit and adds one.
 */
export class SharedCounts {
  private static readonly ADMIT = `
    if redis.call('EXISTS', KEYS[1]) == 0 then return {0, 0} end
    local run, limit = ARGV[1], tonumber(ARGV[3])
    local own = math.max(tonumber(redis.call('HGET', KEYS[1], run) or '0'), tonumber(ARGV[2]))
    local total = own
    local fields = redis.call('HGETALL', KEYS[1])
    for i = 1, #fields, 2 do
      if fields[i] ~= run then total = total + tonumber(fields[i + 1]) end
    end
    if limit > 0 and total >= limit then
      redis.call('HSET', KEYS[1], run, own)
      return {2, total}
    end
    redis.call('HSET', KEYS[1], run, own + 1)
    redis.call('EXPIRE', KEYS[1], ${TTL_S})
    redis.call('SADD', KEYS[2], ARGV[4])
    redis.call('EXPIRE', KEYS[2], ${TTL_S})
    return {1, total + 1}`;

  /** ARGV[1] 'create' or 'exists'; then run, count pairs, each raised to at least its count. Returns 0 when the key is missing and not created. */
  private static readonly RAISE = `
    if ARGV[1] == 'exists' and redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
    for i = 2, #ARGV, 2 do
      local v = tonumber(ARGV[i + 1])
      if tonumber(redis.call('HGET', KEYS[1], ARGV[i]) or '-1') < v then redis.call('HSET', KEYS[1], ARGV[i], v) end
    end
    redis.call('EXPIRE', KEYS[1], ${TTL_S})
    return 1`;

  private readonly client;
  private everConnected = false;
  private closed = false;
  private readonly readyListeners: (() => void)[] = [];

  private constructor(
    url: string,
    private readonly prefix: string,
  ) {
    this.client = createClient({
      url,
      // While Redis is away a command fails at once (the meter then counts locally) instead of queueing.
      disableOfflineQueue: true,
      socket: {
        connectTimeout: 5000,
        // A Redis that cannot be reached at start stops the start with its error; later losses are retried.
        reconnectStrategy: (retries: number, cause: Error) =>
          this.closed ? false : this.everConnected ? Math.min(100 * 2 ** retries, 5000) : cause,
      },
    });
    // Errors surface on the commands themselves; an unhandled 'error' event would crash the process.
    this.client.on('error', () => undefined);
    this.client.on('ready', () => {
      // Every (re)connection may be to a Redis that restarted, lost keys or failed over: the meter reconciles.
      if (this.everConnected) for (const listener of this.readyListeners) listener();
      this.everConnected = true;
    });
  }

  static async connect(url: string, prefix = 'toolport:rpd:'): Promise<SharedCounts> {
    const counts = new SharedCounts(url, prefix);
    await counts.client.connect();
    return counts;
  }

  get open(): boolean {
    return !this.closed;
  }

  /** Connected now. */
  get ready(): boolean {
    return this.client.isReady;
  }

  /** Called after each reconnection. */
  onReconnect(listener: () => void): void {
    this.readyListeners.push(listener);
  }

  private hash(key: string): string {
    return `${this.prefix}${key}`;
  }

  private runKeys(run: string): string {
    return `${this.prefix}keys:${run}`;
  }

  /** One admission for `run`, which had counted `mine` for the key before it. */
  async admit(key: string, run: string, mine: number, limit: number): Promise<SharedAdmission> {
    const [status, total] = (await this.client.eval(SharedCounts.ADMIT, {
      keys: [this.hash(key), this.runKeys(run)],
      arguments: [run, String(mine), String(limit), key],
    })) as [number, number];
    if (status === 0) return { status: 'missing' };
    return { status: status === 1 ? 'admitted' : 'refused', total: Number(total) };
  }

  /** Raises the fields of `key` to at least the given counts; `create`: also when Redis has no such key. False: missing. */
  async raise(key: string, counts: Map<string, number>, create: boolean): Promise<boolean> {
    const pairs = [...counts].flatMap(([run, n]) => [run, String(n)]);
    const reply = await this.client.eval(SharedCounts.RAISE, {
      keys: [this.hash(key)],
      arguments: [create ? 'create' : 'exists', ...pairs],
    });
    return Number(reply) === 1;
  }

  /** This run is alive (and registered, so that a survivor writes its counts should it die). */
  async heartbeat(run: string): Promise<void> {
    await this.client
      .multi()
      .sAdd(`${this.prefix}runs`, run)
      .expire(`${this.prefix}runs`, TTL_S)
      .set(`${this.prefix}alive:${run}`, '1', { PX: ALIVE_MS })
      .exec();
  }

  /** Runs whose heartbeat stopped, each claimed by at most one replica at a time. */
  async claimDeadRuns(me: string): Promise<string[]> {
    const runs = (await this.client.sMembers(`${this.prefix}runs`)).filter((r) => r !== me);
    const dead: string[] = [];
    for (const run of runs) {
      if ((await this.client.exists(`${this.prefix}alive:${run}`)) === 1) continue;
      const claimed = await this.client.set(`${this.prefix}takeover:${run}`, me, { NX: true, PX: TAKEOVER_MS });
      if (claimed) dead.push(run);
    }
    return dead;
  }

  /** A run's own count of every key it admitted (its field in each hash). */
  async countsOf(run: string): Promise<Map<string, number>> {
    const keys = await this.client.sMembers(this.runKeys(run));
    const counts = new Map<string, number>();
    for (const key of keys) {
      const v = await this.client.hGet(this.hash(key), run);
      if (v !== null && v !== undefined) counts.set(key, Number(v));
    }
    return counts;
  }

  /**
   * A dead run whose journal this replica folded (a restart on its DATA_DIR): each of its fields becomes what the
   * database now holds for it (`exact`, by key). Redis may have admitted a call the run was killed before writing
   * to its journal; the journal is written before a call goes on, so that call never reached a tool server and is
   * taken back, and the limit and the stored count agree again. Done under the run's takeover claim (false when
   * another replica holds it: that one writes the run's Redis counts to the database, the older rule); the run is
   * then forgotten.
   */
  async settle(me: string, run: string, exact: (key: string) => Promise<number>): Promise<boolean> {
    const claimed = await this.client.set(`${this.prefix}takeover:${run}`, me, { NX: true, PX: TAKEOVER_MS });
    if (!claimed) return false;
    for (const [key, counted] of await this.countsOf(run)) {
      const v = await exact(key);
      if (v >= counted) continue;
      if (v > 0) await this.client.hSet(this.hash(key), run, String(v));
      else await this.client.hDel(this.hash(key), run);
    }
    await this.forget(run);
    return true;
  }

  /** The run's counts are all in the database: nothing more to take over. */
  async forget(run: string): Promise<void> {
    await this.client.multi().sRem(`${this.prefix}runs`, run).del(this.runKeys(run)).del(`${this.prefix}alive:${run}`).exec();
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.client.close().catch(() => undefined);
  }
}
