import { randomUUID } from 'node:crypto';
import type {
  InitializeRequest,
  JSONRPCError,
  JSONRPCMessage,
  JSONRPCNotification,
  JSONRPCRequest,
  JSONRPCResponse,
} from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import { isDatabaseUnavailable } from '../../http/db-unavailable.js';
import type { Locale } from '../../i18n/index.js';
import { translate } from '../../i18n/index.js';
import { gatewayReason, LocalisedError, sayMessage } from '../../i18n/localised-error.js';
import type { ServiceLog } from '../../infra/service-log.js';
import type { ServiceSpec } from '../catalog.js';
import type { RequestSink, UpstreamLink, UpstreamPool } from '../link-api.js';
import type { Meter } from '../meter.js';
import { type ListedTool, ToolOverrides } from '../tool-policy.js';
import { UpstreamConnectionMissing } from '../upstream-auth.js';
import type { AbuseGuard } from './abuse.js';
import type { CallScope } from './call-scope.js';
import { type CallTelemetry, NO_CALL, type ProxiedCall } from './call-telemetry.js';
import { isCounted, MeteredCall } from './metering-hook.js';
import { carriesForeignState, upstreamRequest, withEnvelope } from './modern-wire.js';
import type { ReplyTarget } from './reply-target.js';
import { DATABASE_AWAY, RpcCode, rpcErrorJson } from './rpc-errors.js';
import type { DownstreamSession } from './session.js';
import { ToolListNormaliser } from './tool-schema.js';

export interface DispatchDeps {
  pool: UpstreamPool;
  meter: Meter;
  logger: Logger;
  /** Metrics and traces of each request (infra/metrics.ts, infra/tracing.ts). */
  telemetry?: CallTelemetry;
  /** The cap on counted calls in flight per user and service (abuse.ts). */
  abuse?: AbuseGuard;
  /** Tool overrides of a service (issue 17), applied to tools/list answers and tools/call names. */
  tools?: { forService(service: ServiceSpec): Promise<ToolOverrides> };
  /**
   * Several replicas: a client's answer to a server-to-client request that another replica sent (its id
   * names that replica) is passed on to it (legacy-relay.ts).
   */
  answers?: { elsewhere(session: DownstreamSession, answer: JSONRPCResponse | JSONRPCError): void };
  /** A tool repaired or left out of a service's list is told in its service log (tool-schema.ts). */
  serviceLog?: Pick<ServiceLog, 'write'>;
}

/** Rewrites an upstream answer before the client sees it (a tools/list under overrides). */
type Rewrite = (message: JSONRPCResponse | JSONRPCError) => JSONRPCResponse | JSONRPCError;

/** A counted call's place under the in-flight cap: given back when it is answered, or never sent on. */
interface CallSlot {
  release: () => void;
  handedOff: boolean;
}

export const isRequest = (m: JSONRPCMessage): m is JSONRPCRequest => 'method' in m && 'id' in m;
export const isNotification = (m: JSONRPCMessage): m is JSONRPCNotification => 'method' in m && !('id' in m);
export const isResponse = (m: JSONRPCMessage): m is JSONRPCResponse | JSONRPCError => !('method' in m) && 'id' in m;

/** How long a call waits for the client to answer the URL elicitation before it gets its error. */
const ELICITATION_WAIT_MS = 30_000;

const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/**
 * What the client reads when no upstream link could be had, in its language: a reason of ours in full; else ours,
 * then the diagnostic, its phrases of ours (`tool server exited with code 3`) translated and what the tool server or
 * the system wrote after them quoted as it came.
 */
export function unavailableText(err: unknown, locale: Locale): string {
  if (err instanceof LocalisedError) return err.localised(locale);
  const text = errorText(err);
  const data = { key: 'proxy.upstream_unavailable' as const, params: {}, detail: gatewayReason(text) ?? text };
  return sayMessage(data, (key, params) => translate(locale, key, params));
}

/**
 * Sends the messages of one client POST on their way, the same for both transports: `ping` is
 * answered here, `initialize` by the link from its cached upstream result, counted requests pass the
 * metering hook before anything reaches the upstream, and everything else goes up through the link
 * with its answers delivered to `target`. Client responses answer the server-to-client requests the
 * session relayed (sampling, elicitation, roots; docs/architecture.md §4); any other response is dropped.
 */
export class Dispatcher {
  private readonly schemas: ToolListNormaliser;

  constructor(private readonly deps: DispatchDeps) {
    this.schemas = new ToolListNormaliser((service, note) => {
      const message =
        note.action === 'dropped'
          ? `Tool "${note.tool}" left out of tools/list: ${note.reason} (a strict MCP client would reject the whole list)`
          : `Tool "${note.tool}" repaired in tools/list: ${note.reason}`;
      deps.logger.warn({ service: service.name, tool: note.tool, action: note.action }, message);
      deps.serviceLog?.write({ serviceId: service.id, serviceName: service.name, phase: 'run', level: 'warn', message });
    });
  }

  /**
   * `scope` holds the requests while they wait upstream (cancelled if the client leaves);
   * `bodyBytes` is the size of the POST: the request size of a lone message.
   */
  async dispatch(
    session: DownstreamSession,
    service: ServiceSpec,
    messages: JSONRPCMessage[],
    target: ReplyTarget,
    scope: CallScope,
    bodyBytes: number,
  ): Promise<void> {
    session.touch();
    const only = messages.length === 1 ? messages[0] : undefined;
    // The common case, one request per POST, without the batch bookkeeping.
    if (only && isRequest(only)) return this.request(session, service, only, target, scope, bodyBytes);
    for (const m of messages) if (isResponse(m) && !session.outgoing.answer(m)) this.deps.answers?.elsewhere(session, m);
    const notifications = messages.filter(isNotification);
    if (notifications.length > 0) await this.notify(session, service, notifications);
    await Promise.all(messages.filter(isRequest).map((r) => this.request(session, service, r, target, scope, undefined)));
  }

  /** Runs an initialize request; returns the JSON-RPC response to send and whether it succeeded. */
  async initialize(
    session: DownstreamSession,
    service: ServiceSpec,
    request: JSONRPCRequest,
    locale: Locale = 'en',
  ): Promise<{ json: string; ok: boolean }> {
    const call = this.deps.telemetry?.begin(service, request) ?? NO_CALL;
    try {
      const result = await session.initialize(this.deps.pool, service, request.params as InitializeRequest['params']);
      session.protocolVersion = result.protocolVersion;
      call.end('ok');
      return { json: JSON.stringify({ jsonrpc: '2.0', id: request.id, result }), ok: true };
    } catch (err) {
      call.end('error', `upstream unavailable: ${errorText(err)}`);
      return { json: rpcErrorJson(request.id, RpcCode.InternalError, unavailableText(err, locale)), ok: false };
    }
  }

  /** Binds a session to the service's link without a request: a 2026-07-28 listen stream hears its list changes (modern.ts). */
  async attach(session: DownstreamSession, service: ServiceSpec): Promise<void> {
    await session.link(this.deps.pool, service);
    // Ended while its link started (the client went away): acquiring it attached the ended session again.
    if (session.closed) this.deps.pool.release(session.serviceId, session);
  }

  private async notify(session: DownstreamSession, service: ServiceSpec, notifications: JSONRPCNotification[]): Promise<void> {
    try {
      const link = await session.link(this.deps.pool, service);
      // Ended meanwhile: acquiring the link attached it again.
      if (session.closed) return this.deps.pool.release(session.serviceId, session);
      for (const n of notifications) link.notify(session, n);
    } catch (err) {
      this.deps.logger.debug({ err, service: service.name }, 'client notification not delivered');
    }
  }

  private async request(
    session: DownstreamSession,
    service: ServiceSpec,
    asked: JSONRPCRequest,
    target: ReplyTarget,
    scope: CallScope,
    bytesIn: number | undefined,
  ): Promise<void> {
    if (asked.method === 'ping') return target.response(JSON.stringify({ jsonrpc: '2.0', id: asked.id, result: {} }));
    if (asked.method === 'initialize') return target.response((await this.initialize(session, service, asked, target.locale)).json);
    const shaped = await this.applyOverrides(service, asked);
    if ('refused' in shaped) return target.response(rpcErrorJson(asked.id, RpcCode.InvalidParams, shaped.refused));
    const { request, rewrite } = shaped;
    const abuse = this.deps.abuse;
    if (!abuse || !isCounted(request)) return this.pass(session, service, request, target, scope, bytesIn, undefined, rewrite);
    // Refused before the daily limit is consulted: a call never admitted is not counted against it.
    const release = await abuse.waitForCall(session.userId, service.id, session.id);
    if (!release) {
      const message = abuse.tooManyCalls(target.locale ?? 'en', session.userId, service.name);
      return target.response(rpcErrorJson(request.id, RpcCode.ServerError, message), 429);
    }
    const slot: CallSlot = { release, handedOff: false };
    try {
      await this.pass(session, service, request, target, scope, bytesIn, slot, rewrite);
    } finally {
      if (!slot.handedOff) release();
    }
  }

  /**
   * The service's tool overrides on the way up and down: a tools/call by alias goes up under the
   * upstream's name, one to a disabled tool is refused here (never counted: it reaches no upstream),
   * and a tools/list answer is rewritten. Without overrides the request passes untouched.
   */
  private async applyOverrides(
    service: ServiceSpec,
    request: JSONRPCRequest,
  ): Promise<{ request: JSONRPCRequest; rewrite?: Rewrite } | { refused: string }> {
    if (request.method !== 'tools/call' && request.method !== 'tools/list') return { request };
    const overrides = this.deps.tools ? await this.deps.tools.forService(service) : ToolOverrides.NONE;
    // Every list is made acceptable to strict clients (tool-schema.ts), overrides or not.
    if (request.method === 'tools/list') return { request, rewrite: (m) => this.schemas.apply(service, rewriteToolList(m, overrides)) };
    if (overrides.empty) return { request };
    const params = (request.params ?? {}) as Record<string, unknown>;
    if (typeof params.name !== 'string') return { request };
    const resolved = overrides.resolveCall(params.name);
    if ('refused' in resolved) return resolved;
    return resolved.name === params.name ? { request } : { request: { ...request, params: { ...params, name: resolved.name } } };
  }

  private async pass(
    session: DownstreamSession,
    service: ServiceSpec,
    request: JSONRPCRequest,
    target: ReplyTarget,
    scope: CallScope,
    bytesIn: number | undefined,
    slot: CallSlot | undefined,
    rewrite?: Rewrite,
  ): Promise<void> {
    const call = this.deps.telemetry?.begin(service, request) ?? NO_CALL;

    const metered = isCounted(request)
      ? new MeteredCall(this.deps.meter, service, session.userId, request, bytesIn ?? Buffer.byteLength(JSON.stringify(request)))
      : undefined;
    if (metered) {
      let admitted: 'limited' | 'error' = 'limited';
      const refusal = await metered.admit().catch((err) => {
        admitted = 'error';
        // A count this replica has never seen, with the database away: the client may retry shortly.
        if (isDatabaseUnavailable(err)) return rpcErrorJson(request.id, RpcCode.InternalError, DATABASE_AWAY);
        this.deps.logger.error({ err, service: service.name }, 'metering admission failed');
        return rpcErrorJson(request.id, RpcCode.InternalError, 'Internal error: request could not be metered');
      });
      if (refusal !== undefined) {
        call.end(admitted);
        // 429 only for the daily limit; a metering failure is the gateway's, not the client's.
        return target.response(refusal, admitted === 'limited' ? 429 : 503);
      }
    }
    if (session.closed) return this.sessionClosed(session, request, target, metered, call);
    if (scope.gone) return this.cancelled(metered, call);

    let link: UpstreamLink;
    try {
      link = await session.link(this.deps.pool, service);
    } catch (err) {
      // Ending an isolated session stops its own link under the request: the session's end is the news.
      if (session.closed) return this.sessionClosed(session, request, target, metered, call);
      if (err instanceof UpstreamConnectionMissing && err.perUser) return this.notConnected(session, request, target, err, metered, call);
      const json = rpcErrorJson(request.id, RpcCode.InternalError, unavailableText(err, target.locale ?? 'en'));
      metered?.abandoned(`upstream unavailable: ${errorText(err)}`);
      call.end('error', `upstream unavailable: ${errorText(err)}`);
      return target.response(json);
    }
    if (session.closed) {
      // Acquiring the link attached the ended session again.
      this.deps.pool.release(session.serviceId, session);
      return this.sessionClosed(session, request, target, metered, call);
    }
    if (scope.gone) return this.cancelled(metered, call);
    let upstream = request;
    // A request the gateway made on a modern client's behalf (a group's list of a member) carries no envelope of
    // its own: an upstream that speaks the revision hears the client's.
    if (link.era === 'modern') upstream = withEnvelope(request, session.initParams);
    else if (session.transport === 'modern') {
      // A modern client's request to a legacy upstream: the envelope stays here. A retry naming a state this
      // gateway never issued (an upstream's own, from before a fallback) cannot be resumed.
      if (carriesForeignState(request)) {
        const json = rpcErrorJson(
          request.id,
          RpcCode.InvalidParams,
          translate(target.locale ?? 'en', 'proxy.modern_unknown_request_state'),
        );
        metered?.abandoned('unknown requestState');
        call.end('error', 'unknown requestState');
        return target.response(json);
      }
      upstream = upstreamRequest(request);
    }
    if (slot) slot.handedOff = true;
    this.forward(session, link, upstream, target, scope, metered, call, slot?.release, rewrite);
  }

  /**
   * The user has not connected their own account to this per-user OAuth service
   * (docs/decisions/0030-upstream-oauth.md): nothing to list yet; a call first asks a client that
   * declared URL elicitation to open the console page (MCP 2025-11-25), then gets the error naming it.
   */
  private async notConnected(
    session: DownstreamSession,
    request: JSONRPCRequest,
    target: ReplyTarget,
    err: UpstreamConnectionMissing,
    metered: MeteredCall | undefined,
    call: ProxiedCall,
  ): Promise<void> {
    metered?.abandoned(`upstream unavailable: ${err.message}`);
    if (request.method === 'tools/list') {
      call.end('ok');
      return target.response(JSON.stringify({ jsonrpc: '2.0', id: request.id, result: { tools: [] } }));
    }
    call.end('error', `upstream unavailable: ${err.message}`);
    const message = err.localised(target.locale ?? 'en');
    const elicitation: JSONRPCRequest = {
      jsonrpc: '2.0',
      id: 0,
      method: 'elicitation/create',
      params: { mode: 'url', elicitationId: randomUUID(), url: err.page, message },
    };
    // Only an absolute address can be opened by the client: the page is one when ServerAddress is set
    // (without it the error still names the path).
    if (request.method === 'tools/call' && URL.canParse(err.page) && !session.refuses(elicitation)) {
      const write = target.serverRequest?.bind(target);
      // The client's answer (accept, decline, cancel) changes nothing: the call cannot go on until the
      // user has connected, which they do in the browser.
      // A 2026-07-28 request gets it as an input-required answer, and the error answers its retry (modern.ts).
      const asked = target.ask
        ? target.ask(elicitation, ELICITATION_WAIT_MS)
        : write
          ? session.outgoing.send(elicitation, write, ELICITATION_WAIT_MS)
          : session.request(elicitation, ELICITATION_WAIT_MS);
      await asked.catch((failure: unknown) => this.deps.logger.debug({ err: failure }, 'URL elicitation not answered'));
    }
    return target.response(rpcErrorJson(request.id, RpcCode.InternalError, message));
  }

  private cancelled(metered: MeteredCall | undefined, call: ProxiedCall): void {
    metered?.abandoned('cancelled: client disconnected');
    call.end('error', 'cancelled: client disconnected');
  }

  /** The session ended (evicted, deleted, its user or service disabled) before the request went upstream. */
  private sessionClosed(
    session: DownstreamSession,
    request: JSONRPCRequest,
    target: ReplyTarget,
    metered: MeteredCall | undefined,
    call: ProxiedCall,
  ): void {
    const message = `session closed: ${session.closedReason}`;
    target.response(rpcErrorJson(request.id, RpcCode.ServerError, message));
    metered?.abandoned(message);
    call.end('error', message);
  }

  private forward(
    session: DownstreamSession,
    link: UpstreamLink,
    request: JSONRPCRequest,
    target: ReplyTarget,
    scope: CallScope,
    metered: MeteredCall | undefined,
    call: ProxiedCall,
    release?: () => void,
    rewrite?: Rewrite,
  ): void {
    let finished = false;
    /** Withdraws the server-to-client requests this request caused that are still unanswered when it ends. */
    let relays: AbortController | undefined;
    const finish = () => {
      finished = true;
      relays?.abort('the client request that caused it has ended');
      release?.();
      session.inflight -= 1;
      session.untrackRequest(end);
      session.touch();
      scope.done(request.id);
    };
    const sink: RequestSink = {
      notification: (message) => {
        if (!finished) target.notification(JSON.stringify(message));
      },
      // Sampling, elicitation or roots caused by this request: on the request's own stream when it still
      // has one, else on the session's standalone stream.
      request: (message, timeoutMs, signal) => {
        if (target.ask && !finished) return target.ask(message, timeoutMs);
        const write = target.serverRequest?.bind(target);
        if (finished || !write) return session.request(message, timeoutMs, signal);
        relays ??= new AbortController();
        return session.outgoing.send(message, write, timeoutMs, signal ? AbortSignal.any([signal, relays.signal]) : relays.signal);
      },
      response: (answer: JSONRPCResponse | JSONRPCError) => {
        if (finished) return;
        finish();
        const message = rewrite ? rewrite(answer) : answer;
        const json = JSON.stringify(message);
        // The client first; the record can wait a moment.
        target.response(json);
        metered?.answered(message, Buffer.byteLength(json));
        call.answered(message);
      },
    };
    // The session ending first answers the client with an error (recorded as usual through the sink)
    // and then cancels the request upstream: the link drops the answer that the cancellation produces.
    const end = (reason: string) => {
      const message = `session closed: ${reason}`;
      sink.response({ jsonrpc: '2.0', id: request.id, error: { code: RpcCode.ServerError, message } });
      link.notify(session, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: request.id, reason: message } });
    };
    session.inflight += 1;
    session.trackRequest(end);
    scope.add(request.id, link);
    call.sent();
    link.request(session, request, sink);
  }
}

/** A tools/list answer with the overrides applied; errors and odd shapes pass as they are. */
function rewriteToolList(message: JSONRPCResponse | JSONRPCError, overrides: ToolOverrides): JSONRPCResponse | JSONRPCError {
  if (!('result' in message) || overrides.empty) return message;
  const tools = (message.result as { tools?: unknown }).tools;
  if (!Array.isArray(tools)) return message;
  const listed = tools.filter((t): t is ListedTool => typeof t === 'object' && t !== null && typeof (t as ListedTool).name === 'string');
  return { ...message, result: { ...message.result, tools: overrides.applyToList(listed) } };
}
