import type { FastifyRequest } from 'fastify';
import { publicBase } from '../../http/public-base.js';
import type { ConfigEvents } from '../../infra/events.js';
import { sha256 } from '../../infra/secrets.js';
import type { AccessTokenPort, ProxyEndpoint } from '../access-tokens.js';
import type { GatewayUser, ServiceCatalog, ServiceSpec } from '../catalog.js';
import type { OptionsReader } from '../options-reader.js';
import { OPEN_POLICY, type ToolPolicy } from '../tool-policy.js';
import type { AbuseGuard } from './abuse.js';
import type { OriginPolicy } from './origin-policy.js';
import { failures, type ProxyFailure } from './rpc-errors.js';

/** Answers for an API key or a service name are reused this long (docs/architecture.md §8: a few seconds at most). */
const CACHE_MS = 3000;
const MAX_CACHED = 10_000;
/** Answers that count against the address: a foreign origin, no or a bad key, an unknown service. */
const COUNTED_FAILURES = new Set([401, 403, 404]);

export interface ProxyCaller {
  user: GatewayUser;
  service: ServiceSpec;
  /** The key came in the query string: legacy SSE then advertises a message URL that carries it. */
  queryKey: string | undefined;
}

interface Cached<T> {
  at: number;
  value: T | undefined;
}

/**
 * Who is calling a proxy route and for which service (docs/architecture.md §5): an API key by
 * `Authorization: Bearer` or `?key=`, an enabled user, an existing and enabled service, and no
 * foreign browser Origin. Lookups are cached briefly; configuration events drop entries at once.
 */
export class ProxyAuth {
  private readonly users = new Map<string, Cached<GatewayUser>>();
  private readonly tokenUsers = new Map<string, { until: number; user: GatewayUser }>();
  private readonly services = new Map<string, Cached<ServiceSpec>>();
  private readonly access = new Map<string, Cached<boolean>>();

  constructor(
    private readonly catalog: ServiceCatalog,
    /** Which Host names and browser Origins the MCP endpoints answer (DNS rebinding, CORS). */
    private readonly origins: OriginPolicy,
    /** The server address preference: the public base of the resource metadata URL. */
    private readonly options: Pick<OptionsReader, 'get'>,
    events: ConfigEvents,
    /** Refused authentications count per client address; too many and it is answered 429 at once. */
    private readonly guard?: AbuseGuard,
    /** OAuth access tokens besides API keys (modules/authorization-server, through the gateway's port). */
    private readonly tokens?: AccessTokenPort,
    /** Who may use which service (issue 17): asked of the modules, cached here like the rest. */
    private readonly policy: Pick<ToolPolicy, 'mayUseService'> = OPEN_POLICY,
  ) {
    events.on((e) => {
      if (e.type === 'user.changed') {
        this.users.clear();
        this.tokenUsers.clear();
        this.access.clear();
      }
      if (e.type === 'service.changed' || e.type === 'service.removed') this.services.clear();
      if (e.type === 'access.changed') this.access.clear();
    });
  }

  /**
   * The caller, or the failure to answer with (403 for a foreign Host or Origin, 401, 404, 503: in that order). An address whose
   * requests were refused 403, 401 or 404 too often this minute gets 429 before anything is looked at
   * (req.ip: X-Forwarded-For only from the proxies TRUST_PROXY names).
   */
  async resolve(
    req: FastifyRequest,
    serviceName: string,
    endpoint = proxyEndpointOf(req, serviceName),
  ): Promise<ProxyCaller | ProxyFailure> {
    return this.guarded(req, () => this.check(req, serviceName, endpoint));
  }

  /**
   * The same for a group's face (`/group/{name}/…`, issue 17): the same Host, Origin, credential and abuse
   * rules; the group is found and its access checked through `groups`. The caller's `service` is the
   * group's stand-in (group-face.ts), so sessions and limits work unchanged.
   */
  async resolveGroup(
    req: FastifyRequest,
    groupName: string,
    groups: { stand(user: GatewayUser, name: string): Promise<ServiceSpec | ProxyFailure> },
    endpoint = groupEndpointOf(req, groupName),
  ): Promise<ProxyCaller | ProxyFailure> {
    return this.guarded(req, async () => {
      const who = await this.identify(req, endpoint);
      if ('status' in who) return who;
      const stand = await groups.stand(who.user, groupName);
      if ('status' in stand) return stand;
      return { user: who.user, service: stand, queryKey: who.queryKey };
    });
  }

  private async guarded(req: FastifyRequest, check: () => Promise<ProxyCaller | ProxyFailure>): Promise<ProxyCaller | ProxyFailure> {
    const blocked = this.guard?.blockedAddress(req.raw, req.ip);
    if (blocked) return blocked;
    const result = await check();
    if ('status' in result && COUNTED_FAILURES.has(result.status)) await this.guard?.authFailed(req.ip);
    return result;
  }

  /** The enabled user of the request's API key or access token, with no foreign Host or browser Origin. */
  private async identify(
    req: FastifyRequest,
    endpoint: ProxyEndpoint,
  ): Promise<{ user: GatewayUser; queryKey: string | undefined } | ProxyFailure> {
    const foreign = this.origins.checkHost(req) ?? this.origins.checkOrigin(req);
    if (foreign) return foreign;
    // RFC 9728 §3.1: the endpoint's metadata sits at the well-known prefix followed by the resource's path.
    const metadata = () =>
      this.tokens
        ? `${publicBase(req, this.options.get('ServerAddress'))}/.well-known/oauth-protected-resource${endpoint.path}`
        : undefined;
    const { key, fromQuery } = apiKeyOf(req);
    if (!key) return failures.unauthorized(metadata());
    // An access token is a JWT (three dot-separated parts); API keys never contain a dot.
    const user =
      this.tokens && !fromQuery && key.split('.').length === 3
        ? await this.tokenUser(this.tokens, key, endpoint, publicBase(req, this.options.get('ServerAddress')))
        : await this.user(key);
    if (!user?.enabled) return failures.unauthorized(metadata(), this.tokens !== undefined);
    return { user, queryKey: fromQuery ? key : undefined };
  }

  private async check(req: FastifyRequest, serviceName: string, endpoint: ProxyEndpoint): Promise<ProxyCaller | ProxyFailure> {
    const who = await this.identify(req, endpoint);
    if ('status' in who) return who;
    const { user, queryKey } = who;
    const service = await this.service(serviceName);
    if (!service) return failures.unknownService(serviceName);
    // Access first: a caller who may not use a service learns nothing about it, not even whether it is enabled.
    if (!(await this.mayUse(user, service))) return failures.noAccess(serviceName);
    if (!service.enabled) return failures.disabledService(serviceName);
    if (user.switchedOff.has(service.id)) return failures.switchedOffService(serviceName);
    return { user, service, queryKey };
  }

  private async mayUse(user: GatewayUser, service: ServiceSpec): Promise<boolean> {
    const allowed = await this.cached(this.access, `${user.id}:${service.id}`, () => this.policy.mayUseService(user, service.id));
    return allowed === true;
  }

  private async user(key: string): Promise<GatewayUser | undefined> {
    const hash = sha256(key);
    return this.cached(this.users, hash, () => this.catalog.userByApiKey(key));
  }

  /**
   * An access token's user, reused like an API key's for a few seconds but never past the token's expiry.
   * Revoking a grant and every change of its user emit `user.changed`, which clears the entry at once.
   */
  private async tokenUser(tokens: AccessTokenPort, token: string, endpoint: ProxyEndpoint, issuer: string) {
    const now = Date.now();
    const id = `${sha256(token)} ${endpoint.kind}:${endpoint.name} ${issuer}`;
    const hit = this.tokenUsers.get(id);
    if (hit && now < hit.until) return hit.user;
    const verified = await tokens.verify(token, endpoint, issuer);
    if (this.tokenUsers.size >= MAX_CACHED) this.tokenUsers.clear();
    // An unknown or refused token is not remembered: its holder may be a client that just refreshed.
    if (verified) this.tokenUsers.set(id, { until: Math.min(now + CACHE_MS, verified.expiresAt), user: verified.user });
    else this.tokenUsers.delete(id);
    return verified?.user;
  }

  private async service(name: string): Promise<ServiceSpec | undefined> {
    // No service is named with a NUL, and PostgreSQL refuses to even compare one (a 500, found by fuzzing).
    if (name.includes('\u0000')) return undefined;
    return this.cached(this.services, name, () => this.catalog.byName(name));
  }

  private async cached<T>(cache: Map<string, Cached<T>>, key: string, load: () => Promise<T | undefined>): Promise<T | undefined> {
    const now = Date.now();
    const hit = cache.get(key);
    if (hit && now - hit.at < CACHE_MS) return hit.value;
    const value = await load();
    if (cache.size >= MAX_CACHED) cache.clear();
    cache.set(key, { at: now, value });
    return value;
  }
}

/** The endpoint a /proxy request is for: the legacy message route belongs to its /sse endpoint. */
export function proxyEndpointOf(req: FastifyRequest, name: string): ProxyEndpoint {
  const path = (req.url.split('?')[0] ?? '').replace(/\/+$/, '');
  const kind = path.endsWith('/mcp') ? 'mcp' : 'sse';
  return { kind: 'proxy', name, path: `/proxy/${encodeURIComponent(name)}/${kind}` };
}

function apiKeyOf(req: FastifyRequest): { key: string | undefined; fromQuery: boolean } {
  const header = req.headers.authorization;
  const bearer = header ? /^Bearer\s+(\S+)$/i.exec(header)?.[1] : undefined;
  if (bearer) return { key: bearer, fromQuery: false };
  const query = (req.query as Record<string, unknown> | undefined)?.key;
  return typeof query === 'string' && query !== '' ? { key: query, fromQuery: true } : { key: undefined, fromQuery: false };
}

/**
 * The endpoint an OpenAPI face request is for (openapi-face.ts): the service's or group's MCP endpoint.
 * An access token names a service or group, not a transport (`proxy:{name}`), so a token bound to the
 * MCP endpoint serves the OpenAPI face of the same service too, and a 401 points at that endpoint's metadata.
 */
export function mcpEndpointOf(kind: 'proxy' | 'group', name: string): ProxyEndpoint {
  return { kind, name, path: `/${kind}/${encodeURIComponent(name)}/mcp` };
}

/** The endpoint a /group request is for: the legacy message route belongs to its /sse endpoint. */
export function groupEndpointOf(req: FastifyRequest, name: string): ProxyEndpoint {
  const path = (req.url.split('?')[0] ?? '').replace(/\/+$/, '');
  const kind = path.endsWith('/mcp') ? 'mcp' : 'sse';
  return { kind: 'group', name, path: `/group/${encodeURIComponent(name)}/${kind}` };
}
