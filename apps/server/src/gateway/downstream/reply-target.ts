import type { ServerResponse } from 'node:http';
import type { JSONRPCError, JSONRPCRequest, JSONRPCResponse } from '@modelcontextprotocol/sdk/types.js';
import type { Locale } from '../../i18n/index.js';
import { type BufferBound, boundedWrite, SSE_HEADERS, sseMessage } from './http-io.js';
import type { DownstreamSession } from './session.js';

/** Where the answers to the requests of one incoming message (or batch) go; JSON already serialised. */
export interface ReplyTarget {
  /** A notification tied to one of the requests (progress, a log while it is the only one in flight). */
  notification(json: string): void;
  /** A final answer; `status` is the HTTP status it calls for when it is the only request of the POST. */
  response(json: string, status?: number): void;
  /**
   * A server-to-client request caused by one of the requests, written where their answers go; false
   * when it cannot be written there (answered already, the client gone).
   */
  serverRequest?(json: string): boolean;
  /**
   * A target that answers a server-to-client request itself rather than writing it to the client: the
   * 2026-07-28 era's input-required round trip (modern.ts). Resolves with the client's answer.
   */
  ask?(message: JSONRPCRequest, timeoutMs: number): Promise<JSONRPCResponse | JSONRPCError>;
  /** The language of the gateway's own error messages to this client (en by default). */
  readonly locale?: Locale;
}

/**
 * The answer to one streamable HTTP POST, with the JSON fast path of docs/architecture.md §5: while only
 * responses arrive they are collected and sent as one `application/json` body; the first
 * notification that comes before them switches the reply to `text/event-stream`, which then
 * carries everything up to the last response.
 */
export class PostReply implements ReplyTarget {
  private streaming = false;
  private collected: string[] = [];
  private remaining: number;
  private status = 200;

  constructor(
    private readonly res: ServerResponse,
    private readonly expected: number,
    private readonly batch: boolean,
    private readonly headers: Record<string, string>,
    readonly locale: Locale = 'en',
    /** Once streaming, a client that does not read is cut off past this bound (its requests are then cancelled). */
    private readonly bound?: BufferBound,
  ) {
    this.remaining = expected;
  }

  private write(chunk: string): void {
    if (this.bound) boundedWrite(this.res, chunk, this.bound);
    else this.res.write(chunk);
  }

  private get gone(): boolean {
    return this.res.destroyed || this.res.writableEnded;
  }

  notification(json: string): void {
    if (this.remaining === 0 || this.gone) return;
    if (!this.streaming) this.startStream();
    this.write(sseMessage(json));
  }

  serverRequest(json: string): boolean {
    if (this.remaining === 0 || this.gone) return false;
    // A request the client must answer before it gets its response: the reply becomes an event stream.
    if (!this.streaming) this.startStream();
    this.write(sseMessage(json));
    return true;
  }

  response(json: string, status?: number): void {
    if (this.remaining === 0) return;
    this.remaining -= 1;
    if (this.gone) return;
    if (this.streaming) {
      this.write(sseMessage(json));
      if (this.remaining === 0 && !this.gone) this.res.end();
      return;
    }
    this.collected.push(json);
    if (status !== undefined && this.expected === 1) this.status = status;
    if (this.remaining === 0) this.sendJson();
  }

  private startStream(): void {
    this.streaming = true;
    this.res.writeHead(200, { ...SSE_HEADERS, ...this.headers });
    for (const json of this.collected) this.write(sseMessage(json));
    this.collected = [];
  }

  private sendJson(): void {
    const body = this.batch ? `[${this.collected.join(',')}]` : (this.collected[0] as string);
    this.res.writeHead(this.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...this.headers });
    this.res.end(body);
  }
}

/** The legacy HTTP+SSE transport: every answer travels on the session's one SSE stream. */
export class StreamReply implements ReplyTarget {
  constructor(
    private readonly session: DownstreamSession,
    readonly locale: Locale = 'en',
  ) {}

  notification(json: string): void {
    this.session.stream?.message(json);
  }

  response(json: string): void {
    this.session.stream?.message(json);
  }

  serverRequest(json: string): boolean {
    if (!this.session.stream?.open) return false;
    this.session.stream.message(json);
    return true;
  }
}
