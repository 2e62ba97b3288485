import type {
  InitializeRequest,
  InitializeResult,
  JSONRPCMessage,
  JSONRPCNotification,
  JSONRPCRequest,
  JSONRPCResponse,
  RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import { VERSION } from '../../version.js';
import type { ServiceSpec } from '../catalog.js';
import type { RequestSink, SessionPeer, UpstreamLink } from '../link-api.js';
import { Backoff } from './backoff.js';
import { type Channel, errorText } from './channel.js';
import { describeServer, SHARED_CLIENT_CAPABILITIES } from './handshake.js';
import { errorResponse, GatewayErrorCode } from './multiplexer.js';
import type { LinkDeps } from './types.js';

/** The revision a modern link speaks, and the envelope keys of its requests. */
export const MODERN_REVISION = '2026-07-28';
const ENVELOPE = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
} as const;

/** How long the opening `server/discover` may take before the upstream counts as one that does not speak the revision. */
const DISCOVER_TIMEOUT_MS = 15_000;

/** The upstream answered the opening `server/discover` as a server of the legacy era only (or not at all). */
export class NotModernError extends Error {
  constructor(reason: string) {
    super(`the tool server does not speak protocol revision ${MODERN_REVISION}: ${reason}`);
    this.name = 'NotModernError';
  }
}

export type ModernLinkState = 'stopped' | 'starting' | 'ready' | 'closed';

interface InFlight {
  session: SessionPeer;
  clientId: RequestId;
  sink: RequestSink;
  /** The client's progress token, when it asked for progress (the upstream hears ours). */
  progressToken?: string | number;
  timer: NodeJS.Timeout;
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
 * The connection opens with `server/discover`; an upstream that answers it as a legacy server fails the
 * start with NotModernError, and the pool then serves modern clients through the legacy link (pool.ts).
 */
export class ModernLink implements UpstreamLink {
  readonly era = 'modern';
  spec: ServiceSpec;
  state: ModernLinkState = 'stopped';
  lastActivity = Date.now();
  private channel: Channel | undefined;
  private discovered: Params | undefined;
  private starting: Promise<void> | undefined;
  private generation = 0;
  private readonly inflight = new Map<string, InFlight>();
  private readonly sessions = new Set<string>();
  private next = 0;
  /** The id of the opening `server/discover` of the current connection. */
  private discoverId = '';
  private readonly backoff: Backoff;
  private retryAt = 0;
  private lastError = '';

  constructor(private readonly opts: ModernLinkOptions) {
    this.spec = opts.spec;
    const { backoffBaseMs, backoffMaxMs, stableMs } = opts.deps.tuning;
    this.backoff = new Backoff({ baseMs: backoffBaseMs, maxMs: backoffMaxMs, stableMs });
  }

  /** Client requests waiting for their answer (the gateway's own opening `server/discover` is not one). */
  get inFlight(): number {
    return this.inflight.size - (this.inflight.has(this.discoverId) ? 1 : 0);
  }

  get attachedCount(): number {
    return this.sessions.size;
  }

  get isOpen(): boolean {
    return this.state !== 'closed';
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

  detach(session: SessionPeer): void {
    this.sessions.delete(session.id);
    for (const [id, entry] of [...this.inflight]) {
      if (entry.session.id !== session.id) continue;
      this.settle(id);
      this.cancelUpstream(id, 'the client request ended');
    }
  }

  /** Connects (once) and learns what the server offers; rejects with NotModernError for a legacy-only server. */
  ensureReady(): Promise<void> {
    if (this.state === 'ready') return Promise.resolve();
    if (this.state === 'closed') return Promise.reject(new Error('the link is closed'));
    if (this.starting) return this.starting;
    if (Date.now() < this.retryAt) return Promise.reject(new Error(this.lastError));
    const gen = ++this.generation;
    this.state = 'starting';
    const starting = this.start(gen).finally(() => {
      if (this.starting === starting) this.starting = undefined;
    });
    this.starting = starting;
    return starting;
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
    const requestId = (notification.params as { requestId?: RequestId } | undefined)?.requestId;
    for (const [id, entry] of [...this.inflight]) {
      if (entry.session.id !== session.id || entry.clientId !== requestId) continue;
      this.settle(id);
      this.cancelUpstream(id, String((notification.params as { reason?: unknown }).reason ?? 'cancelled by the client'));
    }
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

  async stop(reason: string): Promise<void> {
    await this.halt(reason, 'stopped');
  }

  async close(reason: string): Promise<void> {
    await this.halt(reason, 'closed');
  }

  /** The service was edited: the next request connects afresh with the new spec. */
  async reconfigure(spec: ServiceSpec): Promise<void> {
    this.spec = spec;
    await this.halt('service configuration changed', 'stopped');
  }

  async restart(reason: string): Promise<void> {
    this.backoff.reset();
    this.retryAt = 0;
    await this.halt(reason, 'stopped');
  }

  private async start(gen: number): Promise<void> {
    let channel: Channel | undefined;
    try {
      channel = await this.opts.open(this.spec);
      if (gen !== this.generation) {
        await channel.close();
        throw new Error('the link was stopped while it started');
      }
      this.channel = channel;
      channel.onmessage = (message) => {
        if (gen === this.generation) this.receive(message);
      };
      channel.onclose = (reason) => {
        if (gen === this.generation) this.lost(`tool server ${reason}`);
      };
      this.discovered = await this.discover(channel);
      if (gen !== this.generation) throw new Error('the link was stopped while it started');
      this.backoff.up();
      this.state = 'ready';
      this.log('info', `connected in protocol revision ${MODERN_REVISION}`);
    } catch (err) {
      // Stopped or closed meanwhile: whoever stopped it decides what comes next.
      if (gen !== this.generation) throw new Error('the link was stopped while it started');
      this.channel = undefined;
      this.state = 'stopped';
      await channel?.close();
      if (!(err instanceof NotModernError)) {
        this.lastError = `could not start: ${errorText(err)}`;
        this.retryAt = Date.now() + this.backoff.failed();
        this.log('warn', this.lastError);
      }
      throw err;
    }
  }

  /** The opening request: the gateway's own envelope, answered by a server of the revision with what it offers. */
  private discover(channel: Channel): Promise<Params> {
    const id = `discover-${++this.next}`;
    this.discoverId = id;
    const timeoutMs = Math.min(this.opts.deps.tuning.initializeTimeoutMs, DISCOVER_TIMEOUT_MS);
    return new Promise<Params>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.inflight.delete(id);
        reject(new NotModernError(`no answer to server/discover within ${Math.round(timeoutMs / 1000)} s`));
      }, timeoutMs);
      timer.unref();
      const sink: RequestSink = {
        notification: () => undefined,
        response: (message) => {
          clearTimeout(timer);
          if (!('result' in message))
            return reject(new NotModernError(`server/discover answered ${message.error.code} ${message.error.message}`));
          const result = message.result as Params;
          const versions = Array.isArray(result.supportedVersions) ? result.supportedVersions : [];
          if (!versions.includes(MODERN_REVISION)) {
            return reject(new NotModernError(`it offers ${versions.length > 0 ? versions.join(', ') : 'no modern revision'}`));
          }
          resolve(result);
        },
      };
      const peer: SessionPeer = { id: 'gateway', userId: 0, protocolVersion: MODERN_REVISION, notify: () => undefined };
      this.inflight.set(id, { session: peer, clientId: id, sink, timer });
      const request: JSONRPCRequest = { jsonrpc: '2.0', id, method: 'server/discover', params: { _meta: gatewayEnvelope() } };
      Promise.resolve()
        .then(() => channel.send(request))
        .catch((err) => {
          this.inflight.delete(id);
          clearTimeout(timer);
          reject(err);
        });
    });
  }

  private initializeResult(): InitializeResult {
    const discovered = this.discovered ?? {};
    const meta = isObject(discovered._meta) ? discovered._meta : {};
    const info = isObject(meta[ENVELOPE.serverInfo]) ? meta[ENVELOPE.serverInfo] : { name: this.spec.name, version: VERSION };
    return {
      protocolVersion: MODERN_REVISION,
      capabilities: isObject(discovered.capabilities) ? discovered.capabilities : {},
      serverInfo: info as InitializeResult['serverInfo'],
      ...(typeof discovered.instructions === 'string' ? { instructions: discovered.instructions } : {}),
    };
  }

  private send(session: SessionPeer, request: JSONRPCRequest, sink: RequestSink, signal?: AbortSignal): void {
    const channel = this.channel;
    if (!channel || this.state !== 'ready') {
      sink.response(errorResponse(request.id, GatewayErrorCode.ConnectionClosed, 'upstream unavailable: the tool server stopped'));
      return;
    }
    if (signal?.aborted) return;
    const id = `m${++this.next}`;
    const params: Params = isObject(request.params) ? { ...request.params } : {};
    const meta = isObject(params._meta) ? { ...params._meta } : undefined;
    const progressToken = meta?.progressToken;
    const entry: InFlight = {
      session,
      clientId: request.id,
      sink,
      timer: setTimeout(() => this.timedOut(id), this.callTimeoutMs()),
    };
    entry.timer.unref();
    if (meta && (typeof progressToken === 'string' || typeof progressToken === 'number')) {
      entry.progressToken = progressToken;
      meta.progressToken = id;
      params._meta = meta;
    }
    this.inflight.set(id, entry);
    signal?.addEventListener(
      'abort',
      () => {
        if (!this.inflight.has(id)) return;
        this.settle(id);
        this.cancelUpstream(id, 'the client went away');
      },
      { once: true },
    );
    Promise.resolve()
      .then(() => channel.send({ ...request, id, params }, session.forwardHeaders))
      .catch((err) =>
        this.answer(id, errorResponse(request.id, GatewayErrorCode.ConnectionClosed, `upstream unavailable: ${errorText(err)}`)),
      );
  }

  private receive(message: JSONRPCMessage): void {
    this.lastActivity = Date.now();
    if ('id' in message && !('method' in message)) {
      const id = String(message.id);
      const entry = this.inflight.get(id);
      if (!entry) return;
      this.answer(id, { ...(message as JSONRPCResponse), id: entry.clientId });
      return;
    }
    if ('method' in message && 'id' in message) {
      // The revision has no server-to-client requests: questions come as input_required results.
      void this.channel
        ?.send(errorResponse(message.id, GatewayErrorCode.MethodNotFound, `Method not found: ${message.method}`))
        ?.catch(() => undefined);
      return;
    }
    if ('method' in message) this.routeNotification(message as JSONRPCNotification);
  }

  private routeNotification(message: JSONRPCNotification): void {
    const params = isObject(message.params) ? message.params : {};
    if (message.method === 'notifications/progress') {
      const entry = this.inflight.get(String(params.progressToken));
      if (entry?.progressToken === undefined) return;
      entry.sink.notification({ ...message, params: { ...params, progressToken: entry.progressToken } });
      return;
    }
    if (message.method === 'notifications/message') {
      const clients = [...this.inflight].filter(([id]) => id !== this.discoverId).map(([, e]) => e);
      if (clients.length === 1) clients[0]?.sink.notification(message);
    }
  }

  private answer(id: string, message: JSONRPCResponse | ReturnType<typeof errorResponse>): void {
    const entry = this.settle(id);
    entry?.sink.response(message);
  }

  private settle(id: string): InFlight | undefined {
    const entry = this.inflight.get(id);
    if (!entry) return undefined;
    this.inflight.delete(id);
    clearTimeout(entry.timer);
    this.lastActivity = Date.now();
    return entry;
  }

  private timedOut(id: string): void {
    const entry = this.inflight.get(id);
    if (!entry) return;
    const seconds = Math.round(this.callTimeoutMs() / 1000);
    this.answer(id, errorResponse(entry.clientId, GatewayErrorCode.RequestTimeout, `upstream did not answer within ${seconds} s`));
    this.cancelUpstream(id, 'timed out at the gateway');
  }

  private cancelUpstream(id: string, reason: string): void {
    const notification: JSONRPCNotification = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason } };
    Promise.resolve()
      .then(() => this.channel?.send(notification))
      .catch(() => undefined);
  }

  private callTimeoutMs(): number {
    return (this.opts.deps.options.int('UpstreamCallTimeoutSeconds') || 300) * 1000;
  }

  /** The connection ended under its requests: each is answered with the reason; the next request connects again. */
  private lost(reason: string): void {
    // Gone before it answered server/discover: the opening fails with the reason (a legacy server may exit on it).
    if (this.state === 'starting') {
      this.failAll(reason);
      return;
    }
    this.generation += 1;
    this.channel = undefined;
    this.state = 'stopped';
    this.retryAt = Date.now() + this.backoff.failed();
    this.lastError = reason;
    this.log('warn', `connection lost: ${reason}`);
    this.failAll(reason);
  }

  private failAll(reason: string): void {
    for (const [id, entry] of [...this.inflight]) {
      this.answer(id, errorResponse(entry.clientId, GatewayErrorCode.ConnectionClosed, `upstream unavailable: ${reason}`));
    }
  }

  private async halt(reason: string, next: 'stopped' | 'closed'): Promise<void> {
    if (this.state === 'closed') return;
    this.generation += 1;
    const channel = this.channel;
    this.channel = undefined;
    this.starting = undefined;
    this.state = next;
    this.failAll(reason);
    if (next === 'closed') this.sessions.clear();
    await channel?.close();
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
    [ENVELOPE.protocolVersion]: MODERN_REVISION,
    [ENVELOPE.clientCapabilities]: SHARED_CLIENT_CAPABILITIES,
    [ENVELOPE.clientInfo]: { name: 'toolport-gateway', version: VERSION },
  };
}
