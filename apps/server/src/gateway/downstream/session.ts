import type {
  InitializeRequest,
  InitializeResult,
  JSONRPCError,
  JSONRPCNotification,
  JSONRPCRequest,
  JSONRPCResponse,
} from '@modelcontextprotocol/sdk/types.js';
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { VERSION } from '../../version.js';
import type { ServiceSpec } from '../catalog.js';
import type { SessionPeer, UpstreamLink, UpstreamPool } from '../link-api.js';
import { UpstreamConnectionMissing } from '../upstream-auth.js';
import { CallScope } from './call-scope.js';
import { ClientRequests, refusalFor } from './client-requests.js';
import type { SseStream } from './http-io.js';

export type InitializeParams = InitializeRequest['params'];

export interface SessionInit {
  /** The id the client sends: a signed token (streamable HTTP) or a random id (legacy SSE). */
  key: string;
  /** Identity towards the upstream side: the token's nonce. */
  peerId: string;
  userId: number;
  serviceId: number;
  protocolVersion: string;
  issuedAt: number;
  /** `modern`: a 2026-07-28 request or listen stream (modern.ts), which lives no longer than its HTTP exchange. */
  transport: 'streamable' | 'legacy' | 'modern';
  /** A modern request's `Mcp-Param-*` headers, passed on to an upstream that speaks the revision over HTTP. */
  forwardHeaders?: Record<string, string>;
  /** A modern session that must reach the upstream in the legacy era all the same (a listen stream hears list changes there). */
  legacyUpstream?: boolean;
  /** A modern client's listen stream (or a group member's share of one): placed with the user's modern requests (link-api.ts). */
  modernListen?: boolean;
  /** The client's initialize parameters; a neutral stand-in when the session was rebuilt after a restart. */
  initParams: InitializeParams;
  /** When the revocation list was last read for this id (0: never). */
  revocationCheckedAt?: number;
  /** The prefix of the ids of its server-to-client requests (default `toolport-<first 8 of peerId>`). */
  requestPrefix?: string;
}

/**
 * One client session on this replica: what the upstream side knows as a SessionPeer, plus the
 * session's standalone stream and the link it is bound to. For streamable HTTP this is only a cache
 * of what the signed id says: it can be dropped (idle, cap, restart) and rebuilt on the next request.
 */
export class DownstreamSession implements SessionPeer {
  /** Set once more on initialize, when the version the link negotiated is known. */
  key: string;
  readonly id: string;
  readonly userId: number;
  readonly serviceId: number;
  readonly issuedAt: number;
  readonly transport: 'streamable' | 'legacy' | 'modern';
  /** A modern request's session may be served by the service's modern link (link-api.ts); a listen stream is not. */
  readonly era: 'modern' | undefined;
  readonly forwardHeaders: Record<string, string> | undefined;
  readonly modernListen: boolean | undefined;
  protocolVersion: string;
  initParams: InitializeParams;
  /** The GET stream (streamable HTTP) or the SSE stream (legacy). */
  stream: SseStream | undefined;
  lastActive = Date.now();
  /** Requests of this session waiting for their answer. */
  inflight = 0;
  /** When the revocation list was last read for this id. */
  revocationCheckedAt: number;
  closed = false;
  /** Why the session ended, once `closed`: the end of the message its late requests are answered with. */
  closedReason = '';
  /** Legacy transport: the requests whose answers will travel on the stream, cancelled when it ends. */
  readonly calls: CallScope = new CallScope(this);
  /** list_changed notifications that found no open stream (notify). */
  private readonly unsent = new Set<string>();
  /** Server-to-client requests sent to this client and not answered yet (client-requests.ts). */
  readonly outgoing: ClientRequests;
  /** Run once when the session leaves the registry (a group session releases its member sessions). */
  readonly onRemoved: (() => void)[] = [];
  /** Each request waiting upstream, with how to end it when the session ends first. */
  private readonly waiting = new Set<(reason: string) => void>();
  /**
   * Opened before its user connected their own account to a per-user OAuth service: it lists no tools
   * yet, and hears tools/list_changed when a connection of the service changes (gateway/index.ts).
   */
  awaitingConnection = false;
  private boundLink: UpstreamLink | undefined;
  private bound: Promise<UpstreamLink> | undefined;

  constructor(init: SessionInit) {
    this.key = init.key;
    this.id = init.peerId;
    this.userId = init.userId;
    this.serviceId = init.serviceId;
    this.issuedAt = init.issuedAt;
    this.transport = init.transport;
    this.era = init.transport === 'modern' && !init.legacyUpstream ? 'modern' : undefined;
    this.forwardHeaders = init.forwardHeaders;
    this.modernListen = init.modernListen;
    this.protocolVersion = init.protocolVersion;
    this.initParams = init.initParams;
    this.revocationCheckedAt = init.revocationCheckedAt ?? 0;
    this.outgoing = new ClientRequests(init.requestPrefix ?? `toolport-${init.peerId.slice(0, 8)}`);
  }

  notify(message: JSONRPCNotification): void {
    if (this.stream?.open) {
      this.stream.message(JSON.stringify(message));
      return;
    }
    // A list change while the client's stream is down (between its reconnects) is kept, once per kind,
    // and sent when the stream opens again: a client must not keep a stale tool list.
    if (message.method.endsWith('/list_changed')) this.unsent.add(message.method);
  }

  /** The session's standalone stream (re)opened: what it missed meanwhile. */
  attachStream(stream: SseStream): void {
    this.stream = stream;
    const missed = [...this.unsent];
    this.unsent.clear();
    for (const method of missed) stream.message(JSON.stringify({ jsonrpc: '2.0', method }));
  }

  /** A server-to-client request tied to none of this client's requests: on the standalone stream. */
  request(message: JSONRPCRequest, timeoutMs: number, signal?: AbortSignal): Promise<JSONRPCResponse | JSONRPCError> {
    return this.outgoing.send(
      message,
      (json) => {
        if (!this.stream?.open) return false;
        this.stream.message(json);
        return true;
      },
      timeoutMs,
      signal,
    );
  }

  refuses(message: JSONRPCRequest): string | undefined {
    // A modern request's client hears of a capability it lacks as -32021, from the call itself (modern.ts).
    if (this.transport === 'modern') return undefined;
    return refusalFor(this.initParams?.capabilities, message);
  }

  touch(): void {
    this.lastActive = Date.now();
  }

  /** A request is waiting upstream until `end` is called (by its answer, or by `endRequests`). */
  trackRequest(end: (reason: string) => void): void {
    this.waiting.add(end);
  }

  untrackRequest(end: (reason: string) => void): void {
    this.waiting.delete(end);
  }

  /** The session ends: every request still waiting is answered with an error and cancelled upstream. */
  endRequests(reason: string): void {
    this.outgoing.rejectAll(`session closed: ${reason}`);
    const waiting = [...this.waiting];
    this.waiting.clear();
    for (const end of waiting) end(reason);
  }

  /** Runs the client's initialize on the link and binds the session to it. */
  async initialize(pool: UpstreamPool, service: ServiceSpec, params: InitializeParams): Promise<InitializeResult> {
    this.initParams = params;
    let link: UpstreamLink;
    try {
      link = await pool.acquire(service, this);
    } catch (err) {
      if (!(err instanceof UpstreamConnectionMissing && err.perUser)) throw err;
      // A user who has not connected their own account yet: the session opens so that a call can tell
      // them where to connect (a URL elicitation, then the error; dispatcher.ts). Once they have, the
      // next request binds the session to their link with these same parameters (`link`).
      this.awaitingConnection = true;
      return {
        protocolVersion: SUPPORTED_PROTOCOL_VERSIONS.includes(params.protocolVersion) ? params.protocolVersion : LATEST_PROTOCOL_VERSION,
        capabilities: { tools: { listChanged: true } },
        serverInfo: { name: service.name, version: VERSION },
      };
    }
    const result = await link.initialize(this, params);
    this.boundLink = link;
    this.bound = Promise.resolve(link);
    return result;
  }

  /**
   * The link serving this session now. The pool may hand out a new link (service edited, process
   * restarted, or this session rebuilt after a gateway restart): the session then introduces itself
   * to it with its initialize parameters before any request goes through.
   */
  async link(pool: UpstreamPool, service: ServiceSpec): Promise<UpstreamLink> {
    const link = await pool.acquire(service, this);
    if (link === this.boundLink && this.bound) return this.bound;
    this.boundLink = link;
    const bound = link.initialize(this, this.initParams).then(() => {
      this.awaitingConnection = false;
      return link;
    });
    this.bound = bound;
    bound.catch(() => {
      if (this.bound === bound) {
        this.boundLink = undefined;
        this.bound = undefined;
      }
    });
    return bound;
  }
}

/** What a rebuilt session tells a new link about its client: nothing it cannot vouch for. */
export const restoredInitParams = (protocolVersion: string): InitializeParams => ({
  protocolVersion,
  capabilities: {},
  clientInfo: { name: 'toolport-restored-session', version: '0' },
});
