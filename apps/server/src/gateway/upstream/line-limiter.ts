/**
 * Lets at most `perSecond` lines through per one-second window and folds the rest into a single
 * "N lines suppressed" report, so a process flooding its stderr cannot flood the service log.
 */
export class LineLimiter {
  private windowStart = 0;
  private count = 0;
  private suppressed = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly perSecond: number,
    private readonly emit: (line: string) => void,
    private readonly emitSuppressed: (count: number) => void,
  ) {}

  offer(line: string): void {
    const now = Date.now();
    if (now - this.windowStart >= 1000) {
      this.report();
      this.windowStart = now;
      this.count = 0;
    }
    if (this.count < this.perSecond) {
      this.count += 1;
      this.emit(line);
      return;
    }
    this.suppressed += 1;
    // Report at the end of the window even when the flood stops right here.
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
