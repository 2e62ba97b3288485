import type { FastifyRequest } from 'fastify';
import type { ConfigEvents } from '../../infra/events.js';
import { sha256 } from '../../infra/secrets.js';
import type { GatewayUser, ServiceCatalog, ServiceSpec } from '../catalog.js';
import type { OptionsReader } from '../upstream/types.js';
import type { AbuseGuard } from './abuse.js';
import { failures, type ProxyFailure } from './rpc-errors.js';

/** Answers for an API key or a service name are reused this long (architecture §8: a few seconds at most). */
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
 * Who is calling a proxy route and for which service (architecture §5): an API key by
 * `Authorization: Bearer` or `?key=`, an enabled user, an existing and enabled service, and no
 * foreign browser Origin. Lookups are cached briefly; configuration events drop entries at once.
 */
export class ProxyAuth {
  private readonly users = new Map<string, Cached<GatewayUser>>();
  private readonly services = new Map<string, Cached<ServiceSpec>>();

  constructor(
    private readonly catalog: ServiceCatalog,
    private readonly options: Pick<OptionsReader, 'get'>,
    events: ConfigEvents,
    /** Refused authentications count per client address; too many and it is answered 429 at once. */
    private readonly guard?: AbuseGuard,
  ) {
    events.on((e) => {
      if (e.type === 'user.changed') this.users.clear();
      if (e.type === 'service.changed' || e.type === 'service.removed') this.services.clear();
    });
  }

  /**
   * The caller, or the failure to answer with (403, 401, 404, 503: in that order). An address whose
   * requests were refused 403, 401 or 404 too often this minute gets 429 before anything is looked at
   * (req.ip: X-Forwarded-For only from the proxies TRUST_PROXY names).
   */
  async resolve(req: FastifyRequest, serviceName: string): Promise<ProxyCaller | ProxyFailure> {
    const blocked = this.guard?.blockedAddress(req.raw, req.ip);
    if (blocked) return blocked;
    const result = await this.check(req, serviceName);
    if ('status' in result && COUNTED_FAILURES.has(result.status)) await this.guard?.authFailed(req.ip);
    return result;
  }

  private async check(req: FastifyRequest, serviceName: string): Promise<ProxyCaller | ProxyFailure> {
    const origin = req.headers.origin;
    if (origin !== undefined && !this.originAllowed(req, origin)) return failures.foreignOrigin(origin);
    const { key, fromQuery } = apiKeyOf(req);
    if (!key) return failures.unauthorized();
    const user = await this.user(key);
    if (!user?.enabled) return failures.unauthorized();
    const service = await this.service(serviceName);
    if (!service) return failures.unknownService(serviceName);
    if (!service.enabled) return failures.disabledService(serviceName);
    if (user.switchedOff.has(service.id)) return failures.switchedOffService(serviceName);
    return { user, service, queryKey: fromQuery ? key : undefined };
  }

  /** A browser may call only from the gateway's own origin (its Host) or the configured server address. */
  private originAllowed(req: FastifyRequest, origin: string): boolean {
    const host = req.headers.host;
    if (host && origin === `${req.protocol}://${host}`) return true;
    const address = this.options.get('ServerAddress');
    if (!address) return false;
    try {
      return new URL(address).origin === origin;
    } catch {
      return false;
    }
  }

  private async user(key: string): Promise<GatewayUser | undefined> {
    const hash = sha256(key);
    return this.cached(this.users, hash, () => this.catalog.userByApiKey(key));
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

function apiKeyOf(req: FastifyRequest): { key: string | undefined; fromQuery: boolean } {
  const header = req.headers.authorization;
  const bearer = header ? /^Bearer\s+(\S+)$/i.exec(header)?.[1] : undefined;
  if (bearer) return { key: bearer, fromQuery: false };
  const query = (req.query as Record<string, unknown> | undefined)?.key;
  return typeof query === 'string' && query !== '' ? { key: query, fromQuery: true } : { key: undefined, fromQuery: false };
}
