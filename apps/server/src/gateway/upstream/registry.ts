import type { Link } from './link.js';
import type { ModernLink } from './modern-link.js';
import type { Era, Placement } from './placement.js';
import type { RemoteAuth } from './remote-channel.js';

/** One link of the pool, where it is placed, and what it was started from. */
export interface Entry<L extends Link | ModernLink = Link | ModernLink> {
  place: Placement;
  link: L;
  /** What the process or connection was started from (placement.ts, runtimeKey); a change means a restart. */
  runtime: string;
  /** Personal variable values the process of a per-user link starts with (may change while it lives). */
  userEnv: Record<string, string> | undefined;
  /** What a remote link sends (credentials.ts): its held token, or the report of a 401. */
  auth: RemoteAuth;
}

export type SessionEraEntry = Entry<Link>;
export type StatelessEraEntry = Entry<ModernLink>;

const isSessionEra = (entry: Entry): entry is SessionEraEntry => entry.place.era === '2025-11-25';
const isStatelessEra = (entry: Entry): entry is StatelessEraEntry => entry.place.era === '2026-07-28';

/**
 * The pool's one registry (docs/decisions/0044): every link of this replica, of both eras, under its placement's key
 * (placement.ts), and which link each session was last given (`placed`), so that the common acquisition is one lookup.
 */
export class LinkRegistry {
  private readonly entries = new Map<string, Entry>();
  /** The link a session (2025-11-25) or a user's requests (2026-07-28) were given on a service, while it is unchanged. */
  private readonly placed = new Map<string, { key: string; updatedAt: number }>();

  /** Placements remembered at most (a map cleared when full: each is one lookup away from being found again). */
  static readonly MAX_PLACED = 10_000;

  get(key: string): Entry | undefined {
    return this.entries.get(key);
  }

  add<E extends Entry>(entry: E): E {
    this.entries.set(entry.place.key, entry);
    return entry;
  }

  /** Takes the entry out (false when another has its key now, or it is gone already). */
  delete(entry: Entry): boolean {
    if (this.entries.get(entry.place.key) !== entry) return false;
    this.entries.delete(entry.place.key);
    return true;
  }

  all(serviceId?: number): Entry[] {
    return [...this.entries.values()].filter((e) => serviceId === undefined || e.place.serviceId === serviceId);
  }

  sessionEra(serviceId?: number): SessionEraEntry[] {
    return this.all(serviceId).filter(isSessionEra);
  }

  statelessEra(serviceId?: number): StatelessEraEntry[] {
    return this.all(serviceId).filter(isStatelessEra);
  }

  clear(): Entry[] {
    const all = [...this.entries.values()];
    this.entries.clear();
    this.placed.clear();
    return all;
  }

  // ---- where a session's requests went last ----

  private static placedKey(era: Era, serviceId: number, who: string): string {
    return `${era}|${serviceId}|${who}`;
  }

  /** The entry `who` was given on this service, while the service is as it was then and the entry is still there. */
  placedFor(era: Era, serviceId: number, who: string, updatedAt: number): Entry | undefined {
    const placed = this.placed.get(LinkRegistry.placedKey(era, serviceId, who));
    if (!placed || placed.updatedAt !== updatedAt) return undefined;
    return this.entries.get(placed.key);
  }

  remember(era: Era, serviceId: number, who: string, entry: Entry, updatedAt: number): void {
    if (this.placed.size >= LinkRegistry.MAX_PLACED) this.placed.clear();
    this.placed.set(LinkRegistry.placedKey(era, serviceId, who), { key: entry.place.key, updatedAt });
  }

  forget(era: Era, serviceId: number, who: string): void {
    this.placed.delete(LinkRegistry.placedKey(era, serviceId, who));
  }

  /** Every session finds its link again (a service or a user changed). */
  forgetPlacements(serviceId?: number): void {
    if (serviceId === undefined) {
      this.placed.clear();
      return;
    }
    for (const key of [...this.placed.keys()]) if (key.split('|')[1] === String(serviceId)) this.placed.delete(key);
  }
}
