import type {
  InitializeRequest,
  InitializeResult,
  JSONRPCMessage,
  JSONRPCNotification,
  JSONRPCRequest,
} from '@modelcontextprotocol/sdk/types.js';
import type { ServiceSpec } from '../catalog.js';
import type { RequestSink, SessionPeer, UpstreamLink } from '../link-api.js';
import { type Channel, errorText, SessionLostError } from './channel.js';
import { describeServer, forSharedUpstream, sharedInitializeResult } from './handshake.js';
import { Lifecycle, type LinkState } from './lifecycle.js';
import { LineLimiter } from './line-limiter.js';
import { errorResponse, GatewayErrorCode, type LinkMode, Multiplexer, type Pending, UpstreamRpcError } from './multiplexer.js';
import { ServerRequestRelay } from './server-requests.js';
import { type LinkHealth, SessionEraDialect } from './session-dialect.js';
import type { LinkDeps } from './types.js';

export type { LinkState } from './lifecycle.js';

/** What a request of the gateway's own gets from a link that stopped (idle) while it was on its way. */
export const STOPPED_WHILE_CHECKED = 'the tool server stopped (idle) during the check';

export { type LinkHealth, modernOnlyRevisions } from './session-dialect.js';

export interface LinkOptions {
  spec: ServiceSpec;
  mode: LinkMode;
  /**
   * A shared link of one user's sessions only (a process with their personal values, their own OAuth
   * connection): what its clients answer stays with that user, so it is relayed as on an isolated link.
   */
  oneUser?: boolean;
  /** Opens a fresh connection (spawns the process, or connects the remote transport). */
  open: (spec: ServiceSpec) => Promise<Channel>;
  deps: LinkDeps;
  /** Shared links report start, crash and recovery; per-user and per-session links only log. */
  onHealth?: (health: LinkHealth) => void;
}

/**
 * One upstream connection and everything on it: the connection's life (start, handshake, crash
 * restart with exponential backoff, stop) and the multiplexer that lets many sessions share it.
 */
export class Link implements UpstreamLink {
  spec: ServiceSpec;
  readonly mode: LinkMode;
  /** Kept running even with no session attached (shared stdio links under the `boot` strategy). */
  keepAlive = false;
  lastActivity = Date.now();
  private clientParams: InitializeRequest['params'] | undefined;
  /** The connection's life, shared with the 2026-07-28 era (lifecycle.ts). */
  private readonly life: Lifecycle;
  private readonly mux: Multiplexer;
  private readonly unrouted: LineLimiter;
  /** What this era says and hears on a connection: the handshake and what follows it (session-dialect.ts). */
  private readonly dialect: SessionEraDialect;
  /** The upstream's requests to its client (server-requests.ts). */
  private readonly relay: ServerRequestRelay;
  /** Serves several users' sessions on one connection (decision 0042): roots and tasks stay away from it. */
  private readonly manyUsers: boolean;

  constructor(private readonly opts: LinkOptions) {
    this.spec = opts.spec;
    this.mode = opts.mode;
    this.manyUsers = opts.mode === 'shared' && !opts.oneUser;
    this.dialect = new SessionEraDialect({
      mode: opts.mode,
      open: () => opts.open(this.spec),
      clientParams: () => this.clientParams,
      mux: () => this.mux,
      relay: () => this.relay,
      deps: opts.deps,
      onHealth: opts.onHealth,
      log: (level, message) => this.log(level, message),
    });
    this.life = new Lifecycle(this.dialect, {
      tuning: opts.deps.tuning,
      wanted: () => this.wanted(),
      restarting: () => opts.deps.metrics?.upstreamRestarted(this.spec.name),
    });
    this.mux = new Multiplexer({
      mode: opts.mode,
      transmit: (pending) => this.transmit(pending),
      post: (message) => this.post(message),
      serverRequest: (request, origin) => this.relay.relay(request, origin),
      serverCancelled: (id, reason) => this.relay.withdraw(id, reason ?? 'cancelled by the tool server'),
      callTimeoutMs: () => this.callTimeoutMs(),
      logUnrouted: (message) => this.unrouted.offer(`${message.method}: ${JSON.stringify(message.params ?? {})}`),
      touch: () => {
        this.lastActivity = Date.now();
      },
    });
    this.relay = new ServerRequestRelay({
      mode: opts.mode,
      manyUsers: this.manyUsers,
      mux: this.mux,
      post: (message) => this.post(message),
      callTimeoutMs: () => this.callTimeoutMs(),
      log: (level, message) => this.log(level, message),
    });
    this.unrouted = new LineLimiter(
      5,
      (line) => this.log('info', line.slice(0, 2000)),
      (n) => this.log('info', `${n} more upstream notifications not delivered to any client`),
    );
  }

  get state(): LinkState {
    return this.life.state;
  }

  get attachedCount(): number {
    return this.mux.sessions.size;
  }

  get inFlight(): number {
    return this.mux.inFlight;
  }

  /** The server's description of itself from its last `initialize` (undefined before the first). */
  get about(): string | undefined {
    return describeServer(this.dialect.initResult);
  }

  /** Tools the server listed at its last start (undefined when it could not say). */
  get toolCount(): number | undefined {
    return this.dialect.toolCount;
  }

  /**
   * The revisions the server named when it refused the 2025 handshake as one that speaks only the 2026-07-28 era:
   * no use retrying (a client of that era is served by a modern link); undefined once a start succeeds.
   */
  get onlyModern(): string[] | undefined {
    return this.dialect.onlyModern;
  }

  get isOpen(): boolean {
    return this.state !== 'closed';
  }

  /** Should be running: kept alive, or some session is attached (a crash then restarts it). */
  private wanted(): boolean {
    return this.keepAlive || this.attachedCount > 0;
  }

  has(sessionId: string): boolean {
    return this.mux.sessions.has(sessionId);
  }

  // ---- UpstreamLink ----

  async initialize(session: SessionPeer, params: InitializeRequest['params']): Promise<InitializeResult> {
    this.mux.attach(session);
    if (this.mode === 'session' && !this.clientParams) this.clientParams = params;
    await this.ensureReady();
    const cached = this.dialect.initResult as InitializeResult;
    return this.mode === 'session' ? cached : sharedInitializeResult(cached, params?.protocolVersion);
  }

  request(session: SessionPeer, request: JSONRPCRequest, sink: RequestSink, signal?: AbortSignal): void {
    if (request.method === 'initialize') {
      this.initialize(session, request.params as InitializeRequest['params']).then(
        (result) => sink.response({ jsonrpc: '2.0', id: request.id, result }),
        (err) => sink.response(errorResponse(request.id, GatewayErrorCode.ConnectionClosed, `upstream unavailable: ${errorText(err)}`)),
      );
      return;
    }
    if (this.state === 'closed') {
      sink.response(errorResponse(request.id, GatewayErrorCode.ConnectionClosed, `upstream unavailable: ${this.life.lastError}`));
      return;
    }
    const shaped = this.manyUsers ? forSharedUpstream(request) : request;
    if (!shaped) {
      const why = 'the tool server is shared by several users and its tasks are theirs together (an isolated service offers them)';
      sink.response(errorResponse(request.id, GatewayErrorCode.MethodNotFound, `${request.method} is not available: ${why}`));
      return;
    }
    this.mux.request(session, shaped, sink, signal);
  }

  notify(session: SessionPeer, notification: JSONRPCNotification): void {
    if (notification.method === 'notifications/initialized') return;
    if (notification.method === 'notifications/cancelled') {
      const id = notification.params?.requestId;
      if (typeof id === 'string' || typeof id === 'number') this.mux.cancelFromClient(session, id, notification.params?.reason);
      return;
    }
    // Anything else a client says concerns the upstream only when it is that client's alone.
    if (this.mode === 'session' && this.state === 'ready') this.post(notification);
  }

  detach(session: SessionPeer): void {
    const emptied = this.mux.detach(session);
    if (this.state !== 'ready') return;
    const timeout = this.opts.deps.tuning.initializeTimeoutMs;
    for (const uri of emptied) this.mux.internal('resources/unsubscribe', { uri }, timeout).catch(() => undefined);
  }

  // ---- lifecycle, driven by the pool ----

  attach(session: SessionPeer): void {
    this.mux.attach(session);
  }

  /** Starts the connection now if it is stopped (boot strategy); failures go to backoff. */
  wake(): void {
    this.life.wake();
  }

  /** Waits for a usable connection, starting one when needed (lifecycle.ts says what that means in each state). */
  ensureReady(): Promise<void> {
    return this.life.ensureReady();
  }

  /** Stops the connection (idle, disabled); a later request starts it again. */
  stop(reason: string): Promise<void> {
    return this.life.stop(reason);
  }

  /** Stops for good: every later request is answered with an error. */
  async close(reason: string): Promise<void> {
    await this.life.close(reason);
    this.unrouted.dispose();
  }

  /** The service was edited: a running connection restarts with the new settings. */
  reconfigure(spec: ServiceSpec): Promise<void> {
    this.spec = spec;
    return this.life.restart('service configuration changed');
  }

  /**
   * Reconnect (the console's Reconnect button): drops the connection and, when it is wanted, starts it again at
   * once, the backoff forgotten. A stopped link stays stopped (its next request starts it); a closed one stays closed.
   */
  restart(reason: string): Promise<void> {
    return this.life.restart(reason);
  }

  /** Health round trip through the running connection: ping, then tools/list. */
  async roundTrip(): Promise<number | undefined> {
    await this.mux.internal('ping', undefined, this.opts.deps.tuning.initializeTimeoutMs).catch((err) => {
      // An error answer to ping is still an answer: the server is there (unless it stopped meanwhile).
      if (!(err instanceof UpstreamRpcError) || this.state === 'stopped') throw err;
    });
    const tools = await this.dialect.countTools(false);
    if (this.state === 'stopped') throw new Error(STOPPED_WHILE_CHECKED);
    return tools;
  }

  // ---- writing upstream ----

  private transmit(pending: Pending): void {
    if (pending.raw || this.state === 'ready') {
      this.write(pending);
      return;
    }
    if (!pending.session && this.state === 'stopped') {
      // The gateway's own requests (a health check's tools/list, a log level) never start a stopped process: a
      // check that began just before an idle stop would otherwise bring it back for good. Clients' calls do.
      this.mux.fail(pending, GatewayErrorCode.ConnectionClosed, STOPPED_WHILE_CHECKED);
      return;
    }
    pending.busy = true;
    this.ensureReady().then(
      () => {
        pending.busy = false;
        this.write(pending);
      },
      (err) => {
        pending.busy = false;
        this.mux.fail(pending, GatewayErrorCode.ConnectionClosed, `upstream unavailable: ${errorText(err)}`);
      },
    );
  }

  private write(pending: Pending): void {
    const channel = this.life.channel;
    if (!this.mux.isLive(pending)) return;
    if (!channel) {
      this.mux.fail(pending, GatewayErrorCode.ConnectionClosed, `upstream unavailable: ${this.life.lastError || 'not connected'}`);
      return;
    }
    const gen = this.life.current;
    let sent: void | Promise<void>;
    try {
      sent = channel.send(pending.message);
    } catch (err) {
      this.mux.fail(pending, GatewayErrorCode.ConnectionClosed, `upstream unavailable: ${errorText(err)}`);
      return;
    }
    if (!sent) return;
    pending.busy = true;
    sent.then(
      () => {
        pending.busy = false;
      },
      (err) => this.sendFailed(pending, err, gen),
    );
  }

  /** A remote upstream that lost our session is re-initialised once, transparently, and the request sent again. */
  private sendFailed(pending: Pending, err: unknown, gen: number): void {
    const lost = err instanceof SessionLostError || !this.life.isCurrent(gen);
    if (lost && !pending.retried && !pending.raw && this.state !== 'closed' && this.mux.isLive(pending)) {
      // Still busy: renewing the connection must not fail this request, it goes again.
      pending.retried = true;
      if (this.life.isCurrent(gen)) this.renew(errorText(err));
      this.transmit(pending);
      return;
    }
    pending.busy = false;
    this.mux.fail(pending, GatewayErrorCode.ConnectionClosed, `upstream request failed: ${errorText(err)}`);
  }

  private renew(reason: string): void {
    this.log('warn', `upstream session lost (${reason}); re-initialising`);
    this.life.renew('upstream session lost');
  }

  private post(message: JSONRPCMessage): void {
    try {
      this.life.channel?.send(message)?.catch(() => undefined);
    } catch {
      // The connection is going away; its loss is reported by onclose.
    }
  }

  /** Server-to-client requests of this link still waiting for their client (tests: nothing leaks). */
  get relayedCount(): number {
    return this.relay.size;
  }

  private callTimeoutMs(): number {
    return (this.opts.deps.options.int('UpstreamCallTimeoutSeconds') || 300) * 1000;
  }

  private log(level: 'info' | 'warn' | 'error', message: string): void {
    this.opts.deps.serviceLog.write({ serviceId: this.spec.id, serviceName: this.spec.name, phase: 'run', level, message });
  }
}
