import type { IncomingMessage, ServerResponse } from 'node:http';

/** The SDK's own cap on a request body; the proxy enforces it before parsing anything. */
export const BODY_LIMIT = 4 * 1024 * 1024;

export type BodyResult = { ok: true; text: string; bytes: number } | { ok: false; tooLarge: true };

/** Reads the raw request body up to `limit` bytes; beyond it stops reading and reports it. */
export function readBody(req: IncomingMessage, limit = BODY_LIMIT): Promise<BodyResult> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return Promise.resolve({ ok: false, tooLarge: true });
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        req.resume();
        resolve({ ok: false, tooLarge: true });
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      const buf = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
      resolve({ ok: true, text: buf.toString('utf8'), bytes: size });
    };
    const onError = (err: Error) => {
      cleanup();
      reject(err);
    };
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
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

export const SSE_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  // Tells nginx and friends not to buffer the stream.
  'x-accel-buffering': 'no',
} as const;

/** One server-sent event carrying one JSON-RPC message (JSON text never holds a raw newline). */
export const sseMessage = (json: string): string => `event: message\ndata: ${json}\n\n`;

/**
 * A server-sent-events response that stays open: the GET stream of a streamable HTTP session or the
 * legacy SSE stream. Writes after the client left are dropped.
 */
export class SseStream {
  private closed = false;

  constructor(
    private readonly res: ServerResponse,
    headers: Record<string, string> = {},
    onClose?: () => void,
  ) {
    res.writeHead(200, { ...SSE_HEADERS, ...headers });
    res.flushHeaders();
    res.on('close', () => {
      this.closed = true;
      onClose?.();
    });
  }

  get open(): boolean {
    return !this.closed && !this.res.writableEnded;
  }

  event(name: string, data: string): void {
    if (this.open) this.res.write(`event: ${name}\ndata: ${data}\n\n`);
  }

  message(json: string): void {
    if (this.open) this.res.write(sseMessage(json));
  }

  /** A comment line: keeps proxies and load balancers from closing an idle stream. */
  keepAlive(): void {
    if (this.open) this.res.write(': keep-alive\n\n');
  }

  close(): void {
    if (this.open) this.res.end();
    this.closed = true;
  }
}
