// The lines of a test run's output that name a failed test, kept while the output streams by, so that the summary at
// the end of `npm test` can repeat them: a CI log is often read from its tail, where the failures themselves are long
// gone. Vitest names a failed test on a line starting with `FAIL`; Playwright marks one with `✘` as it runs and lists
// it as `N) [project] › file:line › title` at the end; an unhandled error names the file it came from. After such a
// name, the error's first line and where it was thrown are kept too (`Error: Hook timed out in 60000ms.`, `❯ file:line`):
// a failure in a suite's hook is otherwise named by its suite alone. The test harness's own notes on a close that hangs
// (`[gateway-harness] ...`) are kept wherever they come.

// The escape character is built, not written in the pattern (a control character in a literal is easily a typo).
const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;?]*[A-Za-z]`, 'g');
/** Headers whose error follows them: vitest's `FAIL`, Playwright's numbered list (its `[project] ›` part only when named). */
const HEADERS = [/^\s*FAIL\s+\S/, /^\s*\d+\) (?:\[[^\]]+\] › )?\S+:\d+:\d+ › /];
const PATTERNS = [...HEADERS, /^\s*✘\s/, /^\s*This error originated in /, /^\[gateway-harness\] /];
const DETAIL_WINDOW = 12;
const ERROR_LINE = /^\s*(?:[A-Za-z]*Error\b|Test timeout of |expect\(|Unhandled Rejection)/;
const WHERE_LINE = /^\s*(?:❯|at) \S+\.(?:[cm]?[jt]sx?):\d+/;

export class FailureLines {
  /** At most this many lines are kept (the first ones: a run that fails everywhere needs no more to be read). */
  constructor(max = 40) {
    this.max = max;
    this.lines = [];
    this.seen = new Set();
    this.partial = '';
    /** After a header: how many more lines may hold its error, and which of error and place are still wanted. */
    this.detail = { left: 0, error: false, where: false };
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
    if (!PATTERNS.some((p) => p.test(line))) return this.takeDetail(line);
    if (HEADERS.some((p) => p.test(line))) this.detail = { left: DETAIL_WINDOW, error: true, where: true };
    const key = line.trim();
    if (this.seen.has(key) || this.lines.length >= this.max) return;
    this.seen.add(key);
    this.lines.push(line.trim());
  }

  /** A line after a header: its error's first line and where it was thrown, indented under it. */
  takeDetail(line) {
    const d = this.detail;
    if (d.left <= 0) return;
    d.left -= 1;
    const kind = d.error && ERROR_LINE.test(line) ? 'error' : d.where && WHERE_LINE.test(line) ? 'where' : undefined;
    if (!kind || this.lines.length >= this.max) return;
    d[kind] = false;
    if (!d.error && !d.where) d.left = 0;
    this.lines.push(`  ${line.trim().slice(0, 300)}`);
  }
}
