import type { GatewayUser } from './catalog.js';

/** An MCP endpoint as a resource an OAuth access token may be bound to. */
export interface ProxyEndpoint {
  kind: 'proxy' | 'group';
  /** The service's or group's name. */
  name: string;
  /** The endpoint's path below the public base, e.g. `/proxy/time/mcp` (its protected resource). */
  path: string;
}

/**
 * OAuth access tokens as the proxy accepts them besides API keys (modules/authorization-server implements it:
 * the gateway reads no module table). `issuer` is the public base of the request (http/public-base.ts).
 */
export interface AccessTokenPort {
  /**
   * The token's user and expiry (epoch ms) when it is valid, unexpired, unrevoked and bound to `endpoint` (or to
   * every endpoint); else undefined. The proxy reuses an answer for a few seconds, never past `expiresAt`; revoking
   * a grant emits `user.changed` for its user, which drops the reuse at once.
   */
  verify(token: string, endpoint: ProxyEndpoint, issuer: string): Promise<VerifiedToken | undefined>;
}

export interface VerifiedToken {
  user: GatewayUser;
  expiresAt: number;
}
