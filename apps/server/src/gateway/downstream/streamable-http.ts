import type { ServerResponse } from 'node:http';
import { type JSONRPCRequest, LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { CallScope } from './call-scope.js';
import { isRequest } from './dispatcher.js';
import { accepts, localeOf, onClientGone, SseStream } from './http-io.js';
import { ModernHttp } from './modern.js';
import { classify, isModernBodyless, refusedId } from './modern-wire.js';
import type { ProxyCaller } from './proxy-auth.js';
import type { ProxyDeps, ProxyRequest } from './proxy-deps.js';
import { PostReply } from './reply-target.js';
import { failures, sendFailure } from './rpc-errors.js';
import { DownstreamSession } from './session.js';
import { sessionIdOf, versionHeaderFailure } from './session-access.js';
import { mintSessionId, newNonce } from './session-token.js';

export type { ProxyDeps, ProxyRequest };

/** Batches were removed in 2025-06-18: only 2025-03-26 (and older) clients may send them. */
const batchesAllowed = (version: string): boolean => version <= '2025-03-26';

/**
 * `/proxy/{name}/mcp`, the streamable HTTP transport (revisions 2025-03-26 to 2025-11-25) written on
 * the raw request and response: one handler serves every session of every user, which the SDK's
 * one-server-per-session transport cannot do. Statuses and error bodies follow docs/protocol.md.
 */
export class StreamableHttp {
  /** The 2026-07-28 era on the same endpoint: POSTs classified modern go there (modern-wire.ts). */
  readonly modern: ModernHttp;

  constructor(private readonly deps: ProxyDeps) {
    this.modern = new ModernHttp(deps);
  }

  async post(req: ProxyRequest, res: ServerResponse): Promise<void> {
    const caller = await this.deps.auth.resolve(req, req.params.name);
    if ('status' in caller) return sendFailure(res, caller);
    if (!accepts(req.raw, 'application/json') || !accepts(req.raw, 'text/event-stream')) {
      return sendFailure(res, failures.notAcceptable('both application/json and text/event-stream'));
    }
    const post = await this.deps.abuse.readMessages(req.raw, req.ip);
    if ('status' in post) return sendFailure(res, post);

    const era = classify(req.raw, post.messages, post.batch);
    if (era.era === 'refused') return sendFailure(res, era.failure, refusedId(post.messages, post.batch));
    if (era.era === 'modern-notification') return void res.writeHead(202).end();
    if (era.era === 'modern') return this.modern.post(req, res, caller, era.request, era.envelope, post.bytes);

    const init = post.messages.find((m) => isRequest(m) && m.method === 'initialize') as JSONRPCRequest | undefined;
    if (init) {
      if (post.messages.length > 1) return sendFailure(res, failures.oneInitialize());
      return this.initialize(req, res, caller, init);
    }

    const session = await this.deps.access.find(req.raw, caller);
    if ('status' in session) return sendFailure(res, session);
    const versionFailure = versionHeaderFailure(req.raw);
    if (versionFailure) return sendFailure(res, versionFailure);
    if (post.batch && !batchesAllowed(session.protocolVersion)) return sendFailure(res, failures.batchNotAllowed(session.protocolVersion));

    const requests = post.messages.filter(isRequest).length;
    const scope = new CallScope(session);
    if (requests === 0) {
      await this.deps.dispatcher.dispatch(session, caller.service, post.messages, { notification() {}, response() {} }, scope, post.bytes);
      res.writeHead(202).end();
      return;
    }
    const bound = this.deps.abuse.streamBound({ userId: session.userId, service: caller.service.name, stream: 'post' });
    const reply = new PostReply(res, requests, post.batch, { 'mcp-session-id': session.key }, localeOf(req.raw), bound);
    // A client that leaves before its answer cancels the request upstream (left already: it is never sent).
    onClientGone(res, () => {
      if (!res.writableFinished) scope.leave('client disconnected');
    });
    await this.deps.dispatcher.dispatch(session, caller.service, post.messages, reply, scope, post.bytes);
  }

  /** Opens the session's standalone stream: server notifications not tied to a request arrive here. */
  async get(req: ProxyRequest, res: ServerResponse): Promise<void> {
    // The 2026-07-28 revision has no standalone stream: subscriptions/listen is a POST.
    if (isModernBodyless(req.raw)) return sendFailure(res, failures.methodNotAllowed('POST'));
    const caller = await this.deps.auth.resolve(req, req.params.name);
    if ('status' in caller) return sendFailure(res, caller);
    if (!accepts(req.raw, 'text/event-stream')) return sendFailure(res, failures.notAcceptable('text/event-stream'));
    const session = await this.deps.access.find(req.raw, caller);
    if ('status' in session) return sendFailure(res, session);
    const versionFailure = versionHeaderFailure(req.raw);
    if (versionFailure) return sendFailure(res, versionFailure);
    if (session.stream?.open) return sendFailure(res, failures.secondStream());
    session.touch();
    // A client that stops reading its stream loses it and the session (rebuilt from its id on its next request).
    const bound = this.deps.abuse.streamBound({ userId: session.userId, service: caller.service.name, stream: 'get' }, () =>
      this.deps.sessions.remove(session, 'client not reading its stream'),
    );
    const stream = new SseStream(
      res,
      { 'mcp-session-id': session.key },
      () => {
        if (session.stream === stream) session.stream = undefined;
        session.touch();
      },
      bound,
    );
    session.attachStream(stream);
  }

  /** Ends the session: its id goes on the revocation list until it would have expired anyway. */
  async delete(req: ProxyRequest, res: ServerResponse): Promise<void> {
    // Nothing to end in the 2026-07-28 revision: it has no sessions.
    if (isModernBodyless(req.raw)) return sendFailure(res, failures.methodNotAllowed('POST'));
    const caller = await this.deps.auth.resolve(req, req.params.name);
    if ('status' in caller) return sendFailure(res, caller);
    const session = await this.deps.access.find(req.raw, caller);
    if ('status' in session) return sendFailure(res, session);
    const versionFailure = versionHeaderFailure(req.raw);
    if (versionFailure) return sendFailure(res, versionFailure);
    await this.deps.access.revoke(session);
    res.writeHead(200).end();
  }

  private async initialize(req: ProxyRequest, res: ServerResponse, caller: ProxyCaller, request: JSONRPCRequest): Promise<void> {
    const existing = sessionIdOf(req.raw);
    if (existing && (await this.deps.access.isLive(existing, caller))) return sendFailure(res, failures.alreadyInitialized());
    const flood = await this.deps.abuse.newSession(req.raw, caller.user.id, caller.service.name);
    if (flood) return sendFailure(res, flood);
    const params = request.params as { protocolVersion?: unknown } | undefined;
    const requested = typeof params?.protocolVersion === 'string' ? params.protocolVersion : LATEST_PROTOCOL_VERSION;
    const negotiated = SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : LATEST_PROTOCOL_VERSION;
    const nonce = newNonce();
    const session = new DownstreamSession({
      key: '',
      peerId: nonce,
      userId: caller.user.id,
      serviceId: caller.service.id,
      protocolVersion: negotiated,
      issuedAt: Date.now(),
      transport: 'streamable',
      initParams: request.params as DownstreamSession['initParams'],
      // A brand-new id cannot be on the revocation list.
      revocationCheckedAt: Date.now(),
    });
    const { json, ok } = await this.deps.dispatcher.initialize(session, caller.service, request, localeOf(req.raw));
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (ok) {
      session.key = mintSessionId(this.deps.secrets, {
        userId: session.userId,
        serviceId: session.serviceId,
        protocolVersion: session.protocolVersion,
        issuedAt: session.issuedAt,
        nonce,
      });
      this.deps.sessions.add(session);
      headers['mcp-session-id'] = session.key;
    } else {
      // The pool may already hold a link (or a process) for it.
      this.deps.sessions.remove(session);
    }
    res.writeHead(200, { ...headers, 'content-length': Buffer.byteLength(json) });
    res.end(json);
  }
}
