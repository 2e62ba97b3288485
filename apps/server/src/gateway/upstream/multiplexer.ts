import type { JSONRPCMessage, JSONRPCNotification, JSONRPCRequest, RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { RequestSink, SessionPeer } from '../link-api.js';
import { LogLevels } from './log-levels.js';
import { errorResponse, GatewayErrorCode, RequestTable, type Pending as TablePending, UpstreamRpcError } from './request-table.js';
import { Subscriptions } from './subscriptions.js';

export { errorResponse, GatewayErrorCode, UpstreamRpcError } from './request-table.js';

/** A request on a connection of the 2025-11-25 era: numbered by the gateway. */
export type Pending = TablePending<number>;

export type LinkMode = 'shared' | 'session';

export interface MultiplexerHost {
  mode: LinkMode;
  /** Writes a request upstream (waiting for the link when needed); answers `pending` itself on failure. */
  transmit(pending: Pending): void;
  /** Writes a notification or a response upstream, best effort. */
  post(message: JSONRPCMessage): void;
  /**
   * A request from the upstream to its client (ping, sampling, elicitation, roots), with the client
   * request that caused it when that is certain (`origin`; see Multiplexer.originOf).
   */
  serverRequest(request: JSONRPCRequest, origin: Pending | undefined): void;
  /** The upstream withdrew one of its own requests (`notifications/cancelled` naming its id). */
  serverCancelled(requestId: RequestId, reason: string | undefined): void;
  callTimeoutMs(): number;
  /** A message nobody may receive: kept in the service log instead. */
  logUnrouted(message: JSONRPCNotification): void;
  /** Any activity: for the idle reaper. */
  touch(): void;
}

/**
 * A request that gives the server something of its user's (arguments, a URI, a subscription), which work it
 * starts may carry on: every one but the lists, which every client sends on connecting (and the console when it
 * shows a service's tools).
 */
const carriesUserData = (method: string): boolean => !method.endsWith('/list');

/**
 * Many client sessions over one upstream connection (docs/architecture.md §4): request ids and progress
 * tokens rewritten on the way up and restored on the way down, each response and progress
 * notification routed to the request that caused it, list_changed fanned out, resource updates
 * sent only to subscribers, unattributable notifications never broadcast.
 */
export class Multiplexer {
  /** The requests in flight, ids and progress tokens rewritten (request-table.ts, shared with the 2026-07-28 era). */
  private readonly table: RequestTable<number>;
  readonly sessions = new Map<string, SessionPeer>();
  readonly subscriptions = new Subscriptions();
  /** Each session's `logging/setLevel`, and the level the upstream is set to (log-levels.ts). */
  readonly logLevels = new LogLevels();
  /** The users whose requests (other than lists) this connection has carried since it opened (see soleRequest). */
  private readonly users = new Set<number>();

  constructor(private readonly host: MultiplexerHost) {
    this.table = new RequestTable<number>(
      {
        post: (message) => host.post(message),
        callTimeoutMs: () => host.callTimeoutMs(),
        unanswered: (pending) => this.subscriptions.requestFailed(pending),
      },
      (n) => n,
    );
  }

  get inFlight(): number {
    return this.table.clientInFlight;
  }

  /**
   * A fresh upstream connection (a new process, a new remote session): nothing of the earlier one's users
   * lives in it, only of those whose requests still wait to be written to it.
   */
  connectionOpened(): void {
    this.users.clear();
    for (const pending of this.table.values()) {
      if (pending.session && pending.clientId !== undefined && carriesUserData(pending.method)) this.users.add(pending.session.userId);
    }
  }

  attach(session: SessionPeer): void {
    if (!this.sessions.has(session.id)) this.sessions.set(session.id, session);
  }

  /** A client request: answered here when the link can (ping, repeated subscriptions), else forwarded. */
  request(session: SessionPeer, request: JSONRPCRequest, sink: RequestSink, signal?: AbortSignal): void {
    this.host.touch();
    if (signal?.aborted) return;
    this.attach(session);
    if (request.method === 'logging/setLevel') {
      this.setLevel(session, request, sink);
      return;
    }
    if (this.answersLocally(session, request)) {
      sink.response({ jsonrpc: '2.0', id: request.id, result: {} });
      return;
    }
    const uri = request.params?.uri;
    const pending = this.register(request.method, request.params, session, request.id, sink, signal);
    if (request.method === 'resources/subscribe' && typeof uri === 'string') this.subscriptions.asked(pending, uri);
    this.host.transmit(pending);
  }

  /**
   * `logging/setLevel` is the client's own: the gateway filters what reaches it, and sets the upstream
   * to the most verbose level any of its sessions wants (so one client's choice never silences or
   * floods another). Answered `{}` at once; an unknown level is refused as the SDK's servers do.
   */
  private setLevel(session: SessionPeer, request: JSONRPCRequest, sink: RequestSink): void {
    const level = request.params?.level;
    if (!LogLevels.isLevel(level)) {
      sink.response(errorResponse(request.id, GatewayErrorCode.InvalidParams, `Invalid params: unknown logging level ${String(level)}`));
      return;
    }
    const upstream = this.logLevels.set(session.id, level);
    sink.response({ jsonrpc: '2.0', id: request.id, result: {} });
    if (upstream) this.applyLevel(upstream);
  }

  /** Sets the upstream's level (after a restart too); a server without logging refuses, which changes nothing. */
  applyLevel(level = this.logLevels.upstream): void {
    if (!level) return;
    this.internal('logging/setLevel', { level }, this.host.callTimeoutMs()).catch(() => undefined);
  }

  /** Ping, and subscription changes that do not change the upstream's: answered with `{}` here. */
  private answersLocally(session: SessionPeer, request: JSONRPCRequest): boolean {
    const uri = request.params?.uri;
    switch (request.method) {
      case 'ping':
        return true;
      case 'resources/subscribe':
        return typeof uri === 'string' && !this.subscriptions.subscribe(session.id, uri);
      case 'resources/unsubscribe':
        return typeof uri === 'string' && !this.subscriptions.unsubscribe(session.id, uri);
      default:
        return false;
    }
  }

  /** A request of the gateway's own; resolves with the result, rejects with the error. */
  internal(method: string, params: Record<string, unknown> | undefined, timeoutMs: number, raw = false): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const sink: RequestSink = {
        notification: () => undefined,
        response: (message) => {
          if ('error' in message) reject(new UpstreamRpcError(message.error.code, message.error.message, message.error.data));
          else resolve(message.result);
        },
      };
      const pending = this.register(method, params, undefined, undefined, sink, undefined, timeoutMs);
      pending.raw = raw;
      this.host.transmit(pending);
    });
  }

  private register(
    method: string,
    params: JSONRPCRequest['params'],
    session: SessionPeer | undefined,
    clientId: RequestId | undefined,
    sink: RequestSink,
    signal: AbortSignal | undefined,
    timeoutMs?: number,
  ): Pending {
    const pending = this.table.register(method, params, session, clientId, sink, signal, timeoutMs);
    if (session && clientId !== undefined && carriesUserData(method)) this.users.add(session.userId);
    return pending;
  }

  /** Answers a pending request with an error (timeout, upstream loss, failed send). */
  fail(pending: Pending, code: number, message: string): void {
    this.table.fail(pending, code, message);
  }

  /**
   * The connection is gone, or about to be closed on purpose (`cancel`: each request is first
   * cancelled upstream, so a remote server stops working on it): fails every request written to it
   * (those still on their way answer themselves).
   */
  failAll(message: string, cancel = false): void {
    this.table.failAll(message, cancel);
  }

  /** Still waiting for its answer (not answered, timed out or abandoned). */
  isLive(pending: Pending): boolean {
    return this.table.isLive(pending);
  }

  /** `notifications/cancelled` from a client: forwarded under the upstream id; the client gets an error answer. */
  cancelFromClient(session: SessionPeer, requestId: RequestId, reason: unknown): void {
    const pending = this.table.ofClient(session, requestId);
    if (!pending) return;
    const why = typeof reason === 'string' ? reason : 'cancelled by the client';
    this.table.cancel(pending, why, { code: GatewayErrorCode.Cancelled, message: 'request cancelled' });
  }

  /**
   * The session is gone from this link: its requests are cancelled upstream and each still waiting is
   * answered with an error (its client may still be listening, and its record needs the outcome);
   * its subscriptions are dropped.
   */
  detach(session: SessionPeer, reason = 'detached from the upstream connection'): string[] {
    this.sessions.delete(session.id);
    this.logLevels.drop(session.id);
    for (const pending of this.table.ofSession(session)) {
      this.table.cancel(pending, reason, { code: GatewayErrorCode.ConnectionClosed, message: `session closed: ${reason}` });
    }
    return this.subscriptions.dropSession(session.id);
  }

  /** Every message the upstream sends arrives here. */
  receive(message: JSONRPCMessage): void {
    if ('method' in message) {
      if ('id' in message) {
        this.host.touch();
        const origin = this.originOf(message);
        this.host.serverRequest(origin ? this.restoreToken(message, origin) : message, origin);
      } else this.routeNotification(message);
      return;
    }
    const pending = this.table.answer(message);
    // Only a client's call is activity: the gateway's own requests (health checks) must not keep an idle process alive.
    if (pending?.session) this.host.touch();
  }

  /**
   * The client request a server-to-client request belongs to, only when that is certain: it names one
   * in flight by its progress token (rewritten to the upstream id on the way up), or it is the sole
   * request that could have caused it (soleRequest). Otherwise undefined: on a shared link it is then
   * refused, never guessed (docs/architecture.md §4, decision 0042).
   */
  originOf(request: JSONRPCRequest): Pending | undefined {
    const token = request.params?._meta?.progressToken;
    // The SDKs stamp a request they want progress on with their own request id as its token: that names the
    // server's own request, in the server's id space, never one of ours (which may hold the same number).
    if (typeof token === 'number' && token !== request.id) {
      const named = this.table.get(token);
      if (named?.session && named.progressToken !== undefined) return named;
    }
    return this.soleRequest();
  }

  /**
   * The one client request in flight, when nothing else can have caused what the upstream sends now: only
   * its user's calls have run on this connection. A server also sends on its own (a timer, the background
   * work of a call answered long ago): once two users' calls have run on the connection, a message that
   * names no request may come of the other user's, so it is nobody's for certain (decision 0042).
   */
  private soleRequest(): Pending | undefined {
    if (this.table.clientInFlight !== 1 || this.users.size > 1) return undefined;
    for (const pending of this.table.values()) {
      if (!pending.session || pending.clientId === undefined) continue;
      // A list in flight while another user's calls ran before: what the server sends may come of those.
      return this.users.size === 0 || this.users.has(pending.session.userId) ? pending : undefined;
    }
    return undefined;
  }

  /** The client sees its own progress token, as in progress notifications. */
  private restoreToken(request: JSONRPCRequest, origin: Pending): JSONRPCRequest {
    const meta = request.params?._meta;
    if (meta?.progressToken !== origin.upstreamId || origin.progressToken === undefined) return request;
    return { ...request, params: { ...request.params, _meta: { ...meta, progressToken: origin.progressToken } } };
  }

  /** A notification every attached session receives (list changes). */
  fanOut(message: JSONRPCNotification): void {
    for (const session of this.sessions.values()) session.notify(message);
  }

  private routeNotification(message: JSONRPCNotification): void {
    const { method } = message;
    if (method === 'notifications/progress') {
      if (this.table.progress(message)) this.host.touch();
      return;
    }
    if (method.endsWith('/list_changed')) {
      this.fanOut(message);
      return;
    }
    if (method === 'notifications/resources/updated') {
      const uri = message.params?.uri;
      if (typeof uri !== 'string') return;
      for (const id of this.subscriptions.subscribers(uri)) this.sessions.get(id)?.notify(message);
      return;
    }
    if (method === 'notifications/cancelled') {
      // Only the upstream's own requests are its to cancel: those relayed to a client (link.ts).
      const id = message.params?.requestId;
      const reason = message.params?.reason;
      if (typeof id === 'string' || typeof id === 'number') this.host.serverCancelled(id, typeof reason === 'string' ? reason : undefined);
      return;
    }
    this.routeUnattributed(message);
  }

  /**
   * A log message or anything else naming no request: it goes to a client only when that is
   * unambiguous (one request in flight, or the one session of an isolated link), never broadcast.
   * Unlike a server-to-client request (soleRequest), a log line still goes to the one request in flight
   * after other users' calls ran: it takes nothing back from the client (decision 0042).
   */
  private routeUnattributed(message: JSONRPCNotification): void {
    if (this.table.clientInFlight === 1) {
      for (const pending of this.table.values()) {
        if (pending.session) {
          if (this.logLevels.wants(pending.session.id, message)) pending.sink.notification(message);
          return;
        }
      }
    }
    if (this.host.mode === 'session' && this.sessions.size === 1) {
      for (const session of this.sessions.values()) if (this.logLevels.wants(session.id, message)) session.notify(message);
      return;
    }
    this.host.logUnrouted(message);
  }
}
