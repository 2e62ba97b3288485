import type {
  InitializeRequest,
  InitializeResult,
  JSONRPCMessage,
  JSONRPCNotification,
  JSONRPCRequest,
  RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import type { ServiceSpec } from '../catalog.js';
import type { HealthStatus, RequestSink, SessionPeer, UpstreamLink } from '../link-api.js';
import { type Channel, errorText, SessionLostError } from './channel.js';
import {
  countTools,
  describeRoundTrip,
  describeServer,
  forSharedUpstream,
  sharedInitializeResult,
  upstreamInitParams,
} from './handshake.js';
import { type EraDialect, Lifecycle, type LinkState } from './lifecycle.js';
import { LineLimiter } from './line-limiter.js';
import { errorResponse, GatewayErrorCode, type LinkMode, Multiplexer, type Pending, UpstreamRpcError } from './multiplexer.js';
import type { LinkDeps } from './types.js';

export type { LinkState } from './lifecycle.js';

/** What a request of the gateway's own gets from a link that stopped (idle) while it was on its way. */
export const STOPPED_WHILE_CHECKED = 'the tool server stopped (idle) during the check';

export interface LinkHealth {
  status: HealthStatus;
  details: string;
  /** The start failed because the server speaks only these 2026-07-28-era revisions (the pool checks it in one). */
  onlyModern?: string[];
  toolCount?: number;
  about?: string;
}

/**
 * What a refused `initialize` means when the server named only revisions of the 2026-07-28 era as the ones it
 * speaks (-32022 with `data.supported`): its clients of that era are served (modern-link.ts); a 2025-era one is not.
 */
export function modernOnlyRevisions(err: unknown): string[] | undefined {
  if (!(err instanceof UpstreamRpcError) || err.code !== -32022) return undefined;
  const supported = (err.data as { supported?: unknown } | undefined)?.supported;
  if (!Array.isArray(supported) || supported.length === 0) return undefined;
  return supported.every((v): v is string => typeof v === 'string' && v >= '2026-07-28') ? supported : undefined;
}

const modernOnlyNote = (revisions: string[] | undefined): string =>
  revisions ? ` (the tool server speaks only protocol revision ${revisions.join(', ')}: use a client of that revision)` : '';

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
  toolCount: number | undefined;
  private initResult: InitializeResult | undefined;
  private clientParams: InitializeRequest['params'] | undefined;
  /** The connection's life, shared with the 2026-07-28 era (lifecycle.ts). */
  private readonly life: Lifecycle;
  private readonly mux: Multiplexer;
  private readonly unrouted: LineLimiter;
  /** When the current start began, and whether an earlier connection had been up (its sessions list again). */
  private startedAt = 0;
  private restarted = false;
  /**
   * The revisions the server named when it refused the 2025 handshake as one that speaks only the 2026-07-28 era:
   * no use retrying (a client of that era is served by a modern link); undefined once a start succeeds.
   */
  onlyModern: string[] | undefined;
  /** The upstream's requests relayed to a client and not answered yet, by the upstream's id: how to withdraw each. */
  private readonly relayed = new Map<RequestId, AbortController>();
  /** Serves several users' sessions on one connection (decision 0042): roots and tasks stay away from it. */
  private readonly manyUsers: boolean;
  /** The service log said once for this connection why its roots/list got no roots. */
  private rootsNoted = false;

  constructor(private readonly opts: LinkOptions) {
    this.spec = opts.spec;
    this.mode = opts.mode;
    this.manyUsers = opts.mode === 'shared' && !opts.oneUser;
    this.life = new Lifecycle(this.dialect(), {
      tuning: opts.deps.tuning,
      wanted: () => this.wanted(),
      restarting: () => opts.deps.metrics?.upstreamRestarted(this.spec.name),
    });
    this.mux = new Multiplexer({
      mode: opts.mode,
      transmit: (pending) => this.transmit(pending),
      post: (message) => this.post(message),
      serverRequest: (request, origin) => this.serverRequest(request, origin),
      serverCancelled: (id, reason) => this.relayed.get(id)?.abort(reason ?? 'cancelled by the tool server'),
      callTimeoutMs: () => (opts.deps.options.int('UpstreamCallTimeoutSeconds') || 300) * 1000,
      logUnrouted: (message) => this.unrouted.offer(`${message.method}: ${JSON.stringify(message.params ?? {})}`),
      touch: () => {
        this.lastActivity = Date.now();
      },
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
    return describeServer(this.initResult);
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
    const cached = this.initResult as InitializeResult;
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
    const tools = await this.countTools(false);
    if (this.state === 'stopped') throw new Error(STOPPED_WHILE_CHECKED);
    return tools;
  }

  // ---- the 2025-11-25 dialect (lifecycle.ts, EraDialect) ----

  private dialect(): EraDialect {
    return {
      open: () => this.opts.open(this.spec),
      handshake: (channel, current) => this.handshake(channel, current),
      receive: (message) => this.mux.receive(message),
      up: () => this.up(),
      down: (reason, onPurpose) => {
        this.mux.failAll(reason, onPurpose);
        if (!onPurpose) this.withdrawRelayed(reason);
      },
      failed: (reason, restartInMs) => this.failed(reason, restartInMs),
      refusal: (err) => {
        // A server that speaks only the 2026-07-28 era refuses every 2025 handshake alike: the next 2025 client's
        // request tries again, nothing restarts it meanwhile.
        this.onlyModern = modernOnlyRevisions(err);
        return this.onlyModern ? modernOnlyNote(this.onlyModern) : undefined;
      },
    };
  }

  /** `initialize`, `notifications/initialized`, and the tool count for the health record. */
  private async handshake(channel: Channel, current: () => boolean): Promise<void> {
    this.startedAt = Date.now();
    this.mux.connectionOpened();
    this.rootsNoted = false;
    const params = upstreamInitParams(this.mode, this.clientParams);
    const result = (await this.mux.internal('initialize', params, this.opts.deps.tuning.initializeTimeoutMs, true)) as InitializeResult;
    if (!current()) return;
    channel.setProtocolVersion?.(result.protocolVersion);
    channel.send({ jsonrpc: '2.0', method: 'notifications/initialized' })?.catch(() => undefined);
    const toolCount = result.capabilities?.tools ? await this.countTools(true) : 0;
    if (!current()) return;
    this.restarted = this.initResult !== undefined;
    this.onlyModern = undefined;
    this.initResult = result;
    this.toolCount = toolCount;
  }

  private up(): void {
    const result = this.initResult as InitializeResult;
    this.resubscribe();
    // A restarted process starts at its own default level: the level the sessions asked for again.
    this.mux.applyLevel();
    if (this.restarted) this.announceLists(result);
    this.opts.onHealth?.({
      status: 'healthy',
      details: describeRoundTrip(this.toolCount, Date.now() - this.startedAt),
      toolCount: this.toolCount,
      about: describeServer(result),
    });
  }

  /** A start failed or a running connection died: on record, and the shared link's health says so. */
  private failed(reason: string, restartInMs: number | undefined): void {
    this.log('error', restartInMs === undefined ? reason : `${reason}; restarting in ${restartInMs / 1000} s`);
    this.opts.onHealth?.({
      status: 'unhealthy',
      details: this.opts.deps.serviceLog.redact(reason),
      ...(this.onlyModern ? { onlyModern: this.onlyModern } : {}),
    });
  }

  /**
   * A restarted upstream may offer other tools, prompts and resources than the one its sessions
   * listed, and most servers do not say so at start: every attached session is told to list again
   * (docs/architecture.md §4), whatever the process itself sends.
   */
  private announceLists(result: InitializeResult): void {
    const caps = result.capabilities ?? {};
    for (const kind of ['tools', 'prompts', 'resources'] as const) {
      if (caps[kind]) this.mux.fanOut({ jsonrpc: '2.0', method: `notifications/${kind}/list_changed` });
    }
  }

  /** The tool count is informative only: a failing tools/list is logged, not fatal. */
  private async countTools(raw: boolean): Promise<number | undefined> {
    try {
      return await countTools(this.mux, this.opts.deps.tuning.initializeTimeoutMs, raw);
    } catch (err) {
      this.log('warn', `tools/list failed: ${errorText(err)}`);
      return undefined;
    }
  }

  private resubscribe(): void {
    const timeout = this.opts.deps.tuning.initializeTimeoutMs;
    for (const uri of this.mux.subscriptions.uris()) {
      this.mux
        .internal('resources/subscribe', { uri }, timeout)
        .catch((err) => this.log('warn', `re-subscribing ${uri} failed: ${errorText(err)}`));
    }
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

  /**
   * A request from the upstream to its client (docs/architecture.md §4). It goes to the client that caused
   * it: the client request it names or the sole one that can have caused it (`origin`, Multiplexer.originOf),
   * or the one session of an isolated link; that client must have declared the capability. `roots/list` on a
   * link several users share is answered here (answerRootsItself). Anything else is answered with an
   * error saying why, never sent to a client that did not cause it. `ping` is answered here on a
   * shared link (the gateway is the upstream's peer there) and relayed on an isolated one.
   */
  private serverRequest(request: JSONRPCRequest, origin: Pending | undefined): void {
    const [only] = this.mode === 'session' && this.mux.sessions.size === 1 ? this.mux.sessions.values() : [];
    const session = origin?.session ?? only;
    const refuse = (code: number, message: string) => this.post(errorResponse(request.id, code, message));
    if (request.method === 'ping' && (this.mode === 'shared' || !session?.request)) {
      this.post({ jsonrpc: '2.0', id: request.id, result: {} });
      return;
    }
    if (request.method === 'roots/list' && this.manyUsers) {
      this.answerRootsItself(request.id);
      return;
    }
    if (!session) {
      const n = this.mux.inFlight;
      const why =
        n === 0
          ? 'no client request is in flight on this shared connection'
          : n === 1
            ? "other users' calls have run on this shared connection and the request names no call"
            : `${n} client requests are in flight on this shared connection and the request names none of them`;
      refuse(
        GatewayErrorCode.NotRelayed,
        `${request.method} cannot be relayed to a client: ${why}, so the gateway cannot tell which client it is for (an isolated service relays every such request)`,
      );
      return;
    }
    const refusal = session.refuses?.(request);
    if (refusal) {
      refuse(GatewayErrorCode.MethodNotFound, `${request.method} is not available: ${refusal}`);
      return;
    }
    const timeoutMs = (this.opts.deps.options.int('UpstreamCallTimeoutSeconds') || 300) * 1000;
    const relay = origin?.sink.request ?? session.request?.bind(session);
    if (!relay) {
      refuse(GatewayErrorCode.MethodNotFound, `${request.method} is not available: the client cannot receive requests`);
      return;
    }
    // The upstream may withdraw it (notifications/cancelled), and a connection that ends takes it along.
    const withdrawal = new AbortController();
    this.relayed.get(request.id)?.abort('the tool server sent another request under the same id');
    this.relayed.set(request.id, withdrawal);
    const settled = () => {
      if (this.relayed.get(request.id) === withdrawal) this.relayed.delete(request.id);
    };
    relay(request, timeoutMs, withdrawal.signal).then(
      (answer) => {
        settled();
        this.post({ ...answer, id: request.id } as JSONRPCMessage);
      },
      (err) => {
        settled();
        // Withdrawn: a cancelled request gets no answer (MCP cancellation).
        if (withdrawal.signal.aborted) return;
        if (request.method === 'ping') this.post({ jsonrpc: '2.0', id: request.id, result: {} });
        else refuse(GatewayErrorCode.NotRelayed, `${request.method} could not be relayed to the client: ${errorText(err)}`);
      },
    );
  }

  /**
   * `roots/list` on a connection several users share: a server keeps the roots it is given as its process's
   * state (server-everything does) and would show one client's roots to every other user's call. The
   * gateway answers for itself, as the upstream's client: it has no roots (decision 0042).
   */
  private answerRootsItself(id: RequestId): void {
    this.post({ jsonrpc: '2.0', id, result: { roots: [] } });
    if (this.rootsNoted) return;
    this.rootsNoted = true;
    this.log(
      'info',
      "roots/list answered with no roots: this tool server is shared by several users, so no client's roots are passed to it (isolate the service per session to pass them)",
    );
  }

  /** Requests of an upstream connection that is gone: their clients are told they are withdrawn. */
  private withdrawRelayed(reason: string): void {
    const all = [...this.relayed.values()];
    this.relayed.clear();
    for (const each of all) each.abort(reason);
  }

  /** Server-to-client requests of this link still waiting for their client (tests: nothing leaks). */
  get relayedCount(): number {
    return this.relayed.size;
  }

  private log(level: 'info' | 'warn' | 'error', message: string): void {
    this.opts.deps.serviceLog.write({ serviceId: this.spec.id, serviceName: this.spec.name, phase: 'run', level, message });
  }
}
