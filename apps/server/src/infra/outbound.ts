import dns from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import type { MessageKey } from '../i18n/index.js';
import { LocalisedError } from '../i18n/localised-error.js';

/**
 * Every outbound HTTP request the server makes goes through here (docs/security.md "Remote URLs").
 *
 * - Redirects are followed by hand, at most MAX_REDIRECTS, and only while the target keeps the
 *   origin (scheme, host and port) of the request; any other redirect is an OutboundError.
 * - `remoteAddresses(allow).fetch` is for addresses that come in through the API (remote service URLs and their
 *   redirects): while the preference AllowPrivateNetworkUpstreams is "false" it refuses loopback,
 *   private, link-local, unspecified and other non-public addresses, IPv4-mapped forms included.
 *   A host name is checked inside the connection's own DNS lookup, so the address checked is the
 *   address connected to (no DNS rebinding between check and connect).
 * - `configuredFetch` is for base URLs the operator sets in the environment (registries, mirrors,
 *   OAuth providers): trusted as to address, since a private mirror is a normal set-up, but held
 *   to the same redirect rule.
 * - `addressCheckedFetch(allow)` is the same under another rule than the preference: for URLs a
 *   caller who is not an admin chooses (an MCP client's Client ID Metadata Document), refused on
 *   private addresses unless the operator allows them (docs/decisions/0041-oauth-server-hostile-input.md).
 */

export const MAX_REDIRECTS = 5;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

/** Why an address is not public; `undefined` from `classifyAddress` means public. */
export type AddressKind = 'loopback' | 'private' | 'link-local' | 'unspecified' | 'reserved';

const refusalKeys: Record<AddressKind, MessageKey> = {
  loopback: 'outbound.refused_loopback',
  private: 'outbound.refused_private',
  'link-local': 'outbound.refused_link_local',
  unspecified: 'outbound.refused_unspecified',
  reserved: 'outbound.refused_reserved',
};

/** A refused outbound request: a message key for localised answers, English as the Error message. */
export class OutboundError extends LocalisedError {}

// --- the address classifier ---------------------------------------------------------------------

function classifyV4([a = 0, b = 0]: number[]): AddressKind | undefined {
  if (a === 0) return 'unspecified'; // 0.0.0.0/8 "this network": 0.0.0.0 reaches the local host
  if (a === 127) return 'loopback';
  if (a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168)) return 'private';
  if (a === 100 && b >= 64 && b <= 127) return 'private'; // 100.64/10 shared address space (CGNAT; Alibaba Cloud metadata)
  if (a === 169 && b === 254) return 'link-local'; // 169.254.169.254 is the cloud metadata service
  if (a >= 224) return 'reserved'; // multicast, 240/4 and the broadcast address
  return undefined;
}

function parseV4(text: string): number[] | undefined {
  const parts = text.split('.');
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p))) return undefined;
  const bytes = parts.map(Number);
  return bytes.every((n) => n <= 255) ? bytes : undefined;
}

/** Eight 16-bit groups, or undefined for text that is not an IPv6 address. */
function parseV6(text: string): number[] | undefined {
  let s = text.toLowerCase().replace(/%.*$/, '');
  // A dotted IPv4 tail (::ffff:127.0.0.1) becomes its two hex groups.
  const lastColon = s.lastIndexOf(':');
  const tail = s.slice(lastColon + 1);
  if (tail.includes('.')) {
    const v4 = parseV4(tail);
    if (!v4) return undefined;
    const [a = 0, b = 0, c = 0, d = 0] = v4;
    s = `${s.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = s.split('::');
  if (halves.length > 2) return undefined;
  const groups = (h: string | undefined) => (h ? h.split(':') : []);
  const head = groups(halves[0]);
  const rest = groups(halves[1]);
  if (![...head, ...rest].every((g) => /^[0-9a-f]{1,4}$/.test(g))) return undefined;
  const words = (gs: string[]) => gs.map((g) => Number.parseInt(g, 16));
  const total = head.length + rest.length;
  if (halves.length === 1) return total === 8 ? words(head) : undefined;
  if (total > 7) return undefined;
  return [...words(head), ...new Array<number>(8 - total).fill(0), ...words(rest)];
}

function classifyV6(g: number[]): AddressKind | undefined {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = g;
  const embedded = (hi: number, lo: number) => classifyV4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  const zeros = (...xs: number[]) => xs.every((x) => x === 0);
  if (zeros(g0, g1, g2, g3, g4, g5, g6, g7)) return 'unspecified';
  if (zeros(g0, g1, g2, g3, g4, g5, g6) && g7 === 1) return 'loopback';
  // IPv4-mapped ::ffff:a.b.c.d, IPv4-translated ::ffff:0:a.b.c.d, IPv4-compatible ::a.b.c.d, NAT64 64:ff9b::a.b.c.d.
  if (zeros(g0, g1, g2, g3, g4) && g5 === 0xffff) return embedded(g6, g7);
  if (zeros(g0, g1, g2, g3, g5) && g4 === 0xffff) return embedded(g6, g7);
  if (zeros(g0, g1, g2, g3, g4, g5)) return embedded(g6, g7);
  if (g0 === 0x64 && g1 === 0xff9b && zeros(g2, g3, g4, g5)) return embedded(g6, g7);
  if (g0 === 0x2002) return embedded(g1, g2); // 6to4 carries an IPv4 address in bits 16-47
  if ((g0 & 0xfe00) === 0xfc00) return 'private'; // fc00::/7 unique local (AWS metadata fd00:ec2::254 among them)
  if ((g0 & 0xffc0) === 0xfe80) return 'link-local'; // fe80::/10
  if ((g0 & 0xffc0) === 0xfec0) return 'private'; // fec0::/10 site-local (deprecated)
  if ((g0 & 0xff00) === 0xff00) return 'reserved'; // multicast
  return undefined;
}

/**
 * What kind of non-public address `address` is (IPv4 dotted quad, IPv6 with or without brackets
 * and zone), or undefined for a public address. Text that is no IP address at all is 'reserved':
 * callers only pass what DNS or a URL gave them, and an unknown form is not let through.
 */
export function classifyAddress(address: string): AddressKind | undefined {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  const v4 = parseV4(bare);
  if (v4) return classifyV4(v4);
  const v6 = parseV6(bare);
  return v6 ? classifyV6(v6) : 'reserved';
}

/** The host of a URL as DNS and sockets take it: IPv6 literals without their brackets. */
const hostOf = (url: URL): string => (url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname);

function refusal(host: string, address: string): OutboundError | undefined {
  const kind = classifyAddress(address);
  return kind ? new OutboundError(refusalKeys[kind], { host, address }) : undefined;
}

/**
 * The refusal for `url` under the current preference, or undefined when it may be used. A host
 * name is resolved (every address must be public); one that does not resolve is not refused
 * here: connecting will fail on its own, and is checked again then.
 */
export async function checkRemoteUrl(url: URL, allow: () => boolean): Promise<OutboundError | undefined> {
  if (allow()) return undefined;
  const host = hostOf(url);
  if (isIP(host)) return refusal(host, host);
  let addresses: dns.LookupAddress[];
  try {
    addresses = await dns.promises.lookup(host, { all: true, verbatim: true });
  } catch {
    return undefined;
  }
  for (const { address } of addresses) {
    const refused = refusal(host, address);
    if (refused) return refused;
  }
  return undefined;
}

/**
 * A DNS lookup for connections that refuses the whole answer when any address in it is not
 * public: the socket then connects only to an address that was checked.
 */
const checkedLookup: LookupFunction = (hostname, options, callback) => {
  dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, '', undefined);
    for (const { address } of addresses) {
      const refused = refusal(hostname, address);
      if (refused) return callback(refused as NodeJS.ErrnoException, '', undefined);
    }
    if (options.all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, addresses);
    const first = addresses[0];
    if (!first) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '', undefined);
    callback(null, first.address, first.family);
  });
};

/**
 * The dispatcher that connects through `checkedLookup`: an Agent of the undici built into Node
 * (the class of its global dispatcher, so it is always the one `fetch` speaks to; the server
 * declares no undici dependency of its own). Undefined if that global is not a plain Agent (a
 * proxy agent set by the operator): host names are then checked just before each request instead.
 */
let checkedAgent: Promise<object | undefined> | undefined;
function checkedDispatcher(): Promise<object | undefined> {
  checkedAgent ??= (async () => {
    const key = Symbol.for('undici.globalDispatcher.1');
    if (!(key in globalThis)) await fetch('data:,').then((r) => r.arrayBuffer());
    const global = (globalThis as Record<symbol, unknown>)[key] as { constructor?: new (opts: object) => object } | undefined;
    const Agent = global?.constructor;
    if (Agent?.name !== 'Agent') return undefined;
    return new Agent({ connect: { lookup: checkedLookup } });
  })();
  return checkedAgent;
}

// --- fetching -----------------------------------------------------------------------------------

/** What a redirect target is called in messages: no credentials, query or fragment. */
function shown(url: URL): string {
  const copy = new URL(url);
  copy.username = copy.password = copy.search = copy.hash = '';
  return copy.href;
}

/** Whether private addresses may be reached (read at every request), or undefined: no address rule at all. */
type AddressRule = (() => boolean) | undefined;

/** One request, no redirect followed; fetch's own wrapping ("fetch failed") removed from our refusals. */
async function once(url: URL, init: RequestInit, rule: AddressRule): Promise<Response> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new OutboundError('outbound.bad_scheme', { url: shown(url) });
  let dispatcher: object | undefined;
  if (rule && !rule()) {
    const host = hostOf(url);
    if (isIP(host)) {
      const refused = refusal(host, host);
      if (refused) throw refused;
    } else {
      dispatcher = await checkedDispatcher();
      if (!dispatcher) {
        const refused = await checkRemoteUrl(url, rule);
        if (refused) throw refused;
      }
    }
  }
  try {
    return await fetch(url, dispatcher ? ({ ...init, dispatcher } as RequestInit) : init);
  } catch (err) {
    if (err instanceof Error && err.cause instanceof OutboundError) throw err.cause;
    throw err;
  }
}

/**
 * fetch with the redirect rule (and the address rule with a rule). `redirect: 'manual'`
 * and `'error'` in `init` keep their fetch meaning; otherwise redirects are followed by hand.
 */
async function guardedFetch(input: string | URL, init: RequestInit | undefined, rule: AddressRule): Promise<Response> {
  const start = new URL(String(input));
  if (init?.redirect === 'error' || init?.redirect === 'manual') return once(start, init, rule);
  let url = start;
  let current: RequestInit = { ...init, redirect: 'manual' };
  for (let hops = 0; ; hops++) {
    const response = await once(url, current, rule);
    const location = REDIRECT_STATUSES.has(response.status) ? response.headers.get('location') : null;
    if (location === null) return response;
    await response.body?.cancel().catch(() => undefined);
    let target: URL;
    try {
      target = new URL(location, url);
    } catch {
      throw new OutboundError('outbound.bad_redirect', { url: shown(url) });
    }
    if (target.origin !== start.origin) throw new OutboundError('outbound.redirect_cross_origin', { target: shown(target) });
    if (hops >= MAX_REDIRECTS) throw new OutboundError('outbound.too_many_redirects', { max: MAX_REDIRECTS, url: shown(start) });
    // As fetch does: 303, and 301/302 after a POST, continue as a GET without a body.
    const method = (current.method ?? 'GET').toUpperCase();
    if (response.status === 303 ? method !== 'HEAD' : (response.status === 301 || response.status === 302) && method === 'POST') {
      const headers = new Headers(current.headers);
      for (const name of ['content-type', 'content-length', 'content-encoding', 'content-language', 'content-location'])
        headers.delete(name);
      current = { ...current, method: 'GET', body: undefined, headers };
    }
    url = target;
  }
}

/** For base URLs from the operator's configuration: registries, mirrors, OAuth providers. */
export const configuredFetch: FetchLike = (url, init) => guardedFetch(url, init, undefined);

/** For URLs someone who is not an admin chose: private addresses only while `allowPrivateNetwork()` says so. */
export const addressCheckedFetch =
  (allowPrivateNetwork: () => boolean): FetchLike =>
  (url, init) =>
    guardedFetch(url, init, allowPrivateNetwork);

/**
 * The address rule of remote services (URLs that come in through the API) under the preference
 * AllowPrivateNetworkUpstreams: built once by the core (build/core.ts) and passed to whatever fetches or
 * checks such URLs. No module-level state: each built core has its own (docs/decisions/0062).
 */
export interface RemoteAddresses {
  /** fetch for remote services and their redirects: private addresses only while the rule allows them. */
  fetch: FetchLike;
  /** The refusal for `url` under the rule, or undefined when it may be used (checkRemoteUrl). */
  check(url: URL): Promise<OutboundError | undefined>;
}

/** The rule read at every request, so a change of the preference applies to the next connection. */
export function remoteAddresses(allowPrivate: () => boolean): RemoteAddresses {
  return { fetch: addressCheckedFetch(allowPrivate), check: (url) => checkRemoteUrl(url, allowPrivate) };
}
