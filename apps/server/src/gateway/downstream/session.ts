import type { InitializeRequest, InitializeResult, JSONRPCNotification } from '@modelcontextprotocol/sdk/types.js';
import type { ServiceSpec } from '../catalog.js';
import type { SessionPeer, UpstreamLink, UpstreamPool } from '../link-api.js';
import { CallScope } from './call-scope.js';
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
  transport: 'streamable' | 'legacy';
  /** The client's initialize parameters; a neutral stand-in when the session was rebuilt after a restart. */
  initParams: InitializeParams;
  /** When the revocation list was last read for this id (0: never). */
  revocationCheckedAt?: number;
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
  readonly transport: 'streamable' | 'legacy';
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
  /** Run once when the session leaves the registry (a group session releases its member sessions). */
  readonly onRemoved: (() => void)[] = [];
  /** Each request waiting upstream, with how to end it when the session ends first. */
  private readonly waiting = new Set<(reason: string) => void>();
  private boundLink: UpstreamLink | undefined;
  private bound: Promise<UpstreamLink> | undefined;

  constructor(init: SessionInit) {
    this.key = init.key;
    this.id = init.peerId;
    this.userId = init.userId;
    this.serviceId = init.serviceId;
    this.issuedAt = init.issuedAt;
    this.transport = init.transport;
    this.protocolVersion = init.protocolVersion;
    this.initParams = init.initParams;
    this.revocationCheckedAt = init.revocationCheckedAt ?? 0;
  }

  notify(message: JSONRPCNotification): void {
    this.stream?.message(JSON.stringify(message));
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
    const waiting = [...this.waiting];
    this.waiting.clear();
    for (const end of waiting) end(reason);
  }

  /** Runs the client's initialize on the link and binds the session to it. */
  async initialize(pool: UpstreamPool, service: ServiceSpec, params: InitializeParams): Promise<InitializeResult> {
    this.initParams = params;
    const link = await pool.acquire(service, this);
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
    const bound = link.initialize(this, this.initParams).then(() => link);
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
