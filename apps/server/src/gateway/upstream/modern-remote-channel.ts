import type { JSONRPCMessage, JSONRPCRequest, RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import type { FetchLike } from '../../infra/outbound.js';
import type { ServiceSpec } from '../catalog.js';
import { encodeHeaderValue, META, mcpNameOf } from '../wire/revision-2026-07-28.js';
import { answerGuard, BROKEN_ANSWER_CODE } from './answer-guard.js';
import { type Channel, errorText } from './channel.js';
import { responseIdOf } from './json-head.js';
import { GatewayErrorCode } from './multiplexer.js';
import { perRequestFetch } from './per-request-fetch.js';
import { type RemoteAuth, withAuthorization } from './remote-channel.js';
import { readSseEvents } from './sse-events.js';

/** An HTTP answer that is neither a JSON-RPC message nor an event stream of them. */
const INTERNAL_ERROR = -32603;

type Params = Record<string, unknown>;
const isObject = (v: unknown): v is Params => typeof v === 'object' && v !== null && !Array.isArray(v);
const isRequestId = (v: unknown): v is RequestId => typeof v === 'string' || typeof v === 'number';

/** One request on its way: its own abort, and why it was aborted (a withdrawal or close() answers nothing). */
interface Exchange {
  controller: AbortController;
  /** Set when the gateway gave up on the request itself: nothing more is delivered for it. */
  withdrawn: boolean;
  timedOut: boolean;
}

/**
 * A remote upstream in the 2026-07-28 revision's streamable HTTP binding (docs/architecture.md, upstream
 * side): no session and no connection to lose. Each JSON-RPC request is one POST of its own, with the
 * standard headers the revision requires (`MCP-Protocol-Version` from the request's `_meta` envelope,
 * `Mcp-Method`, `Mcp-Name` as gateway/downstream/modern-wire.ts checks them on our own server side), the
 * configured headers, and the OAuth connection's token (remote-channel.ts `withAuthorization`). Its answer,
 * one JSON message or an event stream of notifications ending with the response, goes to `onmessage`
 * in order; every failure becomes a JSON-RPC error for that request's id, so no request is lost.
 * `notifications/cancelled` aborts the request it names (the revision cancels by closing the stream);
 * nothing else a client sends besides requests exists over HTTP in this era, so it is dropped.
 */
export class ModernRemoteChannel implements Channel {
  onmessage: (message: JSONRPCMessage) => void = () => undefined;
  /** Never called: a lost request is that request's error, and HTTP has no connection to lose. */
  onclose: (reason: string) => void = () => undefined;
  private closing = false;
  private readonly exchanges = new Map<RequestId, Exchange>();
  private fetch: FetchLike = () => Promise.reject(new Error('not open'));

  private constructor(
    private readonly url: URL,
    private readonly headers: Record<string, string>,
    private readonly live: Set<AbortController>,
    private readonly logger: Logger,
    private readonly timeoutMs: number,
  ) {}

  /**
   * No network I/O: the first request is the first contact. `timeoutMs` bounds `server/discover`, which
   * stands where the 2025-11-25 handshake stood (other requests are bounded by the link's own call timeout,
   * which withdraws them with `notifications/cancelled`).
   */
  static async open(
    spec: ServiceSpec,
    logger: Logger,
    timeoutMs: number,
    base: FetchLike,
    auth: RemoteAuth = {},
  ): Promise<ModernRemoteChannel> {
    const live = new Set<AbortController>();
    const channel = new ModernRemoteChannel(new URL(spec.command), { ...spec.headers }, live, logger, timeoutMs);
    // Answers that break (reset, truncated, not JSON) fail their request at once (answer-guard.ts); each
    // request's own signal aborts it (per-request-fetch.ts `followSignal`).
    channel.fetch = answerGuard(withAuthorization(perRequestFetch(live, base, true), auth), (message) => {
      if (message.id !== undefined) channel.respond(message.id, message);
    });
    return channel;
  }

  send(message: JSONRPCMessage, headers?: Record<string, string>): void {
    if (this.closing) return;
    if ('method' in message && 'id' in message) {
      void this.exchange(message as JSONRPCRequest, headers);
      return;
    }
    if ('method' in message && message.method === 'notifications/cancelled') {
      const requestId = isObject(message.params) ? message.params.requestId : undefined;
      if (isRequestId(requestId)) this.withdraw(requestId, 'cancelled');
    }
    // Other notifications, and responses to server-to-client requests, do not exist over HTTP in this era.
  }

  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    for (const id of [...this.exchanges.keys()]) this.withdraw(id, 'the channel closed');
    for (const controller of this.live) controller.abort();
    this.live.clear();
  }

  /** Requests still waiting for their answer (tests and the link's accounting). */
  get inFlight(): number {
    return this.exchanges.size;
  }

  private withdraw(id: RequestId, reason: string): void {
    const exchange = this.exchanges.get(id);
    if (!exchange) return;
    this.exchanges.delete(id);
    exchange.withdrawn = true;
    exchange.controller.abort(new Error(reason));
  }

  private headersFor(request: JSONRPCRequest, extra?: Record<string, string>): Headers {
    const headers = new Headers(this.headers);
    // The client's Mcp-Param-* headers first: the revision's own below always win.
    for (const [name, value] of Object.entries(extra ?? {})) headers.set(name, value);
    headers.set('content-type', 'application/json');
    headers.set('accept', 'application/json, text/event-stream');
    const meta = isObject(request.params) && isObject(request.params._meta) ? request.params._meta : {};
    const version = meta[META.protocolVersion];
    if (typeof version === 'string') headers.set('mcp-protocol-version', version);
    headers.set('mcp-method', request.method);
    const name = mcpNameOf(request.method, request.params);
    if (name !== undefined) headers.set('mcp-name', encodeHeaderValue(name));
    return headers;
  }

  private async exchange(request: JSONRPCRequest, extra?: Record<string, string>): Promise<void> {
    const { id } = request;
    // The link never reuses an id in flight; were it to, the earlier request is given up, not confused with this one.
    this.withdraw(id, 'replaced by a request with the same id');
    const exchange: Exchange = { controller: new AbortController(), withdrawn: false, timedOut: false };
    this.exchanges.set(id, exchange);
    let timer: NodeJS.Timeout | undefined;
    if (request.method === 'server/discover') {
      timer = setTimeout(() => {
        exchange.timedOut = true;
        exchange.controller.abort(new Error('timeout'));
      }, this.timeoutMs);
    }
    try {
      const response = await this.fetch(this.url, {
        method: 'POST',
        headers: this.headersFor(request, extra),
        body: JSON.stringify(request),
        signal: exchange.controller.signal,
      });
      await this.answer(id, exchange, response);
    } catch (err) {
      this.failed(id, exchange, err);
    } finally {
      clearTimeout(timer);
      if (this.exchanges.get(id) === exchange) {
        // Answered or failed above; reaching here still registered means the answer never came.
        this.failed(id, exchange, new Error('the remote server ended its answer without answering'));
      }
    }
  }

  /** Reads one HTTP answer: a JSON message, an event stream of them, or an HTTP error. */
  private async answer(id: RequestId, exchange: Exchange, response: Response): Promise<void> {
    const type = (response.headers.get('content-type') ?? '').toLowerCase();
    if (response.ok && type.startsWith('text/event-stream') && response.body) {
      const end = await readSseEvents(response.body, ({ event, data }) => {
        if (event !== '' && event !== 'message') return;
        this.eventFor(id, exchange, data);
      });
      if (exchange.withdrawn || !this.current(id, exchange)) return;
      if (end.broken) throw new Error(`the connection to the remote server broke before it answered (${end.broken})`);
      this.respond(id, brokenAnswer(id, 'the remote server ended its answer stream without answering'));
      return;
    }
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = type.startsWith('application/json') || !response.ok ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    const messages = (Array.isArray(parsed) ? parsed : [parsed]).filter(isMessage);
    if (messages.length === 0) {
      const what =
        response.ok && type.startsWith('application/json')
          ? 'an answer that is not valid JSON-RPC'
          : `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}${type ? ` (${type.split(';')[0]})` : ''}`;
      this.respond(id, {
        jsonrpc: '2.0',
        id,
        error: {
          code: response.ok ? BROKEN_ANSWER_CODE : INTERNAL_ERROR,
          message: `the remote server answered with ${what}`,
          ...(response.ok ? {} : { data: { status: response.status } }),
        },
      });
      return;
    }
    for (const message of messages) this.route(id, exchange, message);
  }

  /** One event's data: a message, or a broken one that names our request. */
  private eventFor(id: RequestId, exchange: Exchange, data: string): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(data);
    } catch {
      if (responseIdOf(data) === id) this.respond(id, brokenAnswer(id, 'the remote server sent an answer that is not valid JSON'));
      return;
    }
    for (const message of Array.isArray(parsed) ? parsed : [parsed]) {
      if (isMessage(message)) this.route(id, exchange, message);
    }
  }

  /** A message read from a request's answer: the response settles the request; anything else goes on while it waits. */
  private route(id: RequestId, exchange: Exchange, message: JSONRPCMessage): void {
    if (!this.current(id, exchange)) return;
    const isResponse = !('method' in message) && 'id' in message;
    // A JSON-RPC error without an id (a refusal before the server read the body) is still this request's answer.
    if (isResponse || ('error' in message && !('method' in message))) {
      this.respond(id, { ...message, id } as JSONRPCMessage);
      return;
    }
    this.deliver(message);
  }

  private current(id: RequestId, exchange: Exchange): boolean {
    return !this.closing && this.exchanges.get(id) === exchange;
  }

  /** The one answer a request gets: the first of the upstream's response, a broken answer, or a failure. */
  private respond(id: RequestId, message: JSONRPCMessage): void {
    if (this.closing || !this.exchanges.has(id)) return;
    this.exchanges.delete(id);
    this.deliver(message);
  }

  private failed(id: RequestId, exchange: Exchange, err: unknown): void {
    if (exchange.withdrawn || !this.current(id, exchange)) return;
    if (exchange.timedOut) {
      this.respond(id, {
        jsonrpc: '2.0',
        id,
        error: { code: GatewayErrorCode.RequestTimeout, message: `no answer from ${this.url.origin} within ${this.timeoutMs} ms` },
      });
      return;
    }
    this.logger.debug({ err, id }, 'modern remote upstream request failed');
    this.respond(id, {
      jsonrpc: '2.0',
      id,
      error: { code: GatewayErrorCode.ConnectionClosed, message: `upstream request failed: ${errorText(err)}` },
    });
  }

  private deliver(message: JSONRPCMessage): void {
    try {
      this.onmessage(message);
    } catch (err) {
      this.logger.error({ err }, 'upstream message handler failed');
    }
  }
}

const brokenAnswer = (id: RequestId, message: string): JSONRPCMessage => ({
  jsonrpc: '2.0',
  id,
  error: { code: BROKEN_ANSWER_CODE, message },
});

/** A JSON-RPC 2.0 message: a request, a notification, a result or an error. */
function isMessage(v: unknown): v is JSONRPCMessage {
  if (!isObject(v) || v.jsonrpc !== '2.0') return false;
  if (typeof v.method === 'string') return true;
  return 'result' in v || (isObject(v.error) && typeof v.error.code === 'number');
}
