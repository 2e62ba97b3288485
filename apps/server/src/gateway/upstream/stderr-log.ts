import { LineLimiter } from './line-limiter.js';

/**
 * A tool server's stderr (docs/decisions/0045). Lines are gathered into entries of the service log rather than
 * written one by one, so a stack trace reads as one message in its order: an entry ends when the process writes
 * a JSON-RPC message (its start-up output is one entry), when it has been quiet for a moment, when it is large,
 * and when the process ends: at Error level when it ended on its own. The last lines written since it last spoke
 * are kept, all of them (before the rate limit), for the reason of its failure: `reason()`.
 */

type Level = 'info' | 'warn' | 'error';

/** An entry is written once the process has been quiet this long, or once it is this old. */
const QUIET_MS = 300;
const MAX_AGE_MS = 5_000;
/** Within the service log's 4,000 characters per message. */
const MAX_ENTRY_LINES = 60;
const MAX_ENTRY_CHARS = 3_500;
/** Lines kept for the reason, and the reason's size. */
const TAIL_LINES = 40;
const TAIL_LINE_CHARS = 1_000;
const REASON_LINES = 5;
const REASON_CHARS = 1_000;
/** A burst the rate limit lets through whole (a crash's stack trace), then `perSecond`. */
const BURST_SECONDS = 10;

const LOOKS_WRONG = /\b(error|warn|warning|fatal|exception|traceback|panic)\b/i;

export class StderrLog {
  private held: string[] = [];
  private heldChars = 0;
  private heldSince = 0;
  private timer: NodeJS.Timeout | undefined;
  /** The last TAIL_LINES lines since the process last spoke, as a ring: `tailed` lines written, at most TAIL_LINES kept. */
  private readonly tail: string[] = [];
  private tailed = 0;
  private readonly limiter: LineLimiter;

  constructor(
    private readonly write: (level: Level, message: string) => void,
    linesPerSecond: number,
  ) {
    this.limiter = new LineLimiter(
      linesPerSecond,
      (line) => this.hold(line),
      (n) => {
        this.flush();
        this.write('warn', `${n} stderr lines suppressed`);
      },
      linesPerSecond * BURST_SECONDS,
    );
  }

  line(text: string): void {
    this.tail[this.tailed % TAIL_LINES] = text.length > TAIL_LINE_CHARS ? `${text.slice(0, TAIL_LINE_CHARS)}…` : text;
    this.tailed += 1;
    this.limiter.offer(text);
  }

  /** The process wrote a JSON-RPC message: what it wrote on stderr before is one entry, and no longer its last words. */
  spoke(): void {
    if (this.held.length > 0) this.flush();
    this.tailed = 0;
  }

  /** The meaningful part of what the process wrote last (meaningfulTail), empty when it wrote nothing. */
  reason(): string {
    const kept = Math.min(this.tailed, TAIL_LINES);
    const lines = Array.from({ length: kept }, (_, i) => this.tail[(this.tailed - kept + i) % TAIL_LINES] as string);
    return meaningfulTail(lines).join('\n');
  }

  /** The process ended; `failed`: on its own, so its last entry is an error. */
  end(failed: boolean): void {
    this.limiter.dispose();
    this.flush(failed ? 'error' : undefined);
  }

  private hold(line: string): void {
    if (this.held.length === 0) this.heldSince = Date.now();
    this.held.push(line);
    this.heldChars += line.length + 1;
    if (this.held.length >= MAX_ENTRY_LINES || this.heldChars >= MAX_ENTRY_CHARS || Date.now() - this.heldSince >= MAX_AGE_MS) {
      this.flush();
      return;
    }
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.flush(), QUIET_MS);
    this.timer.unref();
  }

  private flush(level?: Level): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.held.length === 0) return;
    const lines = this.held;
    this.held = [];
    this.heldChars = 0;
    this.write(level ?? (lines.some((l) => LOOKS_WRONG.test(l)) ? 'warn' : 'info'), lines.join('\n'));
  }
}

/** Lines that say nothing by themselves: indented ones (stack frames, source and object dumps), trailers, rules. */
const NOISE = [
  /^\s*$/,
  /^\s/,
  /^[{}[\](),;^~=*_#+|.-]+$/,
  /^Node\.js v\d/,
  /^Traceback \(most recent call last\):$/,
  /^\(Use `node --trace-/,
  /^npm (ERR!|error)( \d+)?\s*$/,
  /^npm (ERR!|error) (A complete log of this run|Log files were not written)/,
];
/** The first line of Node's excerpt of the source that threw: `file:line`, the line, then a caret line. */
const EXCERPT_HEAD = /^\S+:\d+$/;
const CARET = /^\s*\^+\s*$/;
const SAYS_WHY =
  /\b(error|exception|fatal|panic|cannot|can't|could not|not found|no such|failed|denied|refused|invalid|missing|unknown|unsupported)\b|^\w*(Error|Exception)\b/i;

/**
 * The last lines of a process's stderr that say why it failed, at most five and 1,000 characters: stack frames,
 * source excerpts, object dumps and runtime trailers are left out, and leading lines that do not look like an
 * error are dropped when some do. `Error: Cannot find module '/x.js'` out of Node's 15 lines, Python's last line.
 */
export function meaningfulTail(lines: readonly string[]): string[] {
  const kept: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (EXCERPT_HEAD.test(line)) {
      const caret = lines.slice(i + 1, i + 4).findIndex((l) => CARET.test(l));
      if (caret >= 0) {
        i += caret + 1;
        continue;
      }
    }
    if (!NOISE.some((re) => re.test(line))) kept.push(line.trimEnd());
  }
  let last = kept.slice(-REASON_LINES);
  const firstWhy = last.findIndex((l) => SAYS_WHY.test(l));
  if (firstWhy > 0) last = last.slice(firstWhy);
  while (last.length > 1 && last.join('\n').length > REASON_CHARS) last = last.slice(1);
  const only = last[0];
  if (last.length === 1 && only !== undefined && only.length > REASON_CHARS) last = [`${only.slice(0, REASON_CHARS)}…`];
  return last;
}
