import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import {
  type JSONRPCError,
  type JSONRPCNotification,
  type JSONRPCRequest,
  type JSONRPCResponse,
  LATEST_PROTOCOL_VERSION,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import type { Locale } from '../../i18n/index.js';
import { translate } from '../../i18n/index.js';
import { CallScope } from './call-scope.js';
import { refusalFor, requiredCapability } from './client-requests.js';
import { unavailableText } from './dispatcher.js';
import { localeOf, onClientGone, SseStream } from './http-io.js';
import {
  discoverResult,
  type Envelope,
  envelopeMeta,
  inputRequest,
  META,
  modernAnswer,
  PARKED_STATE_PREFIX,
  REMOVED_METHODS,
  SERVER_INFO,
} from './modern-wire.js';
import { ParamHeaderIndex, paramHeaderMismatch, paramHeadersOfRequest } from './param-headers.js';
import type { ProxyCaller } from './proxy-auth.js';
import type { ProxyDeps, ProxyRequest } from './proxy-deps.js';
import { PostReply, type ReplyTarget } from './reply-target.js';
import { failures, RpcCode, rpcErrorJson, sendFailure } from './rpc-errors.js';
import { DownstreamSession } from './session.js';
import { newNonce } from './session-token.js';

type Answer = JSONRPCResponse | JSONRPCError;

/** The syslog severities of MCP logging, least severe first (an unknown level counts as the most severe). */
const LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];
const severity = (level: unknown): number => {
  const at = LEVELS.indexOf(String(level));
  return at < 0 ? LEVELS.length : at;
};

/**
 * The HTTP status of a modern answer that carries no status of its own: a method the server does not have is
 * HTTP 404 as well as -32601, and a capability the client did not declare HTTP 400 as well as -32021 (whether the
 * gateway or an upstream that speaks the revision said so); any other error is the payload of a 200.
 */
function httpStatusOf(message: Answer): number | undefined {
  if (!('error' in message)) return undefined;
  if (message.error.code === RpcCode.MethodNotFound) return 404;
  if (message.error.code === RpcCode.MissingClientCapability) return 400;
  return undefined;
}

/**
 * Bounds on the calls that wait for a client's input between two of its HTTP requests (MRTR): how
 * many one replica holds, how many one user holds, and how long one waits for the client's retry
 * before it is cancelled upstream.
 */
export interface InputRequiredLimits {
  max: number;
  perUser: number;
  waitMs: number;
}

export const DEFAULT_INPUT_LIMITS: InputRequiredLimits = { max: 1000, perUser: 50, waitMs: 5 * 60_000 };

interface Ask {
  message: JSONRPCRequest;
  resolve(answer: Answer): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

interface Responder {
  reply: PostReply;
  res: ServerResponse;
  id: RequestId;
}

/**
 * One modern request on its way through the legacy machinery (the Dispatcher, exactly as for a
 * session's request): the target its answers are delivered to. When the upstream asks the client
 * something (elicitation, sampling, roots) the HTTP request is answered `input_required` with the
 * question and a `requestState` naming this call; the call stays in flight upstream and parked here
 * until the client's retry carries the answer, which goes upstream as the answer to the upstream's
 * own request. The final result then answers whichever HTTP request is waiting.
 */
export class ModernCall implements ReplyTarget {
  readonly token = `${PARKED_STATE_PREFIX}${randomBytes(24).toString('base64url')}`;
  private responder: Responder | undefined;
  private final: { message: Answer; status?: number } | undefined;
  private readonly asks = new Map<string, Ask>();
  private next = 0;
  private flushQueued = false;
  done = false;

  constructor(
    readonly session: DownstreamSession,
    readonly scope: CallScope,
    readonly method: string,
    private readonly envelope: Envelope,
    readonly locale: Locale,
    private readonly host: {
      park(call: ModernCall): boolean;
      unpark(call: ModernCall): void;
      end(call: ModernCall, reason: string): void;
      /** The final answer, before it is sent (what a tools/list says its tools declare is learnt here). */
      answered?(message: Answer): void;
    },
  ) {}

  get userId(): number {
    return this.session.userId;
  }

  /** An HTTP request now waits for this call: the first one, or a retry carrying answers. */
  attach(reply: PostReply, res: ServerResponse, id: RequestId): void {
    this.responder = { reply, res, id };
    // Closing the response stream cancels the call (the 2026-07-28 revision has no notifications/cancelled over HTTP).
    onClientGone(res, () => {
      if (this.responder?.res === res && !res.writableFinished) this.abandon('client disconnected');
    });
    if (this.final) {
      const { message, status } = this.final;
      this.final = undefined;
      this.finish(message, status);
    } else if (this.asks.size > 0) this.queueFlush();
  }

  /** The client's answers to the questions it was asked, from its retry. */
  answer(responses: Record<string, unknown>): void {
    for (const [key, result] of Object.entries(responses)) {
      const ask = this.asks.get(key);
      if (!ask) continue;
      this.asks.delete(key);
      clearTimeout(ask.timer);
      ask.resolve({ jsonrpc: '2.0', id: 0, result: result as Record<string, unknown> } as Answer);
    }
  }

  notification(json: string): void {
    if (!this.responder) return;
    const { method, params } = JSON.parse(json) as JSONRPCNotification;
    // Progress belongs to the request; log messages only when the request asked for them, at its level and above.
    const wanted =
      method === 'notifications/progress' ||
      (method === 'notifications/message' &&
        this.envelope.logLevel !== undefined &&
        severity(params?.level) >= severity(this.envelope.logLevel));
    if (wanted) this.responder.reply.notification(json);
  }

  response(json: string, status?: number): void {
    if (this.done) return;
    const message = JSON.parse(json) as Answer;
    // Between two of the client's requests: kept for its retry.
    if (!this.responder) this.final = { message, status };
    else this.finish(message, status);
  }

  ask(message: JSONRPCRequest, timeoutMs: number): Promise<Answer> {
    if (this.done) return Promise.reject(new Error('the request was already answered'));
    const refusal = refusalFor(this.envelope.capabilities, message);
    if (refusal) {
      // The revision's answer to a server that needs what the client did not declare: -32021 with what is missing.
      const requiredCapabilities = requiredCapability(message);
      const error = {
        code: RpcCode.MissingClientCapability,
        message: `Missing required client capabilities: ${Object.keys(requiredCapabilities).join(', ')}`,
        data: { requiredCapabilities },
      };
      // Answering ends the call: the session's end cancels the upstream request (Dispatcher.forward).
      this.response(JSON.stringify({ jsonrpc: '2.0', id: 0, error }));
      return Promise.reject(new Error(refusal));
    }
    this.next += 1;
    const key = `${message.method.split('/')[0]}-${this.next}`;
    return new Promise<Answer>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.asks.delete(key);
        reject(new Error(`the client did not answer ${message.method} within ${Math.round(timeoutMs / 1000)} s`));
      }, timeoutMs);
      timer.unref();
      this.asks.set(key, { message, resolve, reject, timer });
      this.queueFlush();
    });
  }

  /** Questions asked together (several in one tick) go to the client in one answer. */
  private queueFlush(): void {
    if (this.flushQueued) return;
    this.flushQueued = true;
    setImmediate(() => {
      this.flushQueued = false;
      this.flush();
    });
  }

  private flush(): void {
    const responder = this.responder;
    if (!responder || this.done || this.asks.size === 0) return;
    if (!this.host.park(this)) {
      this.rejectAsks(translate(this.locale, 'proxy.modern_too_many_waiting'));
      return;
    }
    const inputRequests = Object.fromEntries([...this.asks].map(([key, ask]) => [key, inputRequest(ask.message)]));
    this.responder = undefined;
    const result = { resultType: 'input_required', inputRequests, requestState: this.token, _meta: { [META.serverInfo]: SERVER_INFO } };
    responder.reply.response(JSON.stringify({ jsonrpc: '2.0', id: responder.id, result }));
  }

  private finish(message: Answer, status?: number): void {
    const responder = this.responder;
    if (!responder) return;
    this.responder = undefined;
    this.done = true;
    this.host.answered?.(message);
    responder.reply.response(modernAnswer(this.method, responder.id, message), status ?? httpStatusOf(message));
    this.rejectAsks('the request was answered');
    this.host.end(this, 'request answered');
  }

  /** The client left, or did not come back in time: the call is cancelled upstream. */
  abandon(reason: string): void {
    if (this.done) return;
    this.done = true;
    this.responder = undefined;
    this.rejectAsks(reason);
    this.scope.leave(reason);
    this.host.end(this, reason);
  }

  private rejectAsks(reason: string): void {
    for (const [key, ask] of this.asks) {
      this.asks.delete(key);
      clearTimeout(ask.timer);
      ask.reject(new Error(reason));
    }
  }
}

/**
 * The calls parked between a client's `input_required` answer and its retry, by `requestState`.
 * They live in this replica's memory only: a retry that reaches another replica is answered with a
 * clear error (docs/decisions/0031-modern-era.md).
 */
export class ParkedCalls {
  private readonly parked = new Map<string, { call: ModernCall; timer: NodeJS.Timeout }>();

  constructor(readonly limits: InputRequiredLimits) {}

  get size(): number {
    return this.parked.size;
  }

  park(call: ModernCall): boolean {
    if (this.parked.has(call.token)) return true;
    if (this.parked.size >= this.limits.max) return false;
    let mine = 0;
    for (const p of this.parked.values()) if (p.call.userId === call.userId) mine += 1;
    if (mine >= this.limits.perUser) return false;
    const seconds = Math.round(this.limits.waitMs / 1000);
    const timer = setTimeout(() => call.abandon(`the client did not send the requested input within ${seconds} s`), this.limits.waitMs);
    timer.unref();
    this.parked.set(call.token, { call, timer });
    return true;
  }

  /** The parked call a retry names, when it is this caller's and the retry repeats its method. */
  take(token: string, caller: ProxyCaller, method: string): ModernCall | undefined {
    const entry = this.parked.get(token);
    if (!entry || entry.call.userId !== caller.user.id || entry.call.session.serviceId !== caller.service.id) return undefined;
    if (entry.call.method !== method) return undefined;
    this.unpark(entry.call);
    return entry.call;
  }

  unpark(call: ModernCall): void {
    const entry = this.parked.get(call.token);
    if (!entry) return;
    clearTimeout(entry.timer);
    this.parked.delete(call.token);
  }
}

/**
 * A `subscriptions/listen` stream: a session bound to the service's link (or a group's members) like
 * a legacy session, whose notifications are the list changes the client opted in to, each stamped
 * with the listen request's id. It lives in the registry while the stream is open, so configuration
 * changes reach it as they reach every session.
 */
class ListenSession extends DownstreamSession {
  constructor(
    init: ConstructorParameters<typeof DownstreamSession>[0],
    private readonly listenId: RequestId,
    private readonly wanted: Set<string>,
  ) {
    super(init);
  }

  /** Resources whose `notifications/resources/updated` the client asked for (subscribed upstream). */
  readonly resources = new Set<string>();

  override notify(message: JSONRPCNotification): void {
    const updated = message.method === 'notifications/resources/updated' && this.resources.has(String(message.params?.uri));
    if ((!this.wanted.has(message.method) && !updated) || !this.stream?.open) return;
    const params = { ...(message.params ?? {}), _meta: { ...(message.params?._meta ?? {}), [META.subscriptionId]: this.listenId } };
    this.stream.message(JSON.stringify({ ...message, params }));
  }
}

/** Resources one listen stream may subscribe to. */
const MAX_LISTEN_RESOURCES = 100;

const LIST_KINDS = [
  ['toolsListChanged', 'notifications/tools/list_changed'],
  ['promptsListChanged', 'notifications/prompts/list_changed'],
  ['resourcesListChanged', 'notifications/resources/list_changed'],
] as const;

/**
 * The 2026-07-28 era on the same endpoint as the legacy one (streamable-http.ts hands over every POST
 * classified modern by modern-wire.ts): `server/discover`, stateless requests through the Dispatcher
 * (or a group's face) on a session that lives as long as the request, the input-required round trip
 * for server-to-client requests, and `subscriptions/listen`.
 */
export class ModernHttp {
  private readonly parked: ParkedCalls;
  private readonly paramHeaders = new ParamHeaderIndex();
  /** The tools of a service being listed for the index, by service (or group) id. */
  private readonly listing = new Map<number, Promise<void>>();

  constructor(
    private readonly deps: ProxyDeps,
    limits: InputRequiredLimits = DEFAULT_INPUT_LIMITS,
  ) {
    this.parked = new ParkedCalls({ ...limits });
  }

  /** Calls waiting for a client's input now (tests, metrics). */
  get waitingForInput(): number {
    return this.parked.size;
  }

  get limits(): InputRequiredLimits {
    return this.parked.limits;
  }

  async post(req: ProxyRequest, res: ServerResponse, caller: ProxyCaller, request: JSONRPCRequest, envelope: Envelope, bytes: number) {
    const locale = localeOf(req.raw);
    if (REMOVED_METHODS.has(request.method)) {
      return this.json(
        res,
        rpcErrorJson(request.id, RpcCode.MethodNotFound, `Method not found: ${request.method} (removed in protocol revision 2026-07-28)`),
        404,
      );
    }
    if (request.method === 'server/discover') return this.discover(res, caller, request, envelope, locale);
    if (request.method === 'subscriptions/listen') return this.listen(res, caller, request, envelope, locale);
    const params = (request.params ?? {}) as { requestState?: unknown; inputResponses?: unknown };
    // A state of ours resumes a parked call; any other belongs to an upstream that speaks the revision (dispatcher.ts).
    if (typeof params.requestState === 'string' && params.requestState.startsWith(PARKED_STATE_PREFIX)) {
      return this.resume(res, caller, request, params, locale);
    }

    if (request.method === 'tools/call') {
      const mismatch = await this.paramHeaderMismatch(req, caller, request, envelope);
      if (mismatch) return sendFailure(res, failures.headerMismatch(mismatch.header, mismatch.detail), request.id);
    }
    const session = this.session(caller, envelope, paramHeadersOfRequest(req.raw));
    const scope = new CallScope(session);
    const call = new ModernCall(session, scope, request.method, envelope, locale, {
      park: (c) => this.parked.park(c),
      unpark: (c) => this.parked.unpark(c),
      end: (c, reason) => {
        this.parked.unpark(c);
        this.deps.sessions.remove(c.session, reason);
      },
      ...(request.method === 'tools/list' ? { answered: (m: Answer) => this.learnTools(caller, request, m) } : {}),
    });
    call.attach(this.reply(res, caller, locale), res, request.id);
    await this.deps.dispatcher.dispatch(session, caller.service, [request], call, scope, bytes);
  }

  /** What a tools/list answer says about the `Mcp-Param-*` headers of its tools (param-headers.ts). */
  private learnTools(caller: ProxyCaller, request: JSONRPCRequest, message: Answer): void {
    if (!('result' in message)) return;
    const firstPage = (request.params as { cursor?: unknown } | undefined)?.cursor === undefined;
    this.paramHeaders.learn(caller.service.id, (message.result as { tools?: unknown }).tools, firstPage);
  }

  /**
   * Whether a tools/call's `Mcp-Param-*` headers disagree with its arguments, for the tool as its clients see it.
   * A tool of a service whose tools are not known here (or not lately) is looked up by listing them once.
   */
  private async paramHeaderMismatch(
    req: ProxyRequest,
    caller: ProxyCaller,
    request: JSONRPCRequest,
    envelope: Envelope,
  ): Promise<{ header: string; detail: string } | undefined> {
    const params = (request.params ?? {}) as { name?: unknown; arguments?: unknown };
    if (typeof params.name !== 'string') return undefined;
    let declared = this.paramHeaders.declared(caller.service.id, params.name);
    if (!declared) {
      // Calls arriving together wait for one listing.
      const id = caller.service.id;
      let listing = this.listing.get(id);
      if (!listing) {
        listing = this.listTools(caller, envelope).finally(() => this.listing.delete(id));
        this.listing.set(id, listing);
      }
      // A list that could not be had checks nothing (the upstream still answers for the call).
      await listing.catch(() => undefined);
      declared = this.paramHeaders.declared(id, params.name) ?? [];
    }
    if (declared.length === 0) return undefined;
    const detail = paramHeaderMismatch(declared, params.arguments, req.raw);
    if (!detail) return undefined;
    const header = /the (Mcp-Param-[^ ]+) header/.exec(detail)?.[1] ?? 'Mcp-Param-*';
    return { header, detail };
  }

  /** Lists the tools as the caller sees them (every page, at most 20), for the index only. */
  private async listTools(caller: ProxyCaller, envelope: Envelope): Promise<void> {
    let cursor: string | undefined;
    for (let page = 0; page < 20; page++) {
      const session = this.session(caller, envelope);
      const request: JSONRPCRequest = {
        jsonrpc: '2.0',
        id: `param-headers-${page}`,
        method: 'tools/list',
        params: { ...(cursor ? { cursor } : {}), _meta: envelopeMeta(envelope) },
      };
      const answer = await new Promise<Answer>((resolve) => {
        const target: ReplyTarget = { notification() {}, response: (json) => resolve(JSON.parse(json) as Answer) };
        this.deps.dispatcher
          .dispatch(session, caller.service, [request], target, new CallScope(session), 0)
          .catch((err) => resolve(JSON.parse(rpcErrorJson(request.id, RpcCode.InternalError, String(err))) as Answer));
      }).finally(() => this.deps.sessions.remove(session, 'tools listed'));
      if (!('result' in answer)) return;
      this.learnTools(caller, request, answer);
      cursor = (answer.result as { nextCursor?: unknown }).nextCursor as string | undefined;
      if (typeof cursor !== 'string') return;
    }
  }

  /** A client's retry: the answers go to the parked call, and this request waits for what comes next. */
  private resume(
    res: ServerResponse,
    caller: ProxyCaller,
    request: JSONRPCRequest,
    params: { requestState?: unknown; inputResponses?: unknown },
    locale: Locale,
  ): void {
    const call = this.parked.take(params.requestState as string, caller, request.method);
    if (!call) {
      this.json(res, rpcErrorJson(request.id, RpcCode.InvalidParams, translate(locale, 'proxy.modern_unknown_request_state')));
      return;
    }
    const responses = params.inputResponses;
    if (typeof responses === 'object' && responses !== null && !Array.isArray(responses)) call.answer(responses as Record<string, unknown>);
    call.attach(this.reply(res, caller, locale), res, request.id);
  }

  /** What the service (or group) offers, from the same initialize a legacy client gets, without a session. */
  private async discover(res: ServerResponse, caller: ProxyCaller, request: JSONRPCRequest, envelope: Envelope, locale: Locale) {
    const session = this.session(caller, envelope);
    try {
      const init: JSONRPCRequest = { jsonrpc: '2.0', id: request.id, method: 'initialize', params: session.initParams };
      const { json } = await this.deps.dispatcher.initialize(session, caller.service, init, locale);
      const answer = JSON.parse(json) as Answer;
      const shaped = 'result' in answer ? { ...answer, result: discoverResult(answer.result as Record<string, unknown>) } : answer;
      this.json(res, modernAnswer('server/discover', request.id, shaped as Answer));
    } finally {
      this.deps.sessions.remove(session, 'discover answered');
    }
  }

  /** `subscriptions/listen`: an event stream acknowledged at once, then the list changes asked for. */
  private async listen(res: ServerResponse, caller: ProxyCaller, request: JSONRPCRequest, envelope: Envelope, locale: Locale) {
    const filter = ((request.params as { notifications?: unknown } | undefined)?.notifications ?? {}) as Record<string, unknown>;
    const agreed: Record<string, boolean | string[]> = {};
    const wanted = new Set<string>();
    for (const [key, method] of LIST_KINDS) {
      if (filter[key] !== true) continue;
      agreed[key] = true;
      wanted.add(method);
    }
    const nonce = newNonce();
    const session = new ListenSession(
      { ...this.init(caller, envelope, `listen-${nonce}`, nonce), legacyUpstream: true, modernListen: true },
      request.id,
      wanted,
    );
    const uris = Array.isArray(filter.resourceSubscriptions)
      ? filter.resourceSubscriptions.filter((u): u is string => typeof u === 'string').slice(0, MAX_LISTEN_RESOURCES)
      : [];
    const unavailable = (err: unknown) => rpcErrorJson(request.id, RpcCode.InternalError, unavailableText(err, locale));
    const open = () => {
      const bound = this.deps.abuse.streamBound({ userId: caller.user.id, service: caller.service.name, stream: 'listen' }, () =>
        this.deps.sessions.remove(session, 'client not reading its stream'),
      );
      const stream = new SseStream(res, {}, () => this.deps.sessions.remove(session, 'listen stream closed'), bound);
      session.stream = stream;
      this.deps.sessions.add(session);
      const ack = {
        jsonrpc: '2.0',
        method: 'notifications/subscriptions/acknowledged',
        params: { notifications: agreed, _meta: { [META.subscriptionId]: request.id } },
      };
      stream.message(JSON.stringify(ack));
      return stream;
    };
    if (uris.length === 0) {
      // Nothing to ask the upstream before the answer: acknowledged at once, then attached. An isolated service's
      // process may take seconds to start, and a client waits for the acknowledgement before anything else; the list
      // changes it asked for reach it once the link is up (nothing can change the list before then).
      const stream = open();
      try {
        await this.deps.dispatcher.attach(session, caller.service);
      } catch (err) {
        // Said on the stream, under the listen request's id; ending the session ends the stream.
        stream.message(unavailable(err));
        this.deps.sessions.remove(session, 'listen refused');
      }
      return;
    }
    try {
      await this.deps.dispatcher.attach(session, caller.service);
    } catch (err) {
      this.deps.sessions.remove(session, 'listen refused');
      return this.json(res, unavailable(err));
    }
    agreed.resourceSubscriptions = await this.subscribe(session, caller, uris);
    open();
  }

  /**
   * The legacy subscription of each resource, on the listen stream's session (the link routes the
   * updates to it, and drops the subscription when the stream ends): the URIs the upstream accepted.
   */
  private async subscribe(session: ListenSession, caller: ProxyCaller, uris: string[]): Promise<string[]> {
    const accepted = await Promise.all(
      uris.map(
        (uri, i) =>
          new Promise<string | undefined>((resolve) => {
            const request: JSONRPCRequest = { jsonrpc: '2.0', id: `listen-subscribe-${i}`, method: 'resources/subscribe', params: { uri } };
            const target: ReplyTarget = {
              notification() {},
              response: (json) => resolve('result' in (JSON.parse(json) as Answer) ? uri : undefined),
            };
            this.deps.dispatcher
              .dispatch(session, caller.service, [request], target, new CallScope(session), 0)
              .catch(() => resolve(undefined));
          }),
      ),
    );
    const ok = accepted.filter((u): u is string => u !== undefined);
    for (const uri of ok) session.resources.add(uri);
    return ok;
  }

  private reply(res: ServerResponse, caller: ProxyCaller, locale: Locale): PostReply {
    const bound = this.deps.abuse.streamBound({ userId: caller.user.id, service: caller.service.name, stream: 'post' });
    return new PostReply(res, 1, false, {}, locale, bound);
  }

  /** The session one modern request lives on: the envelope's client, towards the upstream as an initialize would say. */
  private session(caller: ProxyCaller, envelope: Envelope, forwardHeaders?: Record<string, string>): DownstreamSession {
    const nonce = newNonce();
    return new DownstreamSession({
      ...this.init(caller, envelope, `modern-${nonce}`, nonce),
      ...(forwardHeaders ? { forwardHeaders } : {}),
    });
  }

  private init(caller: ProxyCaller, envelope: Envelope, key: string, nonce: string): ConstructorParameters<typeof DownstreamSession>[0] {
    return {
      key,
      peerId: nonce,
      userId: caller.user.id,
      serviceId: caller.service.id,
      // What a legacy upstream is spoken to in.
      protocolVersion: LATEST_PROTOCOL_VERSION,
      issuedAt: Date.now(),
      transport: 'modern',
      initParams: {
        protocolVersion: LATEST_PROTOCOL_VERSION,
        capabilities: envelope.capabilities,
        clientInfo: envelope.clientInfo ?? { name: 'modern-client', version: '0' },
      },
      revocationCheckedAt: Date.now(),
    };
  }

  private json(res: ServerResponse, body: string, status = 200): void {
    if (res.headersSent) return void res.end();
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  }
}
