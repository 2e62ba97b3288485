import { type McpClient, textOf } from '../gateway/clients.js';

/** Outages of the metering fault suites: short by default, minutes with METER_FAULT_LONG=1 (docs/operations.md). */
export const OUTAGE_MS = process.env.METER_FAULT_LONG === '1' ? 120_000 : 2_000;

/**
 * Counted calls (`echo`) from several clients until every client has been refused by the daily limit
 * (or `stop()`): how many were answered, how many refused and with which messages, and anything else
 * that went wrong. `onAnswer` runs after each answer (a fault is injected from it).
 */
export class MeteredLoad {
  ok = 0;
  refusals: string[] = [];
  failures: string[] = [];
  private stopped = false;
  private readonly done: Promise<void>;

  constructor(clients: McpClient[], opts: { pauseMs?: number; timeoutMs?: number } = {}) {
    this.done = Promise.all(
      clients.map(async (client, i) => {
        for (let n = 0; !this.stopped; n++) {
          try {
            const text = textOf(await client.callTool('echo', { text: `${i}-${n}` }, { timeout: opts.timeoutMs ?? 20_000 }));
            if (text !== `echo: ${i}-${n}`) throw new Error(`unexpected answer ${text}`);
            this.ok += 1;
          } catch (err) {
            const message = (err as Error).message;
            if (/daily request limit exceeded/.test(message)) {
              this.refusals.push(message);
              return;
            }
            this.failures.push(message);
          }
          if (opts.pauseMs) await new Promise((r) => setTimeout(r, opts.pauseMs));
        }
      }),
    ).then(() => undefined);
  }

  /** Resolves when every client was refused (or stop() was called). */
  finished(): Promise<void> {
    return this.done;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.done;
  }
}
