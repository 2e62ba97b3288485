import type { ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import type { FastifyRequest } from 'fastify';
import type { OptionsReader } from '../options-reader.js';
import { failures, type ProxyFailure } from './rpc-errors.js';

/** What the environment adds to the preferences (ALLOWED_HOSTS, ALLOWED_ORIGINS; config.ts). */
export interface OriginLists {
  /** Host names (no port) the MCP endpoints answer besides localhost, IP literals and ServerAddress's host. */
  allowedHosts: readonly string[];
  /** Browser origins (`scheme://host[:port]`) allowed to call the MCP endpoints from another site. */
  allowedOrigins: readonly string[];
}

/** Methods a browser may preflight per proxy route; the rest answer 405 as before. */
const REQUEST_HEADERS = 'Authorization, Content-Type, Accept, Mcp-Session-Id, MCP-Protocol-Version, Mcp-Method, Mcp-Name, Last-Event-ID';
/** What a browser client may read from an answer: the session id it must send back, and why a key was refused. */
const EXPOSED_HEADERS = 'Mcp-Session-Id, MCP-Protocol-Version, WWW-Authenticate';
const PREFLIGHT_MAX_AGE_S = '600';

/**
 * Who may reach the MCP endpoints by name and by browser origin (docs/architecture.md §5, security.md
 * "DNS rebinding and browser clients").
 *
 * Host: a page on `evil.example` that rebinds its name to 127.0.0.1 makes the victim's browser send
 * `Host: evil.example` to the gateway; refusing DNS names the gateway does not know stops it. IP
 * literals stay allowed, since a rebinding attack needs a name, and a fresh install reached at
 * `http://192.168.1.10:3000` must work before anyone sets ServerAddress.
 *
 * Origin: a browser request comes from the gateway's own origin, ServerAddress, or an origin an admin
 * allowed (the AllowedOrigins preference or ALLOWED_ORIGINS); those also get CORS answers, every other
 * origin 403.
 */
export class OriginPolicy {
  private readonly hosts: Set<string>;
  private readonly origins: Set<string>;

  constructor(
    private readonly options: Pick<OptionsReader, 'get'>,
    lists: OriginLists = { allowedHosts: [], allowedOrigins: [] },
  ) {
    this.hosts = new Set(lists.allowedHosts.map((h) => h.toLowerCase()));
    this.origins = new Set(lists.allowedOrigins.map(normaliseOrigin).filter((o): o is string => o !== undefined));
  }

  /** The 403 for a request whose Host the gateway does not answer to, or undefined. */
  checkHost(req: FastifyRequest): ProxyFailure | undefined {
    const header = req.headers.host;
    // HTTP/1.1 requires Host; Node refuses a request without one. A missing one (HTTP/1.0) names nothing.
    if (header === undefined) return undefined;
    return this.hostAllowed(header) ? undefined : failures.foreignHost(header);
  }

  hostAllowed(hostHeader: string): boolean {
    const name = hostnameOf(hostHeader);
    if (name === undefined) return false;
    if (isIP(name) !== 0 || name === 'localhost') return true;
    if (this.hosts.has(name)) return true;
    const address = this.options.get('ServerAddress');
    if (!address) return false;
    try {
      return new URL(address).hostname.toLowerCase() === name;
    } catch {
      return false;
    }
  }

  /** The 403 for a foreign browser Origin, or undefined (also when there is no Origin: not a browser). */
  checkOrigin(req: FastifyRequest): ProxyFailure | undefined {
    const origin = req.headers.origin;
    if (origin === undefined || this.originAllowed(req, origin)) return undefined;
    return failures.foreignOrigin(origin);
  }

  originAllowed(req: FastifyRequest, origin: string): boolean {
    const host = req.headers.host;
    if (host && origin === `${req.protocol}://${host}`) return true;
    const wanted = normaliseOrigin(origin);
    if (wanted === undefined) return false;
    if (this.origins.has(wanted) || this.preferred().has(wanted)) return true;
    const address = this.options.get('ServerAddress');
    return !!address && normaliseOrigin(address) === wanted;
  }

  /**
   * Adds the CORS headers of an allowed cross-site Origin to `res` before anything is written (every
   * answer, errors included, so a browser client can read the gateway's 401 text). Same-origin and
   * non-browser requests get none.
   */
  decorate(req: FastifyRequest, res: ServerResponse): void {
    const origin = req.headers.origin;
    if (origin === undefined || !this.originAllowed(req, origin)) return;
    res.setHeader('access-control-allow-origin', origin);
    res.setHeader('access-control-expose-headers', EXPOSED_HEADERS);
    res.setHeader('vary', 'Origin');
  }

  /**
   * Answers a CORS preflight (OPTIONS with Origin and Access-Control-Request-Method): 204 with what the
   * route allows for an allowed origin, 403 otherwise. Returns false for a plain OPTIONS, which the
   * caller answers 405 as before.
   */
  preflight(req: FastifyRequest, res: ServerResponse, allow: string): boolean {
    const origin = req.headers.origin;
    if (origin === undefined || req.headers['access-control-request-method'] === undefined) return false;
    const refused = this.checkHost(req) ?? this.checkOrigin(req);
    if (refused) {
      res.writeHead(refused.status, { 'content-type': 'text/plain; charset=utf-8', vary: 'Origin' });
      res.end(refused.message);
      return true;
    }
    res.writeHead(204, {
      'access-control-allow-origin': origin,
      'access-control-allow-methods': allow,
      'access-control-allow-headers': REQUEST_HEADERS,
      'access-control-expose-headers': EXPOSED_HEADERS,
      'access-control-max-age': PREFLIGHT_MAX_AGE_S,
      vary: 'Origin',
    });
    res.end();
    return true;
  }

  /** The AllowedOrigins preference: origins separated by commas, spaces or new lines (options/definitions.ts). */
  private preferred(): Set<string> {
    const raw = this.options.get('AllowedOrigins');
    if (raw !== this.preferredRaw) {
      this.preferredRaw = raw;
      this.preferredSet = new Set(parseOriginList(raw));
    }
    return this.preferredSet;
  }
  private preferredRaw = '';
  private preferredSet = new Set<string>();
}

/** The origins of a list separated by commas, spaces or new lines; entries that are not origins are skipped. */
export function parseOriginList(raw: string): string[] {
  return raw
    .split(/[\s,]+/)
    .map(normaliseOrigin)
    .filter((o): o is string => o !== undefined);
}

/** `scheme://host[:port]` as browsers send it (lower case, default port dropped), or undefined. */
export function normaliseOrigin(value: string): string | undefined {
  const v = value.trim();
  if (v === '' || v === 'null') return undefined;
  try {
    const url = new URL(v);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
    return url.origin;
  } catch {
    return undefined;
  }
}

/** The host name of a Host header (`name`, `name:port`, `[v6]:port`), lower case, without a trailing dot. */
export function hostnameOf(hostHeader: string): string | undefined {
  const h = hostHeader.trim().toLowerCase();
  if (h === '') return undefined;
  if (h.startsWith('[')) {
    const end = h.indexOf(']');
    return end > 0 ? h.slice(1, end) : undefined;
  }
  const name = h.replace(/:\d*$/, '').replace(/\.$/, '');
  return name === '' || name.includes(':') ? undefined : name;
}
