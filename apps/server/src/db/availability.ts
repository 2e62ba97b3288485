import { sql } from 'kysely';
import { isDatabaseUnavailable } from '../http/db-unavailable.js';
import type { Db } from './db.js';

/** How long a read on the call path may wait for the database before the answer comes from memory. */
export const CALL_PATH_BOUND_MS = 1500;
/** How often the database is probed while it is away. */
const PROBE_MS = 1000;
/** How long `select 1` may take, after a read ran out of time, before the database is taken as away. */
const SUSPECT_PROBE_MS = 1000;

/** The database did not answer in time, or is known to be away: nothing was asked of it. */
export class DatabaseUnavailableError extends Error {
  readonly code = 'DATABASE_UNAVAILABLE';
  constructor(reason = 'database unavailable') {
    super(reason);
  }
}

/** `promise`, or a DatabaseUnavailableError after `ms`. */
export function bounded<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DatabaseUnavailableError(`the database did not answer within ${ms} ms`)), ms);
  });
  // A late answer or failure of the abandoned query is of no further interest.
  promise.catch(() => undefined);
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/**
 * Whether the database answers (decision 0043): every read on the call path goes through `read`, bounded
 * in time. A read that fails because the database is away, or that takes too long (a frozen server
 * answers nothing), marks it away; from then on reads fail at once — their callers answer from memory —
 * and a probe asks `select 1` every second until it answers again. So an outage costs each call at
 * most one bound, once, instead of a connection timeout per call.
 */
export class DatabaseGate {
  private away = false;
  private suspecting = false;
  private probing: NodeJS.Timeout | undefined;
  private readonly listeners: ((up: boolean) => void)[] = [];

  constructor(private readonly db: Db) {}

  get up(): boolean {
    return !this.away;
  }

  /** Called when the database goes away (false) and when it is back (true). */
  onChange(listener: (up: boolean) => void): void {
    this.listeners.push(listener);
  }

  async read<T>(query: () => Promise<T>, ms = CALL_PATH_BOUND_MS): Promise<T> {
    if (this.away) throw new DatabaseUnavailableError();
    try {
      return await bounded(query(), ms);
    } catch (err) {
      // A read that was only slow (a loaded machine, one heavy query) does not make the database away by itself:
      // `select 1` is asked first, and only a database that does not answer that either is away. A refused or
      // broken connection is away at once.
      if (err instanceof DatabaseUnavailableError && !this.away) this.suspect();
      else if (isDatabaseUnavailable(err)) this.markAway();
      throw err;
    }
  }

  /** After a read ran out of time: away only when `select 1` does not answer within the probe's bound either. */
  private suspect(): void {
    if (this.suspecting) return;
    this.suspecting = true;
    bounded(sql`select 1`.execute(this.db), SUSPECT_PROBE_MS)
      .catch((err: unknown) => {
        if (err instanceof DatabaseUnavailableError || isDatabaseUnavailable(err)) this.markAway();
      })
      .finally(() => {
        this.suspecting = false;
      });
  }

  /** A failure seen elsewhere (a write) that says the database is away. */
  failed(err: unknown): void {
    if (isDatabaseUnavailable(err)) this.markAway();
  }

  private markAway(): void {
    if (this.away) return;
    this.away = true;
    for (const listener of this.listeners) listener(false);
    this.probe();
  }

  private probe(): void {
    this.probing = setTimeout(async () => {
      try {
        await bounded(sql`select 1`.execute(this.db), CALL_PATH_BOUND_MS);
        this.away = false;
        this.probing = undefined;
        for (const listener of this.listeners) listener(true);
      } catch {
        this.probe();
      }
    }, PROBE_MS);
    this.probing.unref();
  }

  close(): void {
    if (this.probing) clearTimeout(this.probing);
    this.probing = undefined;
  }
}

/**
 * The last answer the database gave for each key: while it is away (or too slow), a read that fails
 * for that reason gets the remembered answer instead, so calls to services, users and sessions already
 * seen keep their configuration and limits. Keys never read fail as before (the caller answers 503).
 */
export class LastKnown<T> {
  private readonly values = new Map<string, T>();

  constructor(
    private readonly gate: DatabaseGate | undefined,
    /** Whether "nothing" is an answer to remember (a user without personal values), or only a miss (an unknown key). */
    private readonly absentToo = false,
    private readonly max = 10_000,
  ) {}

  async get(key: string, load: () => Promise<T>): Promise<T> {
    try {
      const value = await (this.gate ? this.gate.read(load) : load());
      // Unless told otherwise only what exists is remembered: keys sprayed by a stranger cannot push the real ones out.
      if (value === undefined && !this.absentToo) return value;
      if (this.values.size >= this.max && !this.values.has(key)) this.values.clear();
      this.values.set(key, value);
      return value;
    } catch (err) {
      if (isDatabaseUnavailable(err) && this.values.has(key)) return this.values.get(key) as T;
      throw err;
    }
  }

  /** Forgets what changed while the database answered (a disabled user must not come back from memory). */
  forget(changed: (key: string, value: T) => boolean): void {
    for (const [key, value] of this.values) if (changed(key, value)) this.values.delete(key);
  }
}
