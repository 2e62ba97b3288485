import { createHash } from 'node:crypto';
import type { ServiceSpec } from '../catalog.js';
import type { SessionPeer } from '../link-api.js';
import type { ConnectionOwner, UpstreamOAuthMode } from '../upstream-auth.js';

/** The protocol era a link speaks upstream, by revision: 2025-11-25 (sessions) or 2026-07-28 (stateless). */
export type Era = '2025-11-25' | '2026-07-28';
/** Who a link serves: every user of the service, one user, or one session (an isolated service). */
export type Scope = 'shared' | 'user' | 'session';

/** Where a session's requests to a service go: one link of the pool's registry (registry.ts), by `key`. */
export interface Placement {
  key: string;
  era: Era;
  serviceId: number;
  scope: Scope;
  /** The user whose link it is (user and session scopes). */
  userId: number | undefined;
  /** Whose OAuth connection the link sends (0: the shared one); undefined when it sends none. */
  owner: ConnectionOwner | undefined;
  /** Personal variable values the process starts with. */
  userEnv: Record<string, string> | undefined;
  /**
   * An isolated link of one user's 2026-07-28 requests (a request belongs to no session): it outlives each request,
   * like a session's, and is stopped when idle instead of a process per request.
   */
  outlivesSessions: boolean;
}

/**
 * What placing needs to know beyond the service and the session: what the link needs, as the one question of the
 * acquisition answered it (credentials.ts, LinkNeeds).
 */
export interface PlacementFacts {
  /** The service's OAuth mode (remote services only). */
  mode: UpstreamOAuthMode | undefined;
  /** Whose OAuth connection the link sends (0: the shared one); undefined when it uses none. */
  owner: ConnectionOwner | undefined;
  /** The user's personal values of a stdio service. */
  variables: Record<string, string> | undefined;
}

/**
 * The one place that decides which link serves a session (docs/architecture.md §3, docs/decisions/0044): an isolated
 * service gives each session its own link (a user's 2026-07-28 requests share one); a per-user OAuth connection or
 * personal values give the user their own; everything else shares one link per service. The same rule for both eras.
 */
export function place(
  era: Era,
  service: ServiceSpec,
  session: Pick<SessionPeer, 'id' | 'userId' | 'era' | 'modernListen'>,
  facts: PlacementFacts,
): Placement {
  const { mode } = facts;
  const personal = facts.variables && Object.keys(facts.variables).length > 0 ? facts.variables : undefined;
  const scope: Scope =
    service.isolation === 'session' ? 'session' : mode === 'per_user' || (mode === undefined && personal) ? 'user' : 'shared';
  // A request of the 2026-07-28 era belongs to no session: an isolated link serves the user's requests together.
  // The user's listen streams are on it too: subscriptions and the calls that change what they watch meet in one
  // process (decision 0051).
  const perRequest = era === '2026-07-28' || session.era === 'modern' || session.modernListen === true;
  const who = scope === 'shared' ? '' : scope === 'session' && !perRequest ? `s${session.id}` : `u${session.userId}`;
  return {
    key: `${era}|${service.id}|${scope}|${who}`,
    era,
    serviceId: service.id,
    scope,
    userId: scope === 'shared' ? undefined : session.userId,
    owner: facts.owner,
    // An isolated 2025-11-25 session's process starts from the service's values alone, as it always has.
    userEnv: scope === 'session' && era === '2025-11-25' ? undefined : personal,
    outlivesSessions: scope === 'session' && perRequest,
  };
}

/** Everything that decides how an upstream runs; display name, limits and the like do not count. */
export function runtimeKey(spec: ServiceSpec, userEnv?: Record<string, string>): string {
  const { type, command, args, env, headers, installDir, isolation, packageVersion = '' } = spec;
  // An OpenAPI service runs its plan: another base URL or other operations (an edit, decision 0056) restart it.
  const plan = spec.openapi ? [spec.openapi.baseUrl, spec.openapi.operations] : null;
  return createHash('sha256')
    .update(JSON.stringify([type, command, args, env, headers, installDir, isolation, packageVersion, userEnv ?? null, plan]))
    .digest('base64url');
}
