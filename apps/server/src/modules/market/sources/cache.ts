/**
 * A bounded least-recently-used map whose entries expire. It holds promises, so callers asking
 * for the same key at once share one upstream request; a load that fails is dropped at once, so
 * a registry that was down is asked again on the next call instead of being remembered as empty.
 */
export class TtlCache<V> {
  private readonly entries = new Map<string, { expires: number; value: Promise<V> }>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries: number,
    private readonly now: () => number = Date.now,
  ) {}

  getOrLoad(key: string, load: () => Promise<V>, ttlMs = this.ttlMs): Promise<V> {
    const hit = this.entries.get(key);
    if (hit && hit.expires > this.now()) {
      // Re-inserting moves the key to the end: Map iteration order is the recency order.
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit.value;
    }
    const value = load();
    const entry = { expires: this.now() + ttlMs, value };
    this.entries.delete(key);
    this.entries.set(key, entry);
    value.catch(() => {
      if (this.entries.get(key) === entry) this.entries.delete(key);
    });
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
    return value;
  }

  get size(): number {
    return this.entries.size;
  }
}

export const MINUTE = 60_000;
