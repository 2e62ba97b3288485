import type { ServerResponse } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import { type DispatchDeps, Dispatcher } from './downstream/dispatcher.js';

/** How often a shutdown looks again whether the proxied work has finished. */
const POLL_MS = 20;

/**
 * The proxied work in progress on this replica, so that a shutdown lets it finish (docs/operations.md,
 * "Graceful shutdown"). Three things are counted, and together they cover a request from its arrival
 * to its answer on both transports: proxy POSTs until their response is sent (or the client left),
 * dispatches until their requests are handed to an upstream link, and requests waiting on a link.
 */
export class ProxyWork {
  private active = 0;

  constructor(private readonly upstreamInFlight: () => number) {}

  /** A proxy POST: counted until its response has been sent or its connection is gone. */
  track(res: ServerResponse): void {
    this.active += 1;
    res.once('close', () => {
      this.active -= 1;
    });
  }

  begin(): void {
    this.active += 1;
  }

  end(): void {
    this.active -= 1;
  }

  get pending(): number {
    return this.active + this.upstreamInFlight();
  }

  /** Waits until nothing is pending or `graceMs` has passed; returns what is still pending. */
  async settle(graceMs: number): Promise<number> {
    const deadline = Date.now() + graceMs;
    while (this.pending > 0 && Date.now() < deadline) await delay(POLL_MS);
    return this.pending;
  }
}

/** The dispatcher, with each dispatch counted as proxied work until it has handed its requests on. */
export class DrainingDispatcher extends Dispatcher {
  constructor(
    private readonly work: ProxyWork,
    deps: DispatchDeps,
  ) {
    super(deps);
  }

  override async dispatch(...args: Parameters<Dispatcher['dispatch']>): Promise<void> {
    this.work.begin();
    try {
      await super.dispatch(...args);
    } finally {
      this.work.end();
    }
  }
}
