import type {
  InitializeRequest,
  InitializeResult,
  JSONRPCMessage,
  JSONRPCNotification,
  JSONRPCRequest,
  JSONRPCResponse,
} from '@modelcontextprotocol/sdk/types.js';
import { VERSION } from '../../version.js';
import type { ServiceSpec } from '../catalog.js';
import type { RequestSink, SessionPeer, UpstreamLink } from '../link-api.js';
import { META, MODERN_REVISION } from '../wire/revision-2026-07-28.js';
import { type Channel, errorText } from './channel.js';
import { describeServer, SHARED_CLIENT_CAPABILITIES } from './handshake.js';
import { type EraDialect, Lifecycle, type LinkState } from './lifecycle.js';
import { errorResponse, GatewayErrorCode, RequestTable } from './request-table.js';
import type { LinkDeps } from './types.js';

export { MODERN_REVISION } from '../wire/revision-2026-07-28.js';

/** How long the opening `server/discover` may take before the upstream counts as one that does not speak the revision. */
const DISCOVER_TIMEOUT_MS = 15_000;

/** The upstream answered the opening `server/discover` as a server of the 2025-11-25 era only (or not at all). */
export class NotModernError extends Error {
  constructor(reason: string) {
    super(`the tool server does not speak protocol revision ${MODERN_REVISION}: ${reason}`);
    this.name = 'NotModernError';
  }
}

export interface ModernLinkOptions {
  spec: ServiceSpec;
  /** Opens a fresh connection (spawns the process, or the revision's HTTP channel of a remote server). */
  open: (spec: ServiceSpec) => Promise<Channel>;
  deps: LinkDeps;
}

type Params = Record<string, unknown>;
const isObject = (v: unknown): v is Params => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * One connection to an upstream that speaks the 2026-07-28 revision itself (docs/decisions/0039), used by
 * the requests of modern clients. Every request is self-contained (its `_meta` envelope says who the client
 * is), so one connection serves any number of clients: ids and progress tokens are rewritten to be unique
 * on the connection, and everything the server says about a request (progress, its answer, an
 * `input_required` result with the server's own keys and `requestState`) goes back to the request that
 * caused it untouched. Nothing waits here between rounds of a multi-round call: the state travels with the
 * client's retry. Log messages carry no request on a shared connection and reach a request only while it
 * is the only one in flight.
 *
 * The connection opens with `server/discover`; an upstream that answers it as a server of 2025-11-25 fails the
 * start with NotModernError, and the pool then serves its 2026-07-28 clients through the 2025-11-25 link (acquisition.ts).
 */
export class ModernLink implements UpstreamLink {
  readonly era = 'modern';
  spec: ServiceSpec;
  lastActivity = Date.now();
  private discovered: Params | undefined;
  /** The connection's life, shared with the 2025-11-25 era (lifecycle.ts). */
  private readonly life: Lifecycle;
  /** The requests in flight, ids (`m1`, `m2` …) and progress tokens rewritten (request-table.ts, shared too). */
  private readonly table: RequestTable<string>;
  private readonly sessions = new Set<string>();

  constructor(private readonly opts: ModernLinkOptions) {
    this.spec = opts.spec;
    this.table = new RequestTable<string>(
      { post: (message) => this.post(message), callTimeoutMs: () => this.callTimeoutMs() },
      (n) => `m${n}`,
    );
    this.life = new Lifecycle(this.dialect(), { tuning: opts.deps.tuning, wanted: () => this.sessions.size > 0 });
  }

  get state(): LinkState {
    return this.life.state;
  }

  /** Client requests waiting for their answer (the gateway's own opening `server/discover` is not one). */
  get inFlight(): number {
    return this.table.clientInFlight;
  }

  get attachedCount(): number {
    return this.sessions.size;
  }

  get isOpen(): boolean {
    return this.state !== 'closed';
  }

  /** The last start found a server that does not speak the revision (NotModernError): its clients go through the 2025 link. */
  get refusedEra(): boolean {
    return this.life.refusedEra;
  }

  /** The server's description of itself from `server/discover`. */
  get about(): string | undefined {
    return describeServer(this.discovered ? this.initializeResult() : undefined);
  }

  has(sessionId: string): boolean {
    return this.sessions.has(sessionId);
  }

  attach(session: SessionPeer): void {
    this.sessions.add(session.id);
  }

  /** The client request ended: whatever of it is still in flight is cancelled upstream, answering nobody. */
  detach(session: SessionPeer): void {
    this.sessions.delete(session.id);
    for (const pending of this.table.ofSession(session)) this.table.cancel(pending, 'the client request ended');
  }

  /** Connects when needed and learns what the server offers (lifecycle.ts says what that means in each state). */
  ensureReady(): Promise<void> {
    return this.life.ensureReady();
  }

  // ---- UpstreamLink ----

  /** What a client of this upstream is told in place of an initialize: the server's discover answer, reshaped. */
  async initialize(session: SessionPeer, _params: InitializeRequest['params']): Promise<InitializeResult> {
    this.attach(session);
    await this.ensureReady();
    return this.initializeResult();
  }

  request(session: SessionPeer, request: JSONRPCRequest, sink: RequestSink, signal?: AbortSignal): void {
    this.lastActivity = Date.now();
    this.ensureReady().then(
      () => this.send(session, request, sink, signal),
      (err) => sink.response(errorResponse(request.id, GatewayErrorCode.ConnectionClosed, `upstream unavailable: ${errorText(err)}`)),
    );
  }

  /** Only a cancellation means something on this connection: the request it names is cancelled upstream. */
  notify(session: SessionPeer, notification: JSONRPCNotification): void {
    if (notification.method !== 'notifications/cancelled') return;
    const requestId = notification.params?.requestId;
    if (typeof requestId !== 'string' && typeof requestId !== 'number') return;
    const pending = this.table.ofClient(session, requestId);
    if (pending) this.table.cancel(pending, String(notification.params?.reason ?? 'cancelled by the client'));
  }

  /** The server's tools, counted through its pages (at most 20): a health check's round trip. */
  async countTools(): Promise<number> {
    await this.ensureReady();
    const peer: SessionPeer = { id: 'gateway-check', userId: 0, protocolVersion: MODERN_REVISION, notify: () => undefined };
    let count = 0;
    let cursor: string | undefined;
    for (let page = 0; page < 20; page++) {
      const answer = await new Promise<JSONRPCResponse | ReturnType<typeof errorResponse>>((resolve) => {
        const params = { ...(cursor ? { cursor } : {}), _meta: gatewayEnvelope() };
        this.send(
          peer,
          { jsonrpc: '2.0', id: `count-${page}`, method: 'tools/list', params },
          { notification: () => undefined, response: resolve },
        );
      });
      if (!('result' in answer)) throw new Error(`tools/list answered ${answer.error.code} ${answer.error.message}`);
      const result = answer.result as { tools?: unknown; nextCursor?: unknown };
      count += Array.isArray(result.tools) ? result.tools.length : 0;
      if (typeof result.nextCursor !== 'string') break;
      cursor = result.nextCursor;
    }
    return count;
  }

  // ---- life ----

  stop(reason: string): Promise<void> {
    return this.life.stop(reason);
  }

  async close(reason: string): Promise<void> {
    await this.life.close(reason);
    this.sessions.clear();
  }

  /** The service was edited: a running connection restarts with the new spec. */
  reconfigure(spec: ServiceSpec): Promise<void> {
    this.spec = spec;
    return this.life.restart('service configuration changed');
  }

  restart(reason: string): Promise<void> {
    return this.life.restart(reason);
  }

  // ---- the 2026-07-28 dialect (lifecycle.ts, EraDialect) ----

  private dialect(): EraDialect {
    return {
      open: () => this.opts.open(this.spec),
      handshake: async (channel, current) => {
        const discovered = await this.discover(channel);
        if (current()) this.discovered = discovered;
      },
      receive: (message) => this.receive(message),
      up: () => this.log('info', `connected in protocol revision ${MODERN_REVISION}`),
      down: (reason) => this.table.failAll(reason),
      failed: (reason, restartInMs, refused) => {
        if (!refused) this.log('warn', restartInMs === undefined ? reason : `${reason}; restarting in ${restartInMs / 1000} s`);
      },
      refusal: (err) => (err instanceof NotModernError ? '' : undefined),
      // A server of the 2025-11-25 era may exit on `server/discover`: the opening then fails as one that does not
      // speak the revision.
      judgesLossInOpening: true,
    };
  }

  /** The opening request: the gateway's own envelope, answered by a server of the revision with what it offers. */
  private discover(channel: Channel): Promise<Params> {
    const timeoutMs = Math.min(this.opts.deps.tuning.initializeTimeoutMs, DISCOVER_TIMEOUT_MS);
    return new Promise<Params>((resolve, reject) => {
      const sink: RequestSink = {
        notification: () => undefined,
        response: (message) => {
          if (!('result' in message)) {
            if (message.error.code === GatewayErrorCode.RequestTimeout)
              return reject(new NotModernError(`no answer to server/discover within ${Math.round(timeoutMs / 1000)} s`));
            return reject(new NotModernError(`server/discover answered ${message.error.code} ${message.error.message}`));
          }
          const result = message.result as Params;
          const versions = Array.isArray(result.supportedVersions) ? result.supportedVersions : [];
          if (!versions.includes(MODERN_REVISION)) {
            return reject(new NotModernError(`it offers ${versions.length > 0 ? versions.join(', ') : 'no modern revision'}`));
          }
          resolve(result);
        },
      };
      const pending = this.table.register(
        'server/discover',
        { _meta: gatewayEnvelope() },
        undefined,
        undefined,
        sink,
        undefined,
        timeoutMs,
      );
      Promise.resolve()
        .then(() => channel.send(pending.message))
        .catch((err) => this.table.fail(pending, GatewayErrorCode.ConnectionClosed, errorText(err)));
    });
  }

  private initializeResult(): InitializeResult {
    const discovered = this.discovered ?? {};
    const meta = isObject(discovered._meta) ? discovered._meta : {};
    const info = isObject(meta[META.serverInfo]) ? meta[META.serverInfo] : { name: this.spec.name, version: VERSION };
    return {
      protocolVersion: MODERN_REVISION,
      capabilities: isObject(discovered.capabilities) ? discovered.capabilities : {},
      serverInfo: info as InitializeResult['serverInfo'],
      ...(typeof discovered.instructions === 'string' ? { instructions: discovered.instructions } : {}),
    };
  }

  private send(session: SessionPeer, request: JSONRPCRequest, sink: RequestSink, signal?: AbortSignal): void {
    const channel = this.life.channel;
    if (!channel || this.state !== 'ready') {
      sink.response(errorResponse(request.id, GatewayErrorCode.ConnectionClosed, 'upstream unavailable: the tool server stopped'));
      return;
    }
    if (signal?.aborted) return;
    // The request goes up as the client sent it (envelope, retry members), under our id and progress token.
    const pending = this.table.register(request.method, request.params, session, request.id, sink, signal);
    const upstream: JSONRPCRequest = { ...request, id: pending.upstreamId, params: pending.message.params ?? {} };
    Promise.resolve()
      .then(() => channel.send(upstream, session.forwardHeaders))
      .catch((err) => this.table.fail(pending, GatewayErrorCode.ConnectionClosed, `upstream unavailable: ${errorText(err)}`));
  }

  private receive(message: JSONRPCMessage): void {
    this.lastActivity = Date.now();
    if ('id' in message && !('method' in message)) {
      this.table.answer(message as JSONRPCResponse);
      return;
    }
    if ('method' in message && 'id' in message) {
      // The revision has no server-to-client requests: questions come as input_required results.
      this.post(errorResponse(message.id, GatewayErrorCode.MethodNotFound, `Method not found: ${message.method}`));
      return;
    }
    if ('method' in message) this.routeNotification(message as JSONRPCNotification);
  }

  /** Progress goes to its request; a log message only while one client request is in flight (it names none). */
  private routeNotification(message: JSONRPCNotification): void {
    if (message.method === 'notifications/progress') {
      this.table.progress(message);
      return;
    }
    if (message.method === 'notifications/message' && this.table.clientInFlight === 1) {
      for (const pending of this.table.values()) if (pending.session) pending.sink.notification(message);
    }
  }

  private post(message: JSONRPCMessage): void {
    Promise.resolve()
      .then(() => this.life.channel?.send(message))
      .catch(() => undefined);
  }

  private callTimeoutMs(): number {
    return (this.opts.deps.options.int('UpstreamCallTimeoutSeconds') || 300) * 1000;
  }

  private log(level: 'info' | 'warn', message: string): void {
    this.opts.deps.serviceLog.write({
      serviceId: this.spec.id,
      serviceName: this.spec.name,
      phase: 'run',
      level,
      message: `[${MODERN_REVISION}] ${message}`,
    });
  }
}

/** The gateway's own envelope: what it says of itself when it opens a modern connection. */
function gatewayEnvelope(): Params {
  return {
    [META.protocolVersion]: MODERN_REVISION,
    [META.clientCapabilities]: SHARED_CLIENT_CAPABILITIES,
    [META.clientInfo]: { name: 'toolport-gateway', version: VERSION },
  };
}
