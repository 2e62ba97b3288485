import { census } from './process-census.js';

/**
 * Resident memory of stdio tool servers (STDIO_MAX_RSS_MB). After each scan of the process census (one a
 * second for the whole gateway), VmRSS is summed over every process of each watched instance: the leader, the
 * `npx`/`uvx` children, and whatever left the group with `setsid` or a double fork. The owner of an instance
 * over the limit is told; it stops the instance, which answers its calls and lets the supervisor restart it with
 * backoff. Linux only: elsewhere nothing is measured.
 */

type OverLimit = (rssBytes: number, limitBytes: number) => void;

export class MemoryWatch {
  private readonly watched = new Map<number, OverLimit>();
  private stopListening: (() => void) | undefined;

  /**
   * One per built gateway (build/server.ts passes it as a dependency, decision 0062), with the limit of the
   * configuration (STDIO_MAX_RSS_MB); 0 turns the watch off.
   */
  constructor(private readonly maxRssMb: number) {}

  get limitBytes(): number {
    return this.maxRssMb * 1024 * 1024;
  }

  /** Watches a census instance until the returned function is called. */
  watch(instance: number, onOverLimit: OverLimit): () => void {
    this.watched.set(instance, onOverLimit);
    this.stopListening ??= census.onScan(() => this.check());
    return () => {
      if (this.watched.get(instance) === onOverLimit) this.watched.delete(instance);
      this.idle();
    };
  }

  /** One measurement on the census's last scan (the census calls it after each scan; tests may too). */
  check(): void {
    const limit = this.limitBytes;
    if (limit <= 0) return;
    for (const [instance, onOverLimit] of [...this.watched]) {
      const rss = census.rssBytes(instance);
      if (rss <= limit) continue;
      // Told once: the owner stops the instance, and a restarted process is a new one.
      this.watched.delete(instance);
      onOverLimit(rss, limit);
    }
    this.idle();
  }

  private idle(): void {
    if (this.watched.size > 0) return;
    this.stopListening?.();
    this.stopListening = undefined;
  }
}
