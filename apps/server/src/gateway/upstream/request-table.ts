import type {
  JSONRPCErrorResponse,
  JSONRPCMessage,
  JSONRPCNotification,
  JSONRPCRequest,
  JSONRPCResponse,
  ProgressToken,
  RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import type { RequestSink, SessionPeer } from '../link-api.js';

/** JSON-RPC error codes the gateway itself answers with. */
export const GatewayErrorCode = {
  ConnectionClosed: -32000,
  RequestTimeout: -32001,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  /** A server-to-client request that could not be given to the client that caused it. */
  NotRelayed: -32603,
  Cancelled: -32800,
} as const;

/** The upstream answered a request of the gateway's own with a JSON-RPC error. */
export class UpstreamRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    /** The error's `data`, as the upstream sent it. */
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'UpstreamRpcError';
  }
}

export const errorResponse = (id: RequestId | undefined, code: number, message: string): JSONRPCErrorResponse => ({
  jsonrpc: '2.0',
  id,
  error: { code, message },
});

/** One request on its way through a link, under the id the upstream sees (`Id`: a number or a string, per era). */
export interface Pending<Id extends RequestId = RequestId> {
  upstreamId: Id;
  method: string;
  /** Undefined for the gateway's own requests (handshake, health, unsubscribe). */
  session: SessionPeer | undefined;
  clientId: RequestId | undefined;
  /** The client's own progress token, restored on the way down. */
  progressToken: ProgressToken | undefined;
  sink: RequestSink;
  /** The request as it goes upstream: our id, our progress token. */
  message: JSONRPCRequest;
  timer: NodeJS.Timeout | undefined;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
  /** Its delivery is under way (waiting for the link, or being written by a remote transport): that path answers it on failure. */
  busy: boolean;
  /** Sent again once on a fresh upstream session already. */
  retried: boolean;
  /** Sent directly on the channel, before the link is ready (the handshake). */
  raw: boolean;
}

export interface RequestTableHost {
  /** Writes a notification upstream (`notifications/cancelled`), best effort. */
  post(message: JSONRPCMessage): void;
  callTimeoutMs(): number;
  /** A request left the table without a result (failed, cancelled, timed out, or answered with an error). */
  unanswered?(pending: Pending): void;
}

/** Requests that open a connection: the spec forbids cancelling initialize, and a dropped connection ends either. */
const NEVER_CANCELLED = new Set(['initialize', 'server/discover']);

const clientKey = (id: RequestId): string | number => (typeof id === 'string' ? `s${id}` : id);

/**
 * The requests in flight on one upstream connection, the same for both protocol eras (docs/decisions/0044):
 * each client request gets an id unique on the connection (`idOf`), its progress token is rewritten to that id on
 * the way up and restored on the way down, it times out after the call timeout (cancelled upstream), a client
 * that goes away or cancels has it cancelled upstream, and the loss of the connection answers all of them.
 * The sink of every request is called exactly once, whatever happens first.
 */
export class RequestTable<Id extends RequestId = RequestId> {
  private next = 0;
  private readonly pending = new Map<RequestId, Pending<Id>>();
  /** Per session: its client ids still in flight, for cancellation and detach. */
  private readonly bySession = new Map<string, Map<string | number, Pending<Id>>>();
  private clients = 0;

  constructor(
    private readonly host: RequestTableHost,
    private readonly idOf: (n: number) => Id,
  ) {}

  /** Client requests waiting for their answer (the gateway's own are not counted). */
  get clientInFlight(): number {
    return this.clients;
  }

  get size(): number {
    return this.pending.size;
  }

  get(upstreamId: unknown): Pending<Id> | undefined {
    return typeof upstreamId === 'string' || typeof upstreamId === 'number' ? this.pending.get(upstreamId) : undefined;
  }

  values(): IterableIterator<Pending<Id>> {
    return this.pending.values();
  }

  /** Takes a request in under a fresh upstream id; its timer runs from now. */
  register(
    method: string,
    params: JSONRPCRequest['params'],
    session: SessionPeer | undefined,
    clientId: RequestId | undefined,
    sink: RequestSink,
    signal: AbortSignal | undefined,
    timeoutMs = this.host.callTimeoutMs(),
  ): Pending<Id> {
    this.next += 1;
    const upstreamId = this.idOf(this.next);
    const meta = params?._meta;
    const token = meta?.progressToken;
    const progressToken = typeof token === 'string' || typeof token === 'number' ? token : undefined;
    const outParams = progressToken === undefined ? params : { ...params, _meta: { ...meta, progressToken: upstreamId } };
    const message: JSONRPCRequest =
      outParams === undefined ? { jsonrpc: '2.0', id: upstreamId, method } : { jsonrpc: '2.0', id: upstreamId, method, params: outParams };
    const pending: Pending<Id> = {
      upstreamId,
      method,
      session,
      clientId,
      progressToken,
      sink,
      message,
      timer: undefined,
      signal,
      onAbort: undefined,
      busy: false,
      retried: false,
      raw: false,
    };
    pending.timer = setTimeout(() => this.expire(pending, timeoutMs), timeoutMs);
    pending.timer.unref?.();
    this.pending.set(upstreamId, pending);
    if (session && clientId !== undefined) {
      this.clients += 1;
      let ids = this.bySession.get(session.id);
      if (!ids) {
        ids = new Map();
        this.bySession.set(session.id, ids);
      }
      ids.set(clientKey(clientId), pending);
    }
    if (signal) {
      pending.onAbort = () => this.cancel(pending, 'client went away');
      signal.addEventListener('abort', pending.onAbort, { once: true });
    }
    return pending;
  }

  /** Still waiting for its answer (not answered, timed out or abandoned). */
  isLive(pending: Pending<Id>): boolean {
    return this.pending.get(pending.upstreamId) === pending;
  }

  /** Removes a request from every table; false when it was already gone. */
  settle(pending: Pending<Id>): boolean {
    if (this.pending.get(pending.upstreamId) !== pending) return false;
    this.pending.delete(pending.upstreamId);
    clearTimeout(pending.timer);
    if (pending.onAbort) pending.signal?.removeEventListener('abort', pending.onAbort);
    if (pending.session && pending.clientId !== undefined) {
      this.clients -= 1;
      const ids = this.bySession.get(pending.session.id);
      const key = clientKey(pending.clientId);
      if (ids?.get(key) === pending) ids.delete(key);
      if (ids?.size === 0) this.bySession.delete(pending.session.id);
    }
    return true;
  }

  /** The upstream's answer: settles its request and gives it to the client under the client's id. */
  answer(message: JSONRPCResponse | JSONRPCErrorResponse): Pending<Id> | undefined {
    const pending = this.get(message.id);
    if (!pending || !this.settle(pending)) return undefined;
    if ('error' in message) this.host.unanswered?.(pending);
    pending.sink.response({ ...message, id: pending.clientId } as JSONRPCResponse);
    return pending;
  }

  /** A progress notification naming one of our tokens, given to its request under the client's token. */
  progress(message: JSONRPCNotification): Pending<Id> | undefined {
    const pending = this.get(message.params?.progressToken);
    if (!pending || pending.progressToken === undefined) return undefined;
    pending.sink.notification({ ...message, params: { ...message.params, progressToken: pending.progressToken } });
    return pending;
  }

  /** Answers a request with an error (timeout, upstream loss, failed send). */
  fail(pending: Pending<Id>, code: number, message: string): void {
    if (!this.settle(pending)) return;
    this.host.unanswered?.(pending);
    pending.sink.response(errorResponse(pending.clientId, code, message));
  }

  /**
   * Stops a request upstream (MCP cancellation). `answer`: what its client is told instead, if it is still listening;
   * without it the client hears nothing more (it went away, or cancelled a request whose answer it no longer wants).
   */
  cancel(pending: Pending<Id>, reason: string, answer?: { code: number; message: string }): void {
    if (!this.settle(pending)) return;
    this.host.unanswered?.(pending);
    this.cancelUpstream(pending, reason);
    if (answer) pending.sink.response(errorResponse(pending.clientId, answer.code, answer.message));
  }

  /**
   * The connection is gone, or about to be closed on purpose (`cancel`: each request is first cancelled
   * upstream, so a remote server stops working on it): fails every request written to it (those still on
   * their way answer themselves).
   */
  failAll(message: string, cancel = false): void {
    for (const pending of [...this.pending.values()]) {
      if (pending.busy) continue;
      if (cancel) this.cancel(pending, message, { code: GatewayErrorCode.ConnectionClosed, message });
      else this.fail(pending, GatewayErrorCode.ConnectionClosed, message);
    }
  }

  /** A client's request by the id the client knows it by. */
  ofClient(session: SessionPeer, clientId: RequestId): Pending<Id> | undefined {
    return this.bySession.get(session.id)?.get(clientKey(clientId));
  }

  /** Every request of a session still in flight. */
  ofSession(session: SessionPeer): Pending<Id>[] {
    return [...(this.bySession.get(session.id)?.values() ?? [])];
  }

  private expire(pending: Pending<Id>, timeoutMs: number): void {
    if (!this.isLive(pending)) return;
    // An opening request is never cancelled: the connection is dropped instead.
    if (!NEVER_CANCELLED.has(pending.method)) this.cancelUpstream(pending, 'timeout');
    this.fail(pending, GatewayErrorCode.RequestTimeout, `upstream did not answer ${pending.method} within ${timeoutMs / 1000} s`);
  }

  private cancelUpstream(pending: Pending<Id>, reason: string): void {
    this.host.post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: pending.upstreamId, reason } });
  }
}
