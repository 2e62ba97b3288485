/**
 * The vocabulary of protocol revision 2026-07-28 (the stateless era, docs/protocol.md) that both sides of the
 * gateway speak: the clients' side (downstream/modern-wire.ts) and the tool servers' side
 * (upstream/modern-remote-channel.ts, upstream/modern-link.ts). Pure values and functions, no transport.
 */

/** The revision an upstream link of the stateless era speaks. */
export const MODERN_REVISION = '2026-07-28';

type Params = Record<string, unknown>;
const isObject = (v: unknown): v is Params => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The modern revisions this gateway serves (`server/discover`'s `supportedVersions`). */
export const MODERN_VERSIONS: readonly string[] = ['2026-07-28'];
const FIRST_MODERN = MODERN_REVISION;

/** A revision identifier of the modern era: a date on or after 2026-07-28 (how the SDKs compare them). */
export const REVISION_DATE = /^\d{4}-\d{2}-\d{2}$/;

export const isModernVersion = (version: unknown): version is string =>
  typeof version === 'string' && REVISION_DATE.test(version) && version >= FIRST_MODERN;

export const META = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  logLevel: 'io.modelcontextprotocol/logLevel',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
  subscriptionId: 'io.modelcontextprotocol/subscriptionId',
} as const;

/** The methods whose `Mcp-Name` header mirrors a body field, and which field. */
export const NAME_SOURCE: Record<string, string> = { 'tools/call': 'name', 'prompts/get': 'name', 'resources/read': 'uri' };

/** `=?base64?…?=` carries a value that is not plain ASCII; anything else is the value itself. */
export function decodeHeaderValue(value: string): string | undefined {
  if (!(value.startsWith('=?base64?') && value.endsWith('?='))) return value;
  const b64 = value.slice(9, -2);
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(b64) || b64.length % 4 !== 0) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(b64, 'base64'));
  } catch {
    return undefined;
  }
}

/**
 * A header value as a modern client sends it: plain when it is a safe ASCII field value, else
 * `=?base64?<Base64 of the UTF-8>?=` (also for an empty value, surrounding whitespace, or a value that
 * looks like the sentinel itself). `decodeHeaderValue` reverses it.
 */
export function encodeHeaderValue(value: string): string {
  const plain =
    value !== '' && value === value.trim() && !(value.startsWith('=?base64?') && value.endsWith('?=')) && /^[\t\x20-\x7e]*$/.test(value);
  return plain ? value : `=?base64?${Buffer.from(value, 'utf8').toString('base64')}?=`;
}

/** The value a request's `Mcp-Name` header mirrors (`params.name`, or `params.uri` for a read), if its method has one. */
export function mcpNameOf(method: string, params: unknown): string | undefined {
  const field = Object.hasOwn(NAME_SOURCE, method) ? NAME_SOURCE[method] : undefined;
  return field && isObject(params) && typeof params[field] === 'string' ? (params[field] as string) : undefined;
}
