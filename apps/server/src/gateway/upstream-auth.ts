/**
 * The port through which the gateway asks for the OAuth credentials of remote services (issue 19,
 * docs/decisions/0030-upstream-oauth.md). modules/upstream-oauth implements it; the gateway never
 * reads its tables. Like personal values (docs/architecture.md §3, §10): a shared connection feeds the
 * shared link, a per-user connection makes a link of that user's own.
 */
import { LocalisedError } from '../i18n/localised-error.js';

export type UpstreamOAuthMode = 'shared' | 'per_user';

/** Whose connection a link uses: 0 is the shared one, else the user's own. */
export type ConnectionOwner = number;

export interface UpstreamAuthorization {
  /** How a remote service is authorised upstream: undefined when it uses no OAuth connection. */
  modeOf(serviceId: number): Promise<UpstreamOAuthMode | undefined>;
  /**
   * The access token to send now (refreshed beforehand when it is about to expire). Throws a
   * LocalisedError naming the console page when the connection does not exist or needs authorizing.
   */
  token(serviceId: number, owner: ConnectionOwner): Promise<string>;
  /** The upstream refused `rejected` with 401: refresh once (or take another replica's result), or throw. */
  renew(serviceId: number, owner: ConnectionOwner, rejected: string): Promise<string>;
  /** A service without a connection answered 401: what it said is remembered, it now needs authorization. */
  unauthorized(serviceId: number, wwwAuthenticate: string): void;
}

/** What one link's connection sends upstream: bound to a service and an owner by the pool. */
export interface LinkAuthorization {
  token(): Promise<string>;
  renew(rejected: string): Promise<string>;
}

/**
 * Thrown by `token` when a connection is missing: `perUser` when it is the calling user's own (their
 * session then opens, and a call gets this error, after a URL elicitation to `page` when the client
 * declared one; docs/decisions/0030-upstream-oauth.md).
 */
export class UpstreamConnectionMissing extends LocalisedError {
  get perUser(): boolean {
    return this.key === 'upstream_oauth.not_connected';
  }

  /** The console page where the connection is made. */
  get page(): string {
    return String(this.params.page ?? '');
  }
}
