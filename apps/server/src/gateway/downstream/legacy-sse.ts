import type { ServerResponse } from 'node:http';
import { localeOf, SseStream } from './http-io.js';
import type { ForwardedPost } from './legacy-relay.js';
import { StreamReply } from './reply-target.js';
import { failures, sendFailure } from './rpc-errors.js';
import { DownstreamSession, restoredInitParams } from './session.js';
import { newNonce } from './session-token.js';
import type { ProxyDeps, ProxyRequest } from './streamable-http.js';

/** What a legacy client announces before its initialize arrives on the message endpoint. */
const LEGACY_VERSION = '2024-11-05';

/**
 * `/proxy/{name}/sse` + `/proxy/{name}/message?sessionId=`: the 2024-11-05 HTTP+SSE transport.
 * The session lives exactly as long as its SSE stream; every answer travels on that stream.
 */
export class LegacySse {
  constructor(private readonly deps: ProxyDeps) {
    // Several replicas: POSTs that reached another replica are passed on to the one holding the stream.
    deps.legacyRelay?.serve(
      deps.prefix ?? '/proxy',
      (post, service) => {
        const session = this.deps.sessions.get(post.sessionId);
        if (session?.transport !== 'legacy' || session.userId !== post.userId || session.serviceId !== post.serviceId) return undefined;
        return this.deps.dispatcher.dispatch(session, service, post.messages, new StreamReply(session), session.calls, post.bytes);
      },
      deps.relayLookup,
    );
  }

  async open(req: ProxyRequest, res: ServerResponse): Promise<void> {
    const caller = await this.deps.auth.resolve(req, req.params.name);
    if ('status' in caller) return sendFailure(res, caller);
    const flood = await this.deps.abuse.newSession(req.raw, caller.user.id, caller.service.name);
    if (flood) return sendFailure(res, flood);
    const id = this.deps.legacyRelay?.newSessionId() ?? newNonce();
    const session = new DownstreamSession({
      key: id,
      peerId: id,
      userId: caller.user.id,
      serviceId: caller.service.id,
      protocolVersion: LEGACY_VERSION,
      issuedAt: Date.now(),
      transport: 'legacy',
      initParams: restoredInitParams(LEGACY_VERSION),
    });
    // A client that stops reading its stream is cut off: the session ends with it.
    const bound = this.deps.abuse.streamBound({ userId: session.userId, service: caller.service.name, stream: 'sse' }, () =>
      this.deps.sessions.remove(session, 'client not reading its stream'),
    );
    session.stream = new SseStream(res, {}, () => this.deps.sessions.remove(session, 'client disconnected'), bound);
    this.deps.sessions.add(session);
    // A client that authenticated by query string (it cannot send headers) gets a message URL that works for it too.
    const keyParam = caller.queryKey ? `&key=${encodeURIComponent(caller.queryKey)}` : '';
    session.stream.event(
      'endpoint',
      `${this.deps.prefix ?? '/proxy'}/${encodeURIComponent(caller.service.name)}/message?sessionId=${id}${keyParam}`,
    );
  }

  async message(req: ProxyRequest, res: ServerResponse): Promise<void> {
    const caller = await this.deps.auth.resolve(req, req.params.name);
    if ('status' in caller) return sendFailure(res, caller);
    const id = req.query.sessionId;
    if (!id) return sendFailure(res, failures.sessionRequired());
    const session = this.deps.sessions.get(id);
    const owner = session ? undefined : this.deps.legacyRelay?.ownerOf(id);
    if (owner) return this.forward(req, res, owner, { sessionId: id, userId: caller.user.id, serviceId: caller.service.id });
    if (session?.transport !== 'legacy' || session.userId !== caller.user.id || session.serviceId !== caller.service.id) {
      return sendFailure(res, failures.sessionNotFound());
    }
    const post = await this.deps.abuse.readMessages(req.raw, req.ip);
    if ('status' in post) return sendFailure(res, post);
    res.writeHead(202, { 'content-type': 'text/plain' }).end('Accepted');
    const reply = new StreamReply(session, localeOf(req.raw));
    await this.deps.dispatcher.dispatch(session, caller.service, post.messages, reply, session.calls, post.bytes);
  }

  /** The stream is on another replica: the POST is checked here and handed over to it through Redis. */
  private async forward(
    req: ProxyRequest,
    res: ServerResponse,
    owner: string,
    to: Omit<ForwardedPost, 'messages' | 'bytes'>,
  ): Promise<void> {
    const post = await this.deps.abuse.readMessages(req.raw, req.ip);
    if ('status' in post) return sendFailure(res, post);
    const taken = await this.deps.legacyRelay?.forward(owner, this.deps.prefix ?? '/proxy', {
      ...to,
      messages: post.messages,
      bytes: post.bytes,
    });
    if (!taken) return sendFailure(res, failures.sessionNotFound());
    res.writeHead(202, { 'content-type': 'text/plain' }).end('Accepted');
  }
}
