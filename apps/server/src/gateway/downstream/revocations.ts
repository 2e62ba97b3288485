import type { DatabaseGate } from '../../db/availability.js';
import type { Db } from '../../db/db.js';
import { isDatabaseUnavailable } from '../../http/db-unavailable.js';
import type { RedisHub } from '../../infra/redis.js';
import { sha256 } from '../../infra/secrets.js';

/** How long a "not revoked" answer is trusted: a DELETE on another replica takes effect within it. */
const NEGATIVE_TTL_MS = 5000;
const MAX_CACHED = 20_000;

/**
 * Session ids ended by DELETE (docs/architecture.md §5). A signed id stays valid by itself until its
 * maximum age, so ending one early needs a list: a row keyed by the id's hash that lives exactly
 * until the id would expire anyway. Answers are cached: a revocation forever (it never un-happens),
 * a clean bill for a few seconds.
 *
 * With REDIS_URL every revocation is also published to the other replicas (docs/architecture.md §7): they
 * remember it at once and drop the session from memory, so the id is refused everywhere the moment
 * DELETE has answered. The table stays the durable list (Redis may be emptied or unreachable, and a
 * replica that starts later reads it); after a Redis outage the clean bills are forgotten.
 */
export class Revocations {
  private readonly cache = new Map<string, { revoked: boolean; until: number }>();

  constructor(
    private readonly db: Db,
    private readonly hub?: RedisHub,
    /** Bounds the lookup on the call path (decision 0043). */
    private readonly gate?: DatabaseGate,
  ) {}

  /** Listens to the revocations of other replicas; `dropped` is called with each id's hash. */
  async listen(dropped: (hash: string) => void): Promise<void> {
    const hub = this.hub;
    if (!hub) return;
    await hub.subscribe(hub.key('revoked'), (raw) => {
      const m = raw as { origin?: unknown; hash?: unknown; expiresAt?: unknown } | null;
      if (typeof m?.hash !== 'string' || typeof m.expiresAt !== 'number' || m.origin === hub.replicaId) return;
      this.remember(m.hash, true, m.expiresAt);
      dropped(m.hash);
    });
    hub.onReconnect(() => {
      for (const [hash, entry] of this.cache) if (!entry.revoked) this.cache.delete(hash);
    });
  }

  static hashOf(sessionId: string): string {
    return sha256(sessionId);
  }

  async revoke(sessionId: string, expiresAt: number): Promise<void> {
    const hash = Revocations.hashOf(sessionId);
    this.remember(hash, true, expiresAt);
    // Published first (a failure is logged by the hub): the other replicas must refuse the id at once.
    await this.hub?.publish(this.hub.key('revoked'), { origin: this.hub.replicaId, hash, expiresAt });
    await this.db
      .insertInto('revoked_sessions')
      .values({ session_hash: hash, expires_at: expiresAt })
      .onConflict((oc) => oc.column('session_hash').doNothing())
      .execute();
  }

  async isRevoked(sessionId: string): Promise<boolean> {
    const hash = Revocations.hashOf(sessionId);
    const now = Date.now();
    const hit = this.cache.get(hash);
    if (hit && hit.until > now) return hit.revoked;
    const read = () => this.db.selectFrom('revoked_sessions').select('expires_at').where('session_hash', '=', hash).executeTakeFirst();
    let row: { expires_at: number } | undefined;
    try {
      row = await (this.gate ? this.gate.read(read) : read());
    } catch (err) {
      // The database away: the signed id stands on what this replica knows (its cache, the revocations heard
      // over Redis meanwhile); a session deleted elsewhere while both were away is refused once they are back.
      if (isDatabaseUnavailable(err)) return hit?.revoked ?? false;
      throw err;
    }
    if (row) {
      this.remember(hash, true, Number(row.expires_at));
      return true;
    }
    // A revocation heard from another replica while the table was read wins over the clean bill.
    if (this.cache.get(hash)?.revoked) return true;
    this.remember(hash, false, now + NEGATIVE_TTL_MS);
    return false;
  }

  /** Drops rows (and cache entries) of ids that have expired on their own. */
  async purgeExpired(now = Date.now()): Promise<void> {
    for (const [hash, entry] of this.cache) if (entry.until <= now) this.cache.delete(hash);
    await this.db.deleteFrom('revoked_sessions').where('expires_at', '<', now).execute();
  }

  private remember(hash: string, revoked: boolean, until: number): void {
    if (this.cache.size >= MAX_CACHED) this.cache.clear();
    this.cache.set(hash, { revoked, until });
  }
}
