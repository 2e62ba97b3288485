import type { IncomingMessage } from 'node:http';
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import type { Secrets } from '../../infra/secrets.js';
import type { ProxyCaller } from './proxy-auth.js';
import type { Revocations } from './revocations.js';
import { failures, type ProxyFailure } from './rpc-errors.js';
import { DownstreamSession, restoredInitParams } from './session.js';
import type { SessionRegistry } from './session-registry.js';
import { readSessionId } from './session-token.js';

/** A signed session id older than this is refused even if never revoked: sessions nobody DELETEs expire. */
export const SESSION_MAX_AGE_MS = 7 * 24 * 60 * 60_000;
/** A live session's id is looked up on the revocation list again after this: a DELETE on another replica. */
const REVOCATION_RECHECK_MS = 5000;
/** Tolerated clock difference between replicas for ids issued "in the future". */
const CLOCK_SKEW_MS = 5 * 60_000;

export const sessionIdOf = (req: IncomingMessage): string | undefined => {
  const value = req.headers['mcp-session-id'];
  return typeof value === 'string' && value !== '' ? value : undefined;
};

/** The MCP-Protocol-Version header, when present, must name a version this gateway speaks. */
export function versionHeaderFailure(req: IncomingMessage): ProxyFailure | undefined {
  const version = req.headers['mcp-protocol-version'];
  if (version === undefined) return undefined;
  const value = Array.isArray(version) ? version.join(',') : version;
  return SUPPORTED_PROTOCOL_VERSIONS.includes(value) ? undefined : failures.unsupportedVersion(value);
}

/**
 * Finds the streamable HTTP session a request names: from memory, or rebuilt from its signed id
 * (another replica issued it, or this one restarted). A session is answered 404 when its id is
 * forged, expired, revoked, or belongs to another user or another service.
 */
export class SessionAccess {
  constructor(
    private readonly secrets: Secrets,
    private readonly sessions: SessionRegistry,
    private readonly revocations: Revocations,
  ) {}

  async find(req: IncomingMessage, caller: ProxyCaller): Promise<DownstreamSession | ProxyFailure> {
    const id = sessionIdOf(req);
    if (!id) return failures.sessionRequired();
    const now = Date.now();
    const live = this.sessions.get(id);
    if (live) {
      if (live.transport !== 'streamable' || live.userId !== caller.user.id || live.serviceId !== caller.service.id) {
        return failures.sessionNotFound();
      }
      if (now - live.issuedAt > SESSION_MAX_AGE_MS) return this.drop(live, 'expired');
      if (now - live.revocationCheckedAt > REVOCATION_RECHECK_MS) {
        if (await this.revocations.isRevoked(id)) return this.drop(live, 'deleted by the client');
        live.revocationCheckedAt = now;
      }
      return live;
    }
    const claims = readSessionId(this.secrets, id);
    if (!claims || claims.userId !== caller.user.id || claims.serviceId !== caller.service.id) return failures.sessionNotFound();
    if (now - claims.issuedAt > SESSION_MAX_AGE_MS || claims.issuedAt > now + CLOCK_SKEW_MS) return failures.sessionNotFound();
    if (await this.revocations.isRevoked(id)) return failures.sessionNotFound();
    // A concurrent request may have rebuilt it while the revocation list was read.
    const raced = this.sessions.get(id);
    if (raced) return raced;
    const session = new DownstreamSession({
      key: id,
      revocationCheckedAt: now,
      peerId: claims.nonce,
      userId: claims.userId,
      serviceId: claims.serviceId,
      protocolVersion: claims.protocolVersion,
      issuedAt: claims.issuedAt,
      transport: 'streamable',
      initParams: restoredInitParams(claims.protocolVersion),
    });
    this.sessions.add(session);
    return session;
  }

  /** An id that still names a usable session of this caller: re-initializing it is refused. */
  async isLive(id: string, caller: ProxyCaller): Promise<boolean> {
    const claims = readSessionId(this.secrets, id);
    if (!claims || claims.userId !== caller.user.id || claims.serviceId !== caller.service.id) return false;
    if (Date.now() - claims.issuedAt > SESSION_MAX_AGE_MS) return false;
    return !(await this.revocations.isRevoked(id));
  }

  private drop(session: DownstreamSession, reason: string): ProxyFailure {
    this.sessions.remove(session, reason);
    return failures.sessionNotFound();
  }

  async revoke(session: DownstreamSession): Promise<void> {
    this.sessions.remove(session, 'deleted by the client');
    await this.revocations.revoke(session.key, session.issuedAt + SESSION_MAX_AGE_MS);
  }
}
