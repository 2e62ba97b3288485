import type { UserRow } from '../db/schema.js';
import type { ConfigEvents } from '../infra/events.js';

/** The signed-in caller as a route sees it. */
export interface Principal {
  id: number;
  username: string;
  role: number;
  status: number;
  authVersion: number;
}

/** Where a user's row is read from; the users module's repository provides it. */
export interface UserRowLookup {
  byId(id: number): Promise<UserRow | undefined>;
}

const CACHE_MS = 2000;

/**
 * Role and status re-read from the database on every request, with a cache of at most two seconds
 * (docs/architecture.md §8): disabling, demoting or deleting a user takes effect at once. Changes made in
 * this process drop the entry immediately; other replicas see them within the cache window.
 */
export class Principals {
  private readonly cache = new Map<number, { at: number; row: Principal | null }>();

  constructor(
    private readonly repo: UserRowLookup,
    events: ConfigEvents,
  ) {
    events.on((e) => {
      if (e.type === 'user.changed') this.cache.delete(e.userId);
    });
  }

  async byId(id: number): Promise<Principal | null> {
    const hit = this.cache.get(id);
    if (hit && Date.now() - hit.at < CACHE_MS) return hit.row;
    const row = await this.repo.byId(id);
    const principal = row ? toPrincipal(row) : null;
    this.cache.set(id, { at: Date.now(), row: principal });
    if (this.cache.size > 10_000) this.cache.clear();
    return principal;
  }
}

export const toPrincipal = (row: UserRow): Principal => ({
  id: row.id,
  username: row.username,
  role: row.role,
  status: row.status,
  authVersion: row.auth_version,
});
