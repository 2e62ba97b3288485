import type { JSONRPCError, JSONRPCMessage, JSONRPCResponse } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import type { RedisHub } from '../../infra/redis.js';
import type { ServiceCatalog, ServiceSpec } from '../catalog.js';
import { replicaOfRequestId } from './client-requests.js';
import { newNonce } from './session-token.js';

/** How long a replica waits for the owner of a legacy stream to take a forwarded POST. */
const ANSWER_MS = 5000;
const REPLICA_ID_SHAPE = /^[A-Za-z0-9_-]{12}$/;

/** The endpoints a legacy session belongs to: `/proxy/{service}` or a group's `/group/{name}`. */
export type RelayFace = '/proxy' | '/group';

/** A legacy message POST as the replica that received it passes it on: authenticated and parsed. */
export interface ForwardedPost {
  sessionId: string;
  userId: number;
  /** The service's id, or a group's stand-in id (negative; group-face.ts). */
  serviceId: number;
  messages: JSONRPCMessage[];
  bytes: number;
}

/** The owner's side: undefined when it holds no such session, else the dispatch it started. */
export type ForwardedPostHandler = (post: ForwardedPost, service: ServiceSpec) => Promise<void> | undefined;

/** How the owner finds the service (or group stand-in) a forwarded POST is for. */
export type ServiceLookup = (serviceId: number) => Promise<ServiceSpec | undefined>;

/**
 * A client's answer to a server-to-client request, POSTed to a replica other than the one that sent
 * the request (client-requests.ts): authenticated there, passed on to the sender.
 */
export interface ForwardedAnswer {
  /** The session's id as the client sends it (a signed id: the same on every replica). */
  sessionKey: string;
  userId: number;
  serviceId: number;
  answer: JSONRPCResponse | JSONRPCError;
}

const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v);

/**
 * Legacy HTTP+SSE across replicas (docs/architecture.md §7). The stream of a 2024-11-05 session lives on
 * one replica, but the load balancer may send its message POSTs to any: the session id names the
 * replica holding the stream (`<nonce>.<replica id>`), and a POST that lands elsewhere is
 * authenticated and parsed there, then published on the owner's channel. The owner feeds it into
 * the session (answers travel on the stream as always) and says so on the sender's channel; the
 * sender then answers 202, or 404 when no owner took it (stream gone, replica gone) in time. The same
 * holds for a group's legacy endpoints (`/group/{name}/sse`), whose sessions carry the group's stand-in.
 *
 * It also carries the clients' answers to server-to-client requests (sampling, elicitation, roots)
 * across replicas: such a request is written where the client request that caused it is answered, on
 * one replica, under an id naming that replica (client-requests.ts); a streamable HTTP client may POST
 * its answer to any replica, which checks the session there and passes the answer to the named one.
 */
export class LegacyRelay {
  private readonly waiting = new Map<string, (accepted: boolean) => void>();
  private readonly faces = new Map<RelayFace, { take: ForwardedPostHandler; lookup: ServiceLookup }>();
  private answerHandler: ((answer: ForwardedAnswer) => void) | undefined;
  private closed = false;

  constructor(
    private readonly hub: RedisHub,
    private readonly catalog: ServiceCatalog,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    await this.hub.subscribe(this.hub.replicaChannel(), (m) => this.onMessage(m));
  }

  /** A new legacy session id that says which replica holds its stream. */
  newSessionId(): string {
    return `${newNonce()}.${this.hub.replicaId}`;
  }

  /** The replica holding a legacy session's stream, when the id names one other than this. */
  ownerOf(sessionId: string): string | undefined {
    const owner = sessionId.slice(sessionId.lastIndexOf('.') + 1);
    return owner !== sessionId && owner !== this.hub.replicaId && REPLICA_ID_SHAPE.test(owner) ? owner : undefined;
  }

  /**
   * How this replica takes the POSTs forwarded to it for one face; `lookup` finds what they are for
   * (default: the service by its id, enabled).
   */
  serve(face: RelayFace, take: ForwardedPostHandler, lookup?: ServiceLookup): void {
    this.faces.set(face, { take, lookup: lookup ?? (async (id) => this.catalog.byId(id)) });
  }

  /** How this replica takes the clients' answers other replicas pass back to it. */
  serveAnswers(handler: (answer: ForwardedAnswer) => void): void {
    this.answerHandler = handler;
  }

  /**
   * A client's answer POSTed here for a server-to-client request another replica sent: passed to that
   * replica when the answer's id names one. Best effort, like the answer itself: an answer nobody
   * waits for any more is dropped there, as here.
   */
  passAnswer(answer: ForwardedAnswer): void {
    const owner = replicaOfRequestId(answer.answer.id);
    if (this.closed || !owner || owner === this.hub.replicaId) return;
    void this.hub.publish(this.hub.replicaChannel(owner), { kind: 'client-answer', ...answer });
  }

  /** Passes a POST on to the owner; true once the owner has taken it. */
  async forward(owner: string, face: RelayFace, post: ForwardedPost): Promise<boolean> {
    if (this.closed) return false;
    const ref = newNonce();
    const answered = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => this.settle(ref, false), ANSWER_MS);
      this.waiting.set(ref, (accepted) => {
        clearTimeout(timer);
        resolve(accepted);
      });
    });
    const receivers = await this.hub.publish(this.hub.replicaChannel(owner), {
      kind: 'post',
      from: this.hub.replicaId,
      ref,
      face,
      ...post,
    });
    // Nobody listens on that channel: the replica is gone, and its streams with it.
    if (receivers < 1) this.settle(ref, false);
    return answered;
  }

  private settle(ref: string, accepted: boolean): void {
    const resolve = this.waiting.get(ref);
    this.waiting.delete(ref);
    resolve?.(accepted);
  }

  private onMessage(raw: unknown): void {
    const m = raw as Record<string, unknown> | null;
    if (m?.kind === 'client-answer') {
      this.onAnswer(m);
      return;
    }
    if (typeof m?.ref !== 'string') return;
    if (m.kind === 'answer') {
      this.settle(m.ref, m.accepted === true);
      return;
    }
    if (m.kind !== 'post' || typeof m.from !== 'string' || !REPLICA_ID_SHAPE.test(m.from)) return;
    if (typeof m.sessionId !== 'string' || !isInt(m.userId) || !isInt(m.serviceId) || !Array.isArray(m.messages) || !isInt(m.bytes)) return;
    const post: ForwardedPost = {
      sessionId: m.sessionId,
      userId: m.userId,
      serviceId: m.serviceId,
      messages: m.messages as JSONRPCMessage[],
      bytes: m.bytes,
    };
    const face: RelayFace = m.face === '/group' ? '/group' : '/proxy';
    void this.take(m.from, m.ref, face, post);
  }

  private onAnswer(m: Record<string, unknown>): void {
    const answer = m.answer as Record<string, unknown> | null;
    if (typeof m.sessionKey !== 'string' || !isInt(m.userId) || !isInt(m.serviceId) || typeof answer !== 'object' || answer === null)
      return;
    if (typeof answer.id !== 'string' || !('result' in answer || 'error' in answer)) return;
    this.answerHandler?.({
      sessionKey: m.sessionKey,
      userId: m.userId,
      serviceId: m.serviceId,
      answer: answer as unknown as JSONRPCResponse | JSONRPCError,
    });
  }

  private async take(from: string, ref: string, face: RelayFace, post: ForwardedPost): Promise<void> {
    let dispatched: Promise<void> | undefined;
    try {
      const serves = this.closed ? undefined : this.faces.get(face);
      const service = await serves?.lookup(post.serviceId);
      if (service?.enabled) dispatched = serves?.take(post, service);
    } catch (err) {
      this.logger.error({ err }, 'a forwarded legacy SSE message could not be taken');
    }
    await this.hub.publish(this.hub.replicaChannel(from), { kind: 'answer', ref, accepted: dispatched !== undefined });
    await dispatched?.catch((err) => this.logger.error({ err, serviceId: post.serviceId }, 'forwarded legacy SSE message failed'));
  }

  /** Pending forwards are answered "not taken"; forwarded POSTs are no longer taken. */
  close(): void {
    this.closed = true;
    for (const ref of [...this.waiting.keys()]) this.settle(ref, false);
  }
}
