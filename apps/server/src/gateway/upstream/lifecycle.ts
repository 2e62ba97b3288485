import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { Backoff } from './backoff.js';
import { type Channel, errorText } from './channel.js';
import type { UpstreamTuning } from './types.js';

export type LinkState = 'stopped' | 'starting' | 'ready' | 'backoff' | 'closed';

/**
 * What one protocol era does on a connection (docs/decisions/0044): the seam between the lifecycle every link
 * shares and the era's wire dialect (link.ts for 2025-11-25, modern-link.ts for 2026-07-28).
 */
export interface EraDialect {
  /** Opens a fresh connection: spawns the process, or connects the remote transport. */
  open(): Promise<Channel>;
  /**
   * The era's opening on a fresh connection (`initialize`, or `server/discover`); resolves once the connection is
   * usable. `current()` says whether this connection is still the link's (a stop or a crash meanwhile makes it not).
   */
  handshake(channel: Channel, current: () => boolean): Promise<void>;
  /** Every message of the current connection. */
  receive(message: JSONRPCMessage): void;
  /** The connection became usable. */
  up(): void;
  /**
   * The connection is going away: its requests are answered with `reason`. `onPurpose`: a stop, restart or
   * close of a connection that was ready (it is told first which requests it can stop working on).
   */
  down(reason: string, onPurpose: boolean): void;
  /**
   * A start failed or a connection died; `restartInMs` when the link restarts by itself. `refused`: the server
   * refused this era (nothing restarts it, no backoff is counted: the other era serves it).
   */
  failed(reason: string, restartInMs: number | undefined, refused: boolean): void;
  /**
   * The start failed because the server does not speak this era at all (not a crash): what to add to the reason
   * (possibly ''), or undefined for any other failure.
   */
  refusal(err: unknown): string | undefined;
  /**
   * The stateless era judges a loss during its opening itself: a server of the 2025-11-25 era may exit on
   * `server/discover`, which says that it does not speak the revision, not that it crashed.
   */
  readonly judgesLossInOpening?: boolean;
}

export interface LifecycleOptions {
  tuning: Pick<UpstreamTuning, 'backoffBaseMs' | 'backoffMaxMs' | 'stableMs' | 'maxRestartWaitMs'>;
  /** Should be running: kept alive, or some session attached (a crash then restarts it by itself). */
  wanted(): boolean;
  /** A crash restart begins (metrics). */
  restarting?(): void;
}

/**
 * The life of one upstream connection, the same for both protocol eras (docs/decisions/0044):
 *
 * - `stopped` → `starting` (open, then the era's handshake) → `ready`; a start that fails, or a ready connection
 *   that dies, answers every request on it and goes to `backoff` for the next delay (1×, 2×, 4× the base … up to
 *   the cap; a connection that had run `stableMs` starts over at the base). When the delay ends, the link starts
 *   again if it is wanted (a session attached, or kept alive), else it is `stopped` and its next request starts it.
 * - A server that refuses the era (`refusesEra`) goes to `stopped` without a delay: nothing keeps retrying it.
 * - `ensureReady` means one thing in both eras: ready → go; stopped → start; starting → wait for the outcome;
 *   backoff → wait for the restart when it is at most `maxRestartWaitMs` away, else refuse at once with the reason;
 *   closed → refuse.
 * - Every connection has a generation: whatever an older one reports (a late message, its exit) is ignored.
 * - `stop` (idle, disabled) and `restart` forget the backoff; `close` ends the link for good.
 */
export class Lifecycle {
  state: LinkState = 'stopped';
  channel: Channel | undefined;
  /** Why the last start or connection failed (or why the link closed). */
  lastError = '';
  /** The last start failed because the server refused this era (see EraDialect.refusal); reset by the next start. */
  refusedEra = false;
  /** Bumped whenever the connection is replaced: callbacks of an older one are ignored. */
  private generation = 0;
  private readonly backoff: Backoff;
  private restartAt = 0;
  private restartTimer: NodeJS.Timeout | undefined;
  private waiters: (() => void)[] = [];

  constructor(
    private readonly dialect: EraDialect,
    private readonly opts: LifecycleOptions,
  ) {
    const { backoffBaseMs, backoffMaxMs, stableMs } = opts.tuning;
    this.backoff = new Backoff({ baseMs: backoffBaseMs, maxMs: backoffMaxMs, stableMs });
  }

  /** Starts the connection now if it is stopped (boot strategy); failures go to backoff. */
  wake(): void {
    if (this.state === 'stopped') this.begin();
  }

  /** Waits for a usable connection, starting one when needed (see the class comment). */
  async ensureReady(): Promise<void> {
    for (;;) {
      switch (this.state) {
        case 'ready':
          return;
        case 'closed':
          throw new Error(this.lastError || 'upstream link closed');
        case 'stopped':
          this.begin();
          break;
        case 'backoff':
          if (this.restartAt - Date.now() > this.opts.tuning.maxRestartWaitMs) {
            throw new Error(`restarting after a failure (${this.lastError})`);
          }
          await this.changed();
          break;
        case 'starting': {
          await this.changed();
          const now = this.state as LinkState;
          if (now !== 'ready' && now !== 'starting') throw new Error(this.lastError || 'upstream stopped');
          break;
        }
      }
    }
  }

  /** Stops the connection (idle, disabled); a later request starts it again. */
  async stop(reason: string): Promise<void> {
    this.backoff.reset();
    await this.halt(reason, 'stopped');
  }

  /** Stops for good: every later request is refused. */
  async close(reason: string): Promise<void> {
    if (this.state === 'closed') return;
    this.lastError = reason;
    await this.halt(reason, 'closed');
  }

  /**
   * Drops the connection and, when it is wanted, starts it again at once, the backoff forgotten (Reconnect, a new
   * configuration). A stopped link stays stopped (its next request starts it); a closed one stays closed.
   */
  async restart(reason: string): Promise<void> {
    if (this.state === 'closed' || this.state === 'stopped') return;
    await this.halt(reason, 'stopped');
    this.backoff.reset();
    // Closed or started by someone else meanwhile: nothing more to do.
    if ((this.state as LinkState) === 'stopped' && this.opts.wanted()) this.begin();
  }

  /** The remote upstream lost our session: a fresh connection at once, no backoff (link.ts retries the request). */
  renew(reason: string): void {
    this.generation += 1;
    const channel = this.channel;
    this.channel = undefined;
    void channel?.close();
    this.dialect.down(reason, false);
    this.begin();
  }

  /** The generation of the current connection, to tell later whether it is still the one (`isCurrent`). */
  get current(): number {
    return this.generation;
  }

  isCurrent(gen: number): boolean {
    return gen === this.generation;
  }

  private begin(): void {
    if (this.state === 'closed') return;
    this.generation += 1;
    this.refusedEra = false;
    this.setState('starting');
    void this.start(this.generation);
  }

  private async start(gen: number): Promise<void> {
    let channel: Channel | undefined;
    try {
      channel = await this.dialect.open();
      if (gen !== this.generation) {
        await channel.close();
        return;
      }
      this.channel = channel;
      channel.onmessage = (message) => {
        if (gen === this.generation) this.dialect.receive(message);
      };
      channel.onclose = (reason) => this.lost(gen, `tool server ${reason}`);
      await this.dialect.handshake(channel, () => gen === this.generation);
      if (gen !== this.generation) return;
      this.backoff.up();
      this.setState('ready');
      this.dialect.up();
    } catch (err) {
      if (gen !== this.generation) return;
      const note = this.dialect.refusal(err);
      this.failed(`could not start: ${errorText(err)}${note ?? ''}`, note !== undefined);
    }
  }

  /** The connection ended on its own (process exit, lost stream). */
  private lost(gen: number, reason: string): void {
    if (gen !== this.generation || this.state === 'closed') return;
    if (this.state === 'starting' && this.dialect.judgesLossInOpening) {
      // The handshake in flight is answered with the reason, and its failure decides (start above).
      this.dialect.down(reason, false);
      return;
    }
    this.failed(reason, false);
  }

  /** A start failed or a running connection died: answer everyone, then restart after the backoff (or stop). */
  private failed(reason: string, refused: boolean): void {
    this.generation += 1;
    const channel = this.channel;
    this.channel = undefined;
    void channel?.close();
    this.lastError = reason;
    this.dialect.down(`upstream unavailable: ${reason}`, false);
    if (refused) {
      this.refusedEra = true;
      this.setState('stopped');
      this.dialect.failed(reason, undefined, true);
      return;
    }
    const delay = this.backoff.failed();
    this.restartAt = Date.now() + delay;
    this.restartTimer = setTimeout(() => {
      if (this.state !== 'backoff') return;
      if (this.opts.wanted()) {
        this.opts.restarting?.();
        this.begin();
      } else this.setState('stopped');
    }, delay);
    this.restartTimer.unref?.();
    this.setState('backoff');
    this.dialect.failed(reason, this.opts.wanted() ? delay : undefined, false);
  }

  private async halt(reason: string, next: 'stopped' | 'closed'): Promise<void> {
    if (this.state === 'closed') return;
    this.generation += 1;
    clearTimeout(this.restartTimer);
    // A connection closed on purpose is told first which requests it can stop working on.
    if (this.state === 'ready') this.dialect.down(`upstream unavailable: ${reason}`, true);
    const channel = this.channel;
    this.channel = undefined;
    this.setState(next);
    this.dialect.down(`upstream unavailable: ${reason}`, false);
    await channel?.close();
  }

  private setState(state: LinkState): void {
    this.state = state;
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  private changed(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }
}
