/**
 * Crash-restart delays: base, 2x base, 4x base … capped at max; a process that had been running
 * for `stableMs` before it failed starts over at base.
 */
export class Backoff {
  private failures = 0;
  private upSince = 0;

  constructor(private readonly opts: { baseMs: number; maxMs: number; stableMs: number }) {}

  /** The connection became usable. */
  up(now = Date.now()): void {
    this.upSince = now;
  }

  /** The connection was stopped on purpose: the next failure is a first one again. */
  reset(): void {
    this.failures = 0;
    this.upSince = 0;
  }

  /** The connection failed (at start or later): how long to wait before the next start. */
  failed(now = Date.now()): number {
    if (this.upSince > 0 && now - this.upSince >= this.opts.stableMs) this.failures = 0;
    this.upSince = 0;
    const delay = Math.min(this.opts.baseMs * 2 ** this.failures, this.opts.maxMs);
    this.failures += 1;
    return delay;
  }
}
