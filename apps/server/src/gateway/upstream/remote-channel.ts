import { SSEClientTransport, SseError } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import type { FetchLike } from '../../infra/outbound.js';
import type { ServiceSpec } from '../catalog.js';
import type { LinkAuthorization } from '../upstream-auth.js';
import { answerGuard } from './answer-guard.js';
import { type Channel, errorText, SessionLostError } from './channel.js';
import { perRequestFetch } from './per-request-fetch.js';

const TERMINATE_TIMEOUT_MS = 2_000;

/**
 * An SSE or streamable HTTP upstream through the SDK 1.32 client transports: the configured
 * headers on every request (never the caller's gateway key), redirects left to our fetch, which
 * follows them within the origin only (infra/outbound.ts), one AbortSignal per request.
 */
export class RemoteChannel implements Channel {
  onmessage: (message: JSONRPCMessage) => void = () => undefined;
  onclose: (reason: string) => void = () => undefined;
  closing = false;

  private constructor(
    private readonly transport: Transport & { setProtocolVersion?(version: string): void; terminateSession?(): Promise<void> },
    private readonly live: Set<AbortController>,
    private readonly logger: Logger,
  ) {
    transport.onmessage = (message) => this.deliver(message);
    transport.onerror = (err) => this.transportError(err);
  }

  static async open(spec: ServiceSpec, logger: Logger, timeoutMs: number, base: FetchLike, auth: RemoteAuth = {}): Promise<RemoteChannel> {
    const url = new URL(spec.command);
    const live = new Set<AbortController>();
    let brokenAnswer: (message: JSONRPCMessage) => void = () => undefined;
    // Answers that break (reset, truncated, not JSON) fail their request at once (answer-guard.ts).
    const fetch = answerGuard(withAuthorization(perRequestFetch(live, base), auth), (message) => brokenAnswer(message));
    // 'follow': the transports leave redirects to the fetch, where infra/outbound.ts applies its rules.
    const opts = { requestInit: { headers: { ...spec.headers } }, fetch, redirectPolicy: 'follow' as const };
    const transport = spec.type === 'sse' ? new SSEClientTransport(url, opts) : new StreamableHTTPClientTransport(url, opts);
    const channel = new RemoteChannel(transport, live, logger);
    brokenAnswer = (message) => {
      if (!channel.closing) channel.deliver(message);
    };
    let timer: NodeJS.Timeout | undefined;
    try {
      // SSE waits here for the `endpoint` event; streamable HTTP connects on the first send.
      await Promise.race([
        transport.start(),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer from ${url.origin} within ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
    } catch (err) {
      await channel.close();
      throw err;
    } finally {
      clearTimeout(timer);
    }
    return channel;
  }

  private deliver(message: JSONRPCMessage): void {
    try {
      this.onmessage(message);
    } catch (err) {
      this.logger.error({ err }, 'upstream message handler failed');
    }
  }

  private transportError(err: Error): void {
    if (this.closing) return;
    this.logger.debug({ err }, 'remote upstream transport error');
    // The legacy SSE stream is the session: once it breaks, the session is gone with it. A message
    // that does not parse or a failed POST is not the stream's end (answer-guard.ts answers for it).
    if (this.transport instanceof SSEClientTransport && err instanceof SseError) this.onclose(`SSE stream lost: ${errorText(err)}`);
  }

  async send(message: JSONRPCMessage): Promise<void> {
    try {
      await this.transport.send(message);
    } catch (err) {
      throw sessionLost(err) ? new SessionLostError(errorText(err)) : err;
    }
  }

  setProtocolVersion(version: string): void {
    this.transport.setProtocolVersion?.(version);
  }

  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    // Ends the upstream session politely (DELETE); a server that does not answer is not waited for.
    if (this.transport.terminateSession) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        this.transport.terminateSession().catch(() => undefined),
        new Promise((r) => {
          timer = setTimeout(r, TERMINATE_TIMEOUT_MS);
        }),
      ]);
      clearTimeout(timer);
    }
    await this.transport.close().catch(() => undefined);
    // The transport aborted its own signal, which our requests do not listen to (see perRequestFetch).
    for (const controller of this.live) controller.abort();
    this.live.clear();
  }
}

/** How a remote link authorises itself: an OAuth connection's token, or a report when it needs one. */
export interface RemoteAuth {
  authorization?: LinkAuthorization;
  /** No connection and the upstream answered 401: its WWW-Authenticate goes here. */
  unauthorized?: (wwwAuthenticate: string) => void;
}

/**
 * Adds the connection's bearer token to every request (the transports' own headers keep the admin's
 * configured ones). A 401 gets one renewal and the request is sent once more with the new token
 * (docs/decisions/0030-upstream-oauth.md); a second 401 is the upstream's answer.
 */
export function withAuthorization(base: FetchLike, auth: RemoteAuth): FetchLike {
  const { authorization, unauthorized } = auth;
  if (!authorization) {
    if (!unauthorized) return base;
    return async (url, init) => {
      const response = await base(url, init);
      if (response.status === 401) unauthorized(response.headers.get('www-authenticate') ?? '');
      return response;
    };
  }
  const send = (url: string | URL, init: RequestInit | undefined, token: string) => {
    const headers = new Headers(init?.headers);
    headers.set('authorization', `Bearer ${token}`);
    return base(url, { ...init, headers });
  };
  return async (url, init) => {
    const token = await authorization.token();
    const response = await send(url, init, token);
    if (response.status !== 401) return response;
    await response.body?.cancel().catch(() => undefined);
    return send(url, init, await authorization.renew(token));
  };
}

/**
 * The upstream no longer knows our session: 404 per the spec; some servers (server-everything
 * among them) answer 400 "No valid session ID" instead.
 */
function sessionLost(err: unknown): boolean {
  if (err instanceof StreamableHTTPError) return err.code === 404 || (err.code === 400 && /session/i.test(err.message));
  return err instanceof Error && /\(HTTP 404\)/.test(err.message);
}
