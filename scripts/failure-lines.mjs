// The lines of a test run's output that name a failed test, kept while the output streams by, so that the summary at
// the end of `npm test` can repeat them: a CI log is often read from its tail, where the failures themselves are long
// gone. Vitest names a failed test on a line starting with `FAIL`; Playwright marks one with `✘` as it runs and lists
// it as `N) [project] › file:line › title` at the end; an unhandled error names the file it came from.

// The escape character is built, not written in the pattern (a control character in a literal is easily a typo).
const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;?]*[A-Za-z]`, 'g');
const PATTERNS = [/^\s*FAIL\s+\S/, /^\s*✘\s/, /^\s*\d+\) \[[^\]]+\] › /, /^\s*This error originated in /];

export class FailureLines {
  /** At most this many lines are kept (the first ones: a run that fails everywhere needs no more to be read). */
  constructor(max = 40) {
    this.max = max;
    this.lines = [];
    this.seen = new Set();
    this.partial = '';
  }

  /** Feeds a chunk of output (lines may be split across chunks). */
  push(chunk) {
    const text = this.partial + String(chunk);
    const parts = text.split('\n');
    this.partial = parts.pop() ?? '';
    for (const line of parts) this.take(line);
  }

  /** The named failures, in the order they were printed, each once. */
  end() {
    if (this.partial) this.take(this.partial);
    this.partial = '';
    return [...this.lines];
  }

  take(raw) {
    const line = raw.replace(ANSI, '').replace(/\r$/, '').trimEnd();
    if (!PATTERNS.some((p) => p.test(line))) return;
    const key = line.trim();
    if (this.seen.has(key) || this.lines.length >= this.max) return;
    this.seen.add(key);
    this.lines.push(line.trim());
  }
}
