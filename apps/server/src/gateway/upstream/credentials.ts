/**
 * What a link needs, asked in one step per acquisition (docs/decisions/0050-credentials-in-one-step.md):
 * a stdio process's personal variable values (the catalog), a remote link's OAuth token or its 401
 * report (the UpstreamAuthorization port), or the reason it cannot have them. The configured headers
 * and variables travel in the service's spec.
 */
import type { ServiceCatalog, ServiceSpec } from '../catalog.js';
import type {
  ConnectionOwner,
  GrantedToken,
  LinkAuthorization,
  UpstreamAuthorization,
  UpstreamConnectionMissing,
  UpstreamOAuthMode,
} from '../upstream-auth.js';
import type { RemoteAuth } from './remote-channel.js';

export interface LinkNeeds {
  mode: UpstreamOAuthMode | undefined;
  /** Whose OAuth connection the link sends (0: the shared one); undefined when it uses none. */
  owner: ConnectionOwner | undefined;
  /** The user's personal variable values a stdio process starts with; undefined when there are none. */
  variables: Record<string, string> | undefined;
  /** What a remote link sends: a held token, or a report of the upstream's 401. */
  auth: RemoteAuth;
}

export type LinkAnswer = LinkNeeds | { refused: UpstreamConnectionMissing };

/** The one question of an acquisition: one catalog read for a process, one port call for a remote link. */
export class LinkCredentials {
  constructor(
    private readonly catalog: Pick<ServiceCatalog, 'userEnv'>,
    private readonly authorization: UpstreamAuthorization | undefined,
  ) {}

  /** `userId` undefined: a link of no user (the shared link of a service, the health check). */
  async forLink(service: ServiceSpec, userId: number | undefined): Promise<LinkAnswer> {
    // An OpenAPI service takes personal values as a process does: its query parameters and credentials (call.ts).
    if (service.type === 'stdio' || service.type === 'openapi') {
      const values = userId === undefined ? undefined : await this.catalog.userEnv(service.id, userId);
      const variables = values && Object.keys(values).length > 0 ? values : undefined;
      return { mode: undefined, owner: undefined, variables, auth: {} };
    }
    if (!this.authorization) return { mode: undefined, owner: undefined, variables: undefined, auth: {} };
    const grant = await this.authorization.forLink(service.id, userId);
    if ('refused' in grant) return { refused: grant.refused };
    if ('token' in grant)
      return { mode: grant.mode, owner: grant.owner, variables: undefined, auth: { authorization: new HeldToken(grant.token) } };
    return { mode: grant.mode, owner: undefined, variables: undefined, auth: { unauthorized: grant.unauthorized } };
  }
}

/** A live link takes the newer token of a later acquisition (a connection made again, a refresh elsewhere). */
export function adoptToken(held: RemoteAuth, fresh: RemoteAuth | undefined): void {
  if (held.authorization instanceof HeldToken && fresh?.authorization instanceof HeldToken) held.authorization.adopt(fresh.authorization);
}

/**
 * The token one link holds. Each request reads it from memory; the token keeper is asked again only on
 * an event: the token's end is near, or the upstream answered 401. Concurrent requests share one renewal.
 */
export class HeldToken implements LinkAuthorization {
  private renewing: Promise<GrantedToken> | undefined;

  constructor(private granted: GrantedToken) {}

  adopt(other: HeldToken): void {
    this.granted = other.granted;
  }

  async token(): Promise<string> {
    const { freshUntil } = this.granted;
    if (freshUntil !== null && freshUntil <= Date.now()) await this.renewFrom(undefined);
    return this.granted.value;
  }

  async renew(rejected: string): Promise<string> {
    // A request that was sent with an older token than the one held now: the newer one is the answer.
    if (rejected !== this.granted.value) return this.granted.value;
    await this.renewFrom(rejected);
    return this.granted.value;
  }

  private async renewFrom(rejected: string | undefined): Promise<void> {
    if (!this.renewing) {
      this.renewing = this.granted.renew(rejected).finally(() => {
        this.renewing = undefined;
      });
    }
    this.granted = await this.renewing;
  }
}
