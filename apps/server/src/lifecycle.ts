import type { Logger } from 'pino';

/**
 * One part of a built graph, as the lifecycle knows it: a name for the logs, and what it does when the
 * whole starts and when it closes. Both are optional: a store that only needs closing registers a close.
 */
export interface Part {
  name: string;
  start?: () => unknown;
  close?: () => unknown;
  /** How long this close may take before the next one begins (the policy's `closeTimeoutMs` otherwise). */
  closeTimeoutMs?: number;
}

export interface LifecyclePolicy {
  logger: Pick<Logger, 'warn' | 'error' | 'debug'>;
  /** The default bound of one part's close; a close still running then is logged and left behind. */
  closeTimeoutMs?: number;
}

/** What a close did: the parts whose close threw, and those still running when their time was up. */
export interface CloseReport {
  failed: string[];
  timedOut: string[];
}

const DEFAULT_CLOSE_TIMEOUT_MS = 15_000;

/**
 * The one start and close path of a built graph (docs/decisions/0062-one-lifecycle.md). Builders register
 * each part as they build it; `start` runs the starts in that order, `close` the closes in the reverse.
 *
 * The policy:
 * - every part's close runs once, even when `close` is called again or concurrently (the same promise);
 * - a close that throws is logged (error, with the part's name) and the next one runs all the same;
 * - a close is awaited at most its `closeTimeoutMs`: then a warning is logged and the next one runs (the
 *   late close keeps running, and a failure of it later is logged too);
 * - a start that throws closes every part registered so far (reverse order, same policy) and is rethrown;
 * - a part registered after `close` began is closed at once (a build that was still running).
 */
export class Lifecycle {
  private readonly parts: Part[] = [];
  private closing: Promise<CloseReport> | undefined;
  private started = 0;
  private closingNow: string | undefined;

  constructor(private readonly policy: LifecyclePolicy) {}

  /** Registers a part; returns it, so a builder can register and keep what it built in one line. */
  add(part: Part): Part {
    if (this.closing) {
      void this.closeOne(part, { failed: [], timedOut: [] });
      return part;
    }
    this.parts.push(part);
    return part;
  }

  /** The names, in build order (tests and the logs). */
  get names(): string[] {
    return this.parts.map((p) => p.name);
  }

  /** The part whose close is being awaited now (a close that hangs names itself: tests print it). */
  get closingPart(): string | undefined {
    return this.closingNow;
  }

  /** Runs the starts not run yet, in build order. A failure closes everything and is rethrown. */
  async start(): Promise<void> {
    for (; this.started < this.parts.length; this.started++) {
      const part = this.parts[this.started] as Part;
      try {
        await part.start?.();
      } catch (err) {
        this.policy.logger.error({ err, part: part.name }, 'start failed: closing what was built');
        await this.close();
        throw err;
      }
    }
  }

  /** Closes every part in reverse build order, each once; resolves when all are done or timed out. */
  close(): Promise<CloseReport> {
    this.closing ??= (async () => {
      const report: CloseReport = { failed: [], timedOut: [] };
      for (const part of [...this.parts].reverse()) await this.closeOne(part, report);
      return report;
    })();
    return this.closing;
  }

  private async closeOne(part: Part, report: CloseReport): Promise<void> {
    if (!part.close) return;
    const { logger } = this.policy;
    const limit = part.closeTimeoutMs ?? this.policy.closeTimeoutMs ?? DEFAULT_CLOSE_TIMEOUT_MS;
    const began = Date.now();
    this.closingNow = part.name;
    let timer: NodeJS.Timeout | undefined;
    const running = (async () => part.close?.())().then(
      () => 'closed' as const,
      (err: unknown) => {
        logger.error({ err, part: part.name }, 'close failed');
        return 'failed' as const;
      },
    );
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), limit);
      timer.unref();
    });
    const outcome = await Promise.race([running, late]);
    this.closingNow = undefined;
    clearTimeout(timer);
    if (outcome === 'failed') report.failed.push(part.name);
    if (outcome === 'late') {
      report.timedOut.push(part.name);
      logger.warn({ part: part.name, ms: limit }, 'close did not finish in time: going on with the next part');
    }
    logger.debug({ part: part.name, ms: Date.now() - began, outcome }, 'closed');
  }
}
