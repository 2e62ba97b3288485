import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Locale, localeFrom, translate } from '../../i18n/index.js';
import { type ProxyFailure, RpcCode } from './rpc-errors.js';

/** The SDK's own cap on a request body; the proxy enforces it before parsing anything. */
export const BODY_LIMIT = 4 * 1024 * 1024;

/**
 * How long a proxy body may take when no deadline is given: half of HTTP_REQUEST_TIMEOUT_MS's default,
 * so the proxy answers before Node's own request timeout cuts the connection.
 */
export const BODY_DEADLINE_MS = 30_000;

/**
 * Why a body could not be read: over the size limit, not complete by the deadline (a client that
 * trickles it), or the client went away (nobody left to answer).
 */
export type BodyResult = { ok: true; text: string; bytes: number } | { ok: false; reason: 'too_large' | 'timeout' | 'gone' };

/**
 * Reads the raw request body up to `limit` bytes within `deadlineMs`; beyond either it stops reading
 * and reports it. What was read so far is released at once.
 */
export function readBody(req: IncomingMessage, limit = BODY_LIMIT, deadlineMs = BODY_DEADLINE_MS): Promise<BodyResult> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return Promise.resolve({ ok: false, reason: 'too_large' });
  if (req.complete && req.readableEnded) return Promise.resolve({ ok: true, text: '', bytes: 0 });
  return new Promise((resolve) => {
    let chunks: Buffer[] = [];
    let size = 0;
    const stop = (reason: 'too_large' | 'timeout' | 'gone') => {
      cleanup();
      chunks = [];
      // The rest of an oversized body is drained; a late or broken one is not waited for.
      if (reason === 'too_large') req.resume();
      resolve({ ok: false, reason });
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) return stop('too_large');
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      const buf = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
      resolve({ ok: true, text: buf.toString('utf8'), bytes: size });
    };
    const onGone = () => stop('gone');
    const timer = setTimeout(() => stop('timeout'), deadlineMs);
    const cleanup = () => {
      clearTimeout(timer);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onGone);
      req.off('aborted', onGone);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onGone);
    req.on('aborted', onGone);
  });
}

/** The language of a proxy request's error messages: English unless Accept-Language asks for Chinese. */
export const localeOf = (req: IncomingMessage): Locale => localeFrom(req.headers['accept-language']);

/** A proxy body that did not arrive in time: 408, and the connection is closed after the answer. */
export function bodyTimeout(req: IncomingMessage, deadlineMs: number): ProxyFailure {
  return {
    status: 408,
    code: RpcCode.ServerError,
    message: translate(localeOf(req), 'proxy.body_timeout', { seconds: Math.ceil(deadlineMs / 1000) }),
    headers: { connection: 'close' },
  };
}

/** Accept is a list of media ranges; a plain substring check is what the SDK transport does too. */
export const accepts = (req: IncomingMessage, type: string): boolean => {
  const accept = req.headers.accept;
  return accept !== undefined && (accept.includes(type) || accept.includes('*/*'));
};

/** `application/json`, with or without parameters (charset), by media type, never by substring. */
export function isJsonContentType(value: string | undefined): boolean {
  if (!value) return false;
  const semi = value.indexOf(';');
  return (semi === -1 ? value : value.slice(0, semi)).trim().toLowerCase() === 'application/json';
}

/**
 * Runs `left` once when the client's connection is gone. A response whose connection closed before this was
 * called (the client left while its request was being checked) has emitted 'close' already and will not
 * again: `left` then runs at once.
 */
export function onClientGone(res: ServerResponse, left: () => void): void {
  if (res.closed) left();
  else res.on('close', left);
}

export const SSE_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  // Tells nginx and friends not to buffer the stream.
  'x-accel-buffering': 'no',
} as const;

/** One server-sent event carrying one JSON-RPC message (JSON text never holds a raw newline). */
export const sseMessage = (json: string): string => `event: message\ndata: ${json}\n\n`;

/** What an event stream may hold unsent when no bound is given (PROXY_STREAM_BUFFER_BYTES' default). */
export const STREAM_BUFFER_BYTES = 4 * 1024 * 1024;

/**
 * The bound on what a response may hold unsent for a client that does not read: past `maxBytes`
 * the response is destroyed (its memory freed) and `overflow` is told, once.
 */
export interface BufferBound {
  maxBytes: number;
  overflow(buffered: number): void;
}

const DEFAULT_BOUND: BufferBound = { maxBytes: STREAM_BUFFER_BYTES, overflow: () => undefined };

/**
 * Writes `chunk` unless the response is gone. When what earlier writes left unsent (Node's buffer and
 * the socket's, not the kernel's) already exceeds the bound, the client is not keeping up: the response
 * is destroyed instead. One large message to a client that reads is always sent whole, however big
 * (a tool result with an image), and a client that reads keeps up between messages. Returns what was
 * held unsent right after the write: at most the bound plus this one chunk.
 */
export function boundedWrite(res: ServerResponse, chunk: string, bound: BufferBound): number {
  if (res.destroyed || res.writableEnded) return 0;
  const before = res.writableLength;
  if (before > bound.maxBytes) {
    res.destroy();
    bound.overflow(before);
    return before;
  }
  res.write(chunk);
  return res.writableLength;
}

/**
 * A server-sent-events response that stays open: the GET stream of a streamable HTTP session or the
 * legacy SSE stream. Writes after the client left are dropped. A client that stops reading is cut
 * off once more than `bound.maxBytes` wait to be sent (a slow reader must not hold the gateway's memory).
 */
export class SseStream {
  private closed = false;
  /** The most this stream ever held unsent (right after a write). */
  peakBuffered = 0;

  constructor(
    private readonly res: ServerResponse,
    headers: Record<string, string> = {},
    onClose?: () => void,
    private readonly bound: BufferBound = DEFAULT_BOUND,
  ) {
    res.writeHead(200, { ...SSE_HEADERS, ...headers });
    res.flushHeaders();
    const gone = () => {
      this.closed = true;
      onClose?.();
    };
    // Gone already (the client left while its stream was being set up): closed once the caller has registered it,
    // which it does right after this constructor (`onClose` may name the stream being built).
    if (res.closed) queueMicrotask(gone);
    else res.on('close', gone);
  }

  get open(): boolean {
    return !this.closed && !this.res.writableEnded && !this.res.destroyed;
  }

  private write(chunk: string): void {
    if (!this.open) return;
    const buffered = boundedWrite(this.res, chunk, this.bound);
    if (buffered > this.peakBuffered) this.peakBuffered = buffered;
  }

  event(name: string, data: string): void {
    this.write(`event: ${name}\ndata: ${data}\n\n`);
  }

  message(json: string): void {
    this.write(sseMessage(json));
  }

  /** A comment line: keeps proxies and load balancers from closing an idle stream. */
  keepAlive(): void {
    this.write(': keep-alive\n\n');
  }

  close(): void {
    if (this.open) this.res.end();
    this.closed = true;
  }
}
