import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { SessionPeer, UpstreamLink } from '../link-api.js';

/**
 * The requests waiting upstream on behalf of one client connection: a streamable HTTP POST, or a
 * legacy session's SSE stream. When the client leaves, each is cancelled upstream exactly as a
 * client's own `notifications/cancelled` would be; the link then answers it with an error that
 * goes nowhere but into the request's record. (Cheaper per request than an AbortSignal, and it
 * keeps one cancellation path through the link.)
 */
export class CallScope {
  private readonly waiting = new Map<RequestId, UpstreamLink>();
  private left = false;
  /** Scopes of the same client connection on other sessions: a group's member sessions (group-face.ts). */
  private readonly children: CallScope[] = [];

  constructor(private readonly session: SessionPeer) {}

  get gone(): boolean {
    return this.left;
  }

  add(id: RequestId, link: UpstreamLink): void {
    this.waiting.set(id, link);
  }

  done(id: RequestId): void {
    this.waiting.delete(id);
  }

  /** A scope that ends with this one. */
  child(session: SessionPeer): CallScope {
    const scope = new CallScope(session);
    if (this.left) scope.left = true;
    else this.children.push(scope);
    return scope;
  }

  /** The client went away: cancel whatever it is still waiting for. */
  leave(reason: string): void {
    if (this.left) return;
    this.left = true;
    for (const child of this.children.splice(0)) child.leave(reason);
    const waiting = [...this.waiting];
    this.waiting.clear();
    for (const [requestId, link] of waiting) {
      link.notify(this.session, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId, reason } });
    }
  }
}
