/**
 * Plain HTTP against the proxy routes, for what an SDK client hides: statuses, headers, bodies.
 */
export const ACCEPT_BOTH = 'application/json, text/event-stream';

export interface RawReply {
  status: number;
  headers: Headers;
  text: string;
  json(): unknown;
}

export async function raw(url: string, init: RequestInit & { headers?: Record<string, string> }): Promise<RawReply> {
  const res = await fetch(url, init);
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: () => JSON.parse(text) };
}

export function post(url: string, key: string | undefined, body: unknown, headers: Record<string, string> = {}): Promise<RawReply> {
  return raw(url, {
    method: 'POST',
    headers: {
      accept: ACCEPT_BOTH,
      'content-type': 'application/json',
      ...(key ? { authorization: `Bearer ${key}` } : {}),
      ...headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

export const initializeBody = (protocolVersion = '2025-06-18', id: number | string = 1) => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw-test', version: '1' } },
});

/** Initializes a session by hand and returns its id (after sending `notifications/initialized`). */
export async function openSession(url: string, key: string, protocolVersion = '2025-06-18'): Promise<string> {
  const init = await post(url, key, initializeBody(protocolVersion));
  if (init.status !== 200) throw new Error(`initialize failed: ${init.status} ${init.text}`);
  const id = init.headers.get('mcp-session-id');
  if (!id) throw new Error('initialize returned no session id');
  await post(url, key, { jsonrpc: '2.0', method: 'notifications/initialized' }, { 'mcp-session-id': id });
  return id;
}

/** The JSON-RPC messages of a `text/event-stream` body. */
export const sseMessages = (text: string): Record<string, unknown>[] =>
  text
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => JSON.parse(line.slice(6)));

/** Reads server-sent events off a streaming response, one at a time. */
export class SseReader {
  private buffer = '';
  private readonly queue: { event: string; data: string }[] = [];
  private readonly decoder = new TextDecoder();

  constructor(private readonly reader: ReadableStreamDefaultReader<Uint8Array>) {}

  static of(res: Response): SseReader {
    if (!res.body) throw new Error('response has no body');
    return new SseReader(res.body.getReader());
  }

  async next(): Promise<{ event: string; data: string }> {
    while (this.queue.length === 0) {
      const { value, done } = await this.reader.read();
      if (done) throw new Error('stream ended');
      this.buffer += this.decoder.decode(value, { stream: true });
      let end = this.buffer.indexOf('\n\n');
      while (end !== -1) {
        const block = this.buffer.slice(0, end);
        this.buffer = this.buffer.slice(end + 2);
        const lines = block.split('\n');
        const data = lines.filter((l) => l.startsWith('data: ')).map((l) => l.slice(6));
        // Comment lines (keep-alives) carry no data and are not events.
        if (data.length > 0)
          this.queue.push({ event: lines.find((l) => l.startsWith('event: '))?.slice(7) ?? 'message', data: data.join('\n') });
        end = this.buffer.indexOf('\n\n');
      }
    }
    return this.queue.shift() as { event: string; data: string };
  }

  /** The next JSON-RPC message event. */
  async message(): Promise<Record<string, unknown>> {
    return JSON.parse((await this.next()).data) as Record<string, unknown>;
  }

  cancel(): Promise<void> {
    return this.reader.cancel();
  }
}
