import { mkdirSync } from 'node:fs';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import type { ServiceSpec } from '../catalog.js';
import type { Channel } from './channel.js';
import { responseIdOf } from './json-head.js';
import { LineLimiter } from './line-limiter.js';
import { LineSplitter } from './line-splitter.js';
import type { MemoryWatch } from './memory-watch.js';
import { type SpawnedGroup, spawnGroup, stopGroup } from './process-group.js';
import { StderrLog } from './stderr-log.js';
import { StdinWriter } from './stdin-writer.js';
import type { ServiceLogWriter } from './types.js';

/** A JSON-RPC line can carry a large tool result (images, files); beyond this it is dropped. */
const MAX_MESSAGE_BYTES = 8 * 1024 * 1024;
const MAX_STDERR_LINE = 64 * 1024;
/**
 * After the process group is gone, how long its pipes may take to deliver what it wrote last: the
 * exit is often seen before the output, and a crashing server's last lines are the ones that matter.
 * Bounded, because a process that left the group could hold the pipes open for ever.
 */
const PIPE_DRAIN_MS = 1_000;

export interface StdioChannelOptions {
  spec: ServiceSpec;
  env: Record<string, string>;
  cwd: string;
  serviceLog: ServiceLogWriter;
  logger: Logger;
  stopGraceMs: number;
  stderrLinesPerSecond: number;
  /** How long a process may take none of its waiting input before it "is not reading its input". */
  stdinStallMs: number;
  /** The process started; it (and its group) ended. Each called once, for the metrics. */
  onSpawn?: () => void;
  onExit?: () => void;
  /** The resident-memory cap (memory-watch.ts): the process is stopped when its family goes over it. */
  memory?: MemoryWatch;
}

const isJsonRpc = (value: unknown): value is JSONRPCMessage =>
  typeof value === 'object' && value !== null && (value as { jsonrpc?: unknown }).jsonrpc === '2.0';

/**
 * Our own newline-delimited JSON-RPC over a child's stdin/stdout (the SDK's StdioClientTransport
 * stops only the direct child). stderr and anything on stdout that is not JSON-RPC go to the
 * service log, rate-limited; nothing a process writes can throw here.
 */
export class StdioChannel implements Channel {
  onmessage: (message: JSONRPCMessage) => void = () => undefined;
  onclose: (reason: string) => void = () => undefined;
  private finished = false;
  /** close() was called: the end is ours, not news for the link. */
  private closing = false;
  private stopping: Promise<void> | undefined;
  private exitReason = 'exited';
  /** Why the gateway stopped the process on its own (memory): reported instead of the signal that ended it. */
  private stopReason: string | undefined;
  private readonly unwatch: () => void;
  private readonly stderrLog: StderrLog;
  private readonly noiseLog: LineLimiter;
  private readonly input: StdinWriter;
  /** Both pipes have ended (or were destroyed) and the process has exited: Node's 'close'. */
  private readonly pipesClosed: Promise<void>;

  private constructor(
    private readonly group: SpawnedGroup,
    private readonly opts: StdioChannelOptions,
  ) {
    const { spec, serviceLog } = opts;
    const write = (level: 'info' | 'warn' | 'error', message: string) =>
      serviceLog.write({ serviceId: spec.id, serviceName: spec.name, phase: 'run', level, message });
    this.stderrLog = new StderrLog(write, opts.stderrLinesPerSecond);
    this.noiseLog = new LineLimiter(
      5,
      (line) => write('warn', `ignored non-JSON-RPC output on stdout: ${line.slice(0, 500)}`),
      (n) => write('warn', `${n} more non-JSON-RPC stdout lines ignored`),
    );
    this.input = new StdinWriter(group.child.stdin, opts.stdinStallMs);
    this.pipesClosed = new Promise((resolve) => group.child.once('close', () => resolve()));
    this.unwatch = opts.memory?.watch(group.instance, (rss, limit) => this.overMemory(rss, limit)) ?? (() => undefined);
    this.wire();
    opts.onSpawn?.();
  }

  static async open(opts: StdioChannelOptions): Promise<StdioChannel> {
    mkdirSync(opts.cwd, { recursive: true });
    const group = await spawnGroup(opts.spec.command, opts.spec.args, opts.cwd, opts.env);
    return new StdioChannel(group, opts);
  }

  get pid(): number {
    return this.group.pid;
  }

  private wire(): void {
    const { child } = this.group;
    const stdout = new LineSplitter(
      MAX_MESSAGE_BYTES,
      (line) => this.receive(line),
      (bytes, head, tail) => this.oversized(bytes, head, tail),
    );
    const stderr = new LineSplitter(
      MAX_STDERR_LINE,
      (line) => this.stderrLog.line(line),
      (bytes) => this.stderrLog.line(`(a stderr line of ${bytes} bytes was dropped)`),
    );
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.stdout.once('end', () => stdout.end());
    child.stderr.once('end', () => stderr.end());
    // EPIPE after the process died: the exit handler reports it.
    child.stdin.on('error', (err) => this.opts.logger.debug({ err, pid: this.pid }, 'stdin error'));
    child.stdout.on('error', () => undefined);
    child.stderr.on('error', () => undefined);
    child.on('error', (err) => this.opts.logger.warn({ err, pid: this.pid }, 'tool server process error'));
    // A listener, not the `exited` promise: 'close' may follow 'exit' within the same tick.
    child.once('exit', (code, signal) => {
      this.exitReason = this.stopReason ?? (signal ? `killed by ${signal}` : `exited with code ${code}`);
      // The leader is gone: whatever it left in its group goes too, its last output is read, then
      // the link learns of it.
      this.stopping ??= stopGroup(this.group, this.opts.stopGraceMs);
      void this.stopping.then(() => this.drained()).then(() => this.finish());
    });
    child.once('close', () => this.finish());
  }

  private receive(line: string): void {
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      this.noiseLog.offer(line);
      return;
    }
    if (!isJsonRpc(message)) {
      this.noiseLog.offer(line);
      return;
    }
    this.receiveMessage(message);
  }

  private receiveMessage(message: JSONRPCMessage): void {
    this.stderrLog.spoke();
    try {
      this.onmessage(message);
    } catch (err) {
      this.opts.logger.error({ err }, 'upstream message handler failed');
    }
  }

  /**
   * A line over the limit is dropped; when it was the answer to a request, that request is answered
   * with an error now rather than waiting for its timeout.
   */
  private oversized(bytes: number, head: string, tail: Buffer): void {
    const mib = (bytes / 1024 / 1024).toFixed(1);
    // Output without its newline glues the next message to it: a JSON-RPC message at the line's end is
    // delivered (or, cut, its request answered with an error) instead of being lost with the junk.
    const headId = responseIdOf(head);
    const glued = headId === undefined ? gluedMessageOf(tail) : undefined;
    if (glued) {
      this.opts.serviceLog.write({
        serviceId: this.opts.spec.id,
        serviceName: this.opts.spec.name,
        phase: 'run',
        level: 'warn',
        message: `${bytes - glued.bytes} bytes on stdout without a newline, over the 8 MiB limit, were dropped; the message written after them was kept`,
      });
      if ('message' in glued) this.receiveMessage(glued.message);
      else
        this.receiveMessage({
          jsonrpc: '2.0',
          id: glued.id,
          error: { code: -32603, message: 'the tool server wrote an answer glued to output over the 8 MiB limit; it was dropped' },
        });
      return;
    }
    const id = headId;
    // Not rate-limited with the noise: each costs 8 MiB of output, so they cannot come fast, and they matter.
    this.opts.serviceLog.write({
      serviceId: this.opts.spec.id,
      serviceName: this.opts.spec.name,
      phase: 'run',
      level: 'warn',
      message: `a line of ${bytes} bytes on stdout, over the 8 MiB limit, was dropped${id === undefined ? '' : ' (the answer to a request, which got an error instead)'}`,
    });
    if (id === undefined) return;
    this.receiveMessage({
      jsonrpc: '2.0',
      id,
      error: { code: -32603, message: `the tool server's answer was ${mib} MiB, over the gateway's 8 MiB limit per message` },
    });
  }

  /** Its processes use more memory than STDIO_MAX_RSS_MB allows: stopped, its calls answered, restarted by the link. */
  private overMemory(rss: number, limit: number): void {
    if (this.finished || this.closing) return;
    const mib = (bytes: number) => Math.round(bytes / 1024 / 1024);
    this.stopReason = `stopped by the gateway: it used ${mib(rss)} MiB of memory, over the limit of ${mib(limit)} MiB (STDIO_MAX_RSS_MB)`;
    this.opts.serviceLog.write({
      serviceId: this.opts.spec.id,
      serviceName: this.opts.spec.name,
      phase: 'run',
      level: 'error',
      message: `tool server ${this.stopReason}`,
    });
    this.opts.logger.warn({ pid: this.pid, rss, limit, service: this.opts.spec.name }, 'tool server over its memory limit: stopping it');
    this.stopping ??= stopGroup(this.group, this.opts.stopGraceMs);
  }

  /** Waits, boundedly, for the pipes to deliver what the stopped group wrote last. */
  private async drained(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.pipesClosed, new Promise<void>((resolve) => (timer = setTimeout(resolve, PIPE_DRAIN_MS)))]);
    clearTimeout(timer);
  }

  private finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.unwatch();
    // Ended on its own: what it wrote last on stderr says why, in the reason the link, the health and the log give.
    const failed = !this.closing && this.stopReason === undefined;
    const why = failed ? this.stderrLog.reason() : '';
    if (why) this.exitReason = `${this.exitReason}: ${this.opts.serviceLog.redact(why)}`;
    this.input.fail(new Error(`tool server process ${this.stopReason ?? this.exitReason}`));
    this.opts.onExit?.();
    this.noiseLog.dispose();
    this.stderrLog.end(failed);
    if (!this.closing) this.onclose(this.exitReason);
  }

  /** Written at once, or, to a process behind on its input, once the pipe takes it (stdin-writer.ts). */
  send(message: JSONRPCMessage): Promise<void> | undefined {
    const { stdin } = this.group.child;
    if (this.finished || this.stopping || !stdin.writable) throw new Error(`tool server process ${this.stopReason ?? this.exitReason}`);
    return this.input.send(message);
  }

  async close(): Promise<void> {
    this.closing = true;
    this.input.fail(new Error('tool server process stopped'));
    this.group.child.stdin.end();
    this.stopping ??= stopGroup(this.group, this.opts.stopGraceMs);
    await this.stopping;
    await this.drained();
    this.finish();
    this.group.child.stdout.destroy();
    this.group.child.stderr.destroy();
  }
}

/**
 * The JSON-RPC message at the end of an oversized line: from the last `{"jsonrpc"` to the end, when
 * that is a whole message, or else the id of the response it begins (a cut one). Undefined when the
 * line ends in anything else. `bytes`: how long that end is.
 */
function gluedMessageOf(tail: Buffer): (({ message: JSONRPCMessage } | { id: number | string }) & { bytes: number }) | undefined {
  let at = tail.lastIndexOf('{"jsonrpc"');
  while (at >= 0) {
    const text = tail.toString('utf8', at).replace(/\r$/, '');
    try {
      const parsed: unknown = JSON.parse(text);
      if (isJsonRpc(parsed)) return { message: parsed, bytes: tail.length - at };
    } catch {
      // The message itself holds `{"jsonrpc"` (a nested one, in text): try an earlier start.
      const id = responseIdOf(text);
      if (id !== undefined) return { id, bytes: tail.length - at };
    }
    if (at === 0) break;
    at = tail.lastIndexOf('{"jsonrpc"', at - 1);
  }
  return undefined;
}
