/**
 * The port through which the gateway asks for the OAuth credentials of remote services (issue 19,
 * docs/decisions/0030-upstream-oauth.md). modules/upstream-authorization implements it; the gateway never
 * reads its tables. Like personal values (docs/architecture.md §3, §10): a shared connection feeds the
 * shared link, a per-user connection makes a link of that user's own.
 */
import { LocalisedError } from '../i18n/localised-error.js';

export type UpstreamOAuthMode = 'shared' | 'per_user';

/** Whose connection a link uses: 0 is the shared one, else the user's own. */
export type ConnectionOwner = number;

/**
 * The port the pool asks once per acquisition (docs/decisions/0050-credentials-in-one-step.md): what a
 * link of this service for this user sends, or why it cannot have it. `userId` undefined is a link of
 * no user (the shared link, the health check). Refreshing ahead of expiry happens inside.
 */
export interface UpstreamAuthorization {
  forLink(serviceId: number, userId: number | undefined): Promise<ConnectionGrant>;
}

/**
 * The answer: a service without an OAuth connection (its 401 is reported, for discovery), a granted
 * token bound to its connection, or the refusal (the connection is missing, or ended and cannot be
 * refreshed) to be thrown before any link starts.
 */
export type ConnectionGrant =
  | { mode: UpstreamOAuthMode | undefined; owner: undefined; unauthorized: (wwwAuthenticate: string) => void }
  | { mode: UpstreamOAuthMode; owner: ConnectionOwner; token: GrantedToken }
  | { mode: UpstreamOAuthMode; owner: ConnectionOwner; refused: UpstreamConnectionMissing };

/**
 * A token as a link holds it. The link asks again only on an event: `freshUntil` has passed (its end is
 * near), or the upstream answered 401 to `rejected` (refreshed once, or another replica's result taken).
 * Either throws UpstreamConnectionMissing when the connection is gone.
 */
export interface GrantedToken {
  readonly value: string;
  /** When it should be renewed before use (ms since the epoch); null: no known end. */
  readonly freshUntil: number | null;
  renew(rejected?: string): Promise<GrantedToken>;
}

/** What one link's connection sends upstream: the channel asks per request, the link answers from what it holds. */
export interface LinkAuthorization {
  token(): Promise<string>;
  renew(rejected: string): Promise<string>;
}

/**
 * The reason of a refusal by `forLink` (thrown by the pool before any link starts), or thrown by a renewal,
 * when a connection is missing: `perUser` when it is the calling user's own (their session then opens, and
 * a call gets this error, after a URL elicitation to `page` when the client declared one;
 * docs/decisions/0030-upstream-oauth.md).
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
