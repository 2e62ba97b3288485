/**
 * Lets lines through at `perSecond` on average, a burst of up to `burst` at once (a token bucket), and folds the
 * rest into one "N lines suppressed" report a second, so a process flooding its output cannot flood the service log.
 */
export class LineLimiter {
  private tokens: number;
  private refilledAt = Date.now();
  private suppressed = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly perSecond: number,
    private readonly emit: (line: string) => void,
    private readonly emitSuppressed: (count: number) => void,
    private readonly burst = perSecond,
  ) {
    this.tokens = burst;
  }

  offer(line: string): void {
    const now = Date.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.refilledAt) / 1000) * this.perSecond);
    this.refilledAt = now;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      this.emit(line);
      return;
    }
    this.suppressed += 1;
    // One report a second at most, and within a second even when the flood stops right here.
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.report();
    }, 1000).unref();
  }

  /** Reports what is still suppressed; called when the process ends. */
  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.report();
  }

  private report(): void {
    if (this.suppressed === 0) return;
    const n = this.suppressed;
    this.suppressed = 0;
    this.emitSuppressed(n);
  }
}
