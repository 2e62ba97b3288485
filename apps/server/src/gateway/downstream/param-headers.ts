import type { IncomingMessage } from 'node:http';
import { decodeHeaderValue } from './modern-wire.js';

/**
 * `Mcp-Param-{Name}` headers of the 2026-07-28 revision: a tool's input schema may mark a top-level (or nested,
 * through `properties` only) primitive argument with `x-mcp-header: "Name"`, and a modern client then mirrors the
 * argument's value into that header so that intermediaries can route on it without reading the body. The gateway
 * is the server its clients talk to: it checks that each such header agrees with the body before a call goes
 * anywhere (400 and -32020 otherwise), and passes the headers on to an upstream that speaks the revision over HTTP
 * (upstream/modern-remote-channel.ts), which checks them again.
 */

export const PARAM_HEADER_PREFIX = 'mcp-param-';

/** One argument a tool mirrors into a header. */
export interface ParamHeader {
  path: string[];
  /** The name after `Mcp-Param-`, as the schema spells it. */
  header: string;
  type: 'string' | 'integer' | 'number' | 'boolean';
}

/** An RFC 9110 token: what a header name may be. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const PRIMITIVE = new Set(['string', 'integer', 'number', 'boolean']);
const CANONICAL_DECIMAL = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;

type Schema = Record<string, unknown>;
const isObject = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The header declarations of one tool's input schema. A declaration the revision does not allow (not reachable
 * through `properties` alone, not a primitive, not a token, a name used twice) makes the tool's definition
 * invalid: clients drop such a tool, and the gateway checks none of its headers (an empty list).
 */
export function paramHeadersOf(inputSchema: unknown): ParamHeader[] {
  const found: ParamHeader[] = [];
  const seen = new Set<string>();
  let valid = true;
  const visit = (node: unknown, path: string[]) => {
    if (!isObject(node) || !valid) return;
    if ('x-mcp-header' in node) {
      const name = node['x-mcp-header'];
      const type = node.type;
      if (path.length === 0 || typeof name !== 'string' || !TOKEN.test(name) || typeof type !== 'string' || !PRIMITIVE.has(type)) {
        valid = false;
        return;
      }
      if (seen.has(name.toLowerCase())) {
        valid = false;
        return;
      }
      seen.add(name.toLowerCase());
      found.push({ path, header: name, type: type as ParamHeader['type'] });
    }
    if (isObject(node.properties)) for (const [key, child] of Object.entries(node.properties)) visit(child, [...path, key]);
  };
  visit(inputSchema, []);
  return valid ? found : [];
}

/** Why the request's headers disagree with its arguments, or undefined when they agree. */
export function paramHeaderMismatch(declared: ParamHeader[], args: unknown, req: IncomingMessage): string | undefined {
  for (const d of declared) {
    let value: unknown = args;
    for (const key of d.path) value = isObject(value) ? value[key] : undefined;
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') continue;
    const name = `Mcp-Param-${d.header}`;
    const raw = req.headers[name.toLowerCase()];
    const header = Array.isArray(raw) ? raw.join(',') : raw;
    const where = `arguments.${d.path.join('.')}=${JSON.stringify(value)}`;
    if (header === undefined) return `the body carries ${where} but the ${name} header is absent`;
    const decoded = decodeHeaderValue(header.trim());
    if (decoded === undefined) return `the ${name} header carries an invalid Base64 sentinel value`;
    const same = typeof value === 'number' && CANONICAL_DECIMAL.test(decoded) ? Number(decoded) === value : decoded === String(value);
    if (!same) return `the ${name} header decodes to ${JSON.stringify(decoded)} but the body carries ${where}`;
  }
  return undefined;
}

/** The request's `Mcp-Param-*` headers, to pass on to an upstream that speaks the revision over HTTP. */
export function paramHeadersOfRequest(req: IncomingMessage): Record<string, string> | undefined {
  let out: Record<string, string> | undefined;
  for (const [name, value] of Object.entries(req.headers)) {
    if (!name.startsWith(PARAM_HEADER_PREFIX) || typeof value !== 'string' || !TOKEN.test(name)) continue;
    out ??= {};
    out[name] = value.trim();
  }
  return out;
}

/** How long what a service's tools declare is trusted before they are listed again. */
const DECLARATIONS_TTL_MS = 60_000;

/**
 * What each tool of a service (or group) declares, by the name its clients call it (after overrides), learnt
 * from the modern `tools/list` answers the gateway sends and kept a minute. A call to a tool not known here
 * lists the tools once (`list`).
 */
export class ParamHeaderIndex {
  private readonly byService = new Map<number, { at: number; tools: Map<string, ParamHeader[]> }>();

  constructor(private readonly max = 10_000) {}

  /** A page of a `tools/list` answer (the first page starts afresh). */
  learn(serviceId: number, tools: unknown, firstPage: boolean): void {
    if (!Array.isArray(tools)) return;
    let entry = this.byService.get(serviceId);
    if (!entry || firstPage) {
      if (!entry && this.byService.size >= this.max) this.byService.delete(this.byService.keys().next().value as number);
      entry = { at: Date.now(), tools: new Map() };
      this.byService.set(serviceId, entry);
    }
    for (const tool of tools) {
      if (isObject(tool) && typeof tool.name === 'string') entry.tools.set(tool.name, paramHeadersOf(tool.inputSchema));
    }
  }

  /** The tool's declarations; undefined when the service's tools are not known (or not lately). */
  declared(serviceId: number, tool: string): ParamHeader[] | undefined {
    const entry = this.byService.get(serviceId);
    if (!entry || Date.now() - entry.at > DECLARATIONS_TTL_MS) return undefined;
    return entry.tools.get(tool) ?? [];
  }
}
