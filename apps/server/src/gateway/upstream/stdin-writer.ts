import type { Writable } from 'node:stream';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

export interface StdinLimits {
  /** Input handed to the pipe while the process is behind; past it, messages wait their turn (not copied: the link holds them). */
  highWater: number;
  /** A large message goes to the pipe in pieces of this size, so the process's reading shows as it happens. */
  piece: number;
}

const LIMITS: StdinLimits = { highWater: 16 * 1024 * 1024, piece: 64 * 1024 };

interface Waiting {
  message: JSONRPCMessage;
  resolve: () => void;
  reject: (err: Error) => void;
}

/**
 * A tool server's stdin, with back-pressure that tells the truth (docs/decisions/0045). A process reading
 * slowly is not refused: what does not fit under the high-water mark waits, in order, and each waiting send
 * settles once it is handed to the pipe; the calls it carries stay bounded by the proxy's limits (calls in flight
 * per user and service, the body limit). Only a process that consumed nothing for `stallMs` while input was
 * waiting "is not reading its input": the waiting sends are refused then, and every new one until it reads
 * again. Progress is the pipe taking a piece of a message. The verdict waits two turns of the event loop after the
 * bound (libuv reports a finished write in the turn after it wrote it): a gateway whose loop was busy for a while
 * first hears the pieces the pipe took meanwhile.
 */
export class StdinWriter {
  private readonly waiting: Waiting[] = [];
  /** The last time the process took input, or input started to wait for it. */
  private progressAt = Date.now();
  private timer: NodeJS.Timeout | NodeJS.Immediate | undefined;

  constructor(
    private readonly stdin: Writable,
    private readonly stallMs: number,
    private readonly limits: StdinLimits = LIMITS,
  ) {}

  /** Nothing taken for the bound while input waits. */
  stalled(): boolean {
    return (this.stdin.writableLength > 0 || this.waiting.length > 0) && Date.now() - this.progressAt > this.stallMs;
  }

  get notReading(): Error {
    return new Error(`tool server is not reading its input (nothing read for ${Math.round(this.stallMs / 1000)} s)`);
  }

  /** Written now (undefined), or a promise that settles once the message is handed to the pipe or refused. */
  send(message: JSONRPCMessage): Promise<void> | undefined {
    if (this.waiting.length === 0 && this.stdin.writableLength < this.limits.highWater && !this.stalled()) {
      this.write(message);
      return undefined;
    }
    // A cancellation of a request still waiting here: neither needs to reach the process.
    if (this.withdraw(message)) return undefined;
    return new Promise((resolve, reject) => {
      this.waiting.push({ message, resolve, reject });
      this.watchStall();
    });
  }

  /** Refuses every waiting send (the process ended or is being stopped). */
  fail(err: Error): void {
    this.clearTimer();
    for (const each of this.waiting.splice(0)) each.reject(err);
  }

  private write(message: JSONRPCMessage): void {
    if (this.stdin.writableLength === 0) this.progressAt = Date.now();
    const line = `${JSON.stringify(message)}\n`;
    const { piece } = this.limits;
    if (line.length < piece) {
      this.stdin.write(line, this.took);
      return;
    }
    const bytes = Buffer.from(line);
    for (let at = 0; at < bytes.length; at += piece) this.stdin.write(bytes.subarray(at, at + piece), this.took);
  }

  private readonly took = (err?: Error | null): void => {
    if (err) return;
    this.progressAt = Date.now();
    while (this.waiting.length > 0 && this.stdin.writableLength < this.limits.highWater) {
      const next = this.waiting.shift() as Waiting;
      this.write(next.message);
      next.resolve();
    }
  };

  private withdraw(message: JSONRPCMessage): boolean {
    if (!('method' in message) || message.method !== 'notifications/cancelled') return false;
    const id = (message.params as { requestId?: unknown } | undefined)?.requestId;
    const at = this.waiting.findIndex((w) => 'id' in w.message && w.message.id === id && 'method' in w.message);
    if (at < 0) return false;
    const [withdrawn] = this.waiting.splice(at, 1);
    withdrawn?.resolve();
    return true;
  }

  /** While sends wait, looks again when the bound would run out, and once it has, two turns of I/O later. */
  private watchStall(): void {
    if (this.timer) return;
    const check = () => {
      this.timer = undefined;
      if (this.waiting.length === 0) return;
      if (this.stalled()) return this.fail(this.notReading);
      this.watchStall();
    };
    const later = () => (this.timer = setImmediate(() => (this.timer = setImmediate(check))));
    const left = this.progressAt + this.stallMs - Date.now() + 1;
    if (left <= 0) later();
    else this.timer = setTimeout(later, left).unref();
  }

  private clearTimer(): void {
    clearTimeout(this.timer as NodeJS.Timeout | undefined);
    clearImmediate(this.timer as NodeJS.Immediate | undefined);
    this.timer = undefined;
  }
}
