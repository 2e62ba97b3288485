import { MASKED_SECRET, OperationFilter } from '@toolport/contract';
import { unmaskedUrl } from '../../../infra/credentials.js';
import { SERVICE_NAME, slugFrom } from '../../services/index.js';

/**
 * The configuration files MCP clients write, read into one shape (see
 * test/fixtures/batch-import/README.md for each client's format and its source):
 * - `{"mcpServers": {name: cfg}}`: Claude Desktop, Claude Code, Cursor, Cherry Studio, Windsurf;
 * - `{"servers": {name: cfg}, "inputs": […]}`: VS Code's mcp.json, and `{"mcp": {"servers": …}}` in its settings.json;
 * - a bare `{name: cfg}` map.
 * A cfg is `command` + `args` + `env`, or a URL (`url`; Cherry Studio's `baseUrl`; Windsurf's
 * `serverUrl`) with `headers` and an optional `type`.
 */

export interface EntryBase {
  /** The service name (URL-safe). */
  name: string;
  displayName: string;
  description: string;
  /** Toolport's own `isolation` key: one process for every client session (default), or one per session. */
  isolation: 'shared' | 'session';
}

export type BatchEntry =
  | (EntryBase & { kind: 'stdio'; command: string; args: string[]; env: Record<string, string>; masked: string[] })
  | (EntryBase & {
      kind: 'remote';
      transport: 'sse' | 'streamableHttp';
      url: string;
      headers: Record<string, string>;
      masked: string[];
    })
  /** Toolport's own `openapi` type (docs/openapi.md): a REST API from its OpenAPI document. */
  | (EntryBase & {
      kind: 'openapi';
      url: string;
      document: string;
      baseUrl: string;
      filter: OperationFilter | undefined;
      headers: Record<string, string>;
      env: Record<string, string>;
      masked: string[];
    })
  /** An entry that cannot be imported, with the reason: reported as failed, the others still run. */
  | (EntryBase & { kind: 'invalid'; problem: string });

export class BatchFormatError extends Error {
  constructor(
    readonly reason: 'not_a_config' | 'empty' | 'too_many' | 'duplicate_key',
    /** The repeated server name, for `duplicate_key`. */
    readonly key = '',
  ) {
    super(reason);
  }
}

export const MAX_BATCH_ENTRIES = 200;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string => (typeof v === 'string' ? v.trim() : '');

/** Keys that only a server configuration has: a map whose values all have one is a bare map of servers. */
const SERVER_KEYS = ['command', 'url', 'baseUrl', 'serverUrl'];
const looksLikeServer = (v: unknown) => isObject(v) && SERVER_KEYS.some((k) => typeof v[k] === 'string');

/** The map of servers and where it sits in the document (the keys leading to it). */
function serversMap(doc: unknown): { map: Json; at: string[] } {
  if (!isObject(doc)) throw new BatchFormatError('not_a_config');
  if (isObject(doc.mcpServers)) return { map: doc.mcpServers, at: ['mcpServers'] };
  if (isObject(doc.servers)) return { map: doc.servers, at: ['servers'] };
  if (isObject(doc.mcp) && isObject(doc.mcp.servers)) return { map: doc.mcp.servers, at: ['mcp', 'servers'] };
  const values = Object.values(doc);
  if (values.length > 0 && values.every(looksLikeServer)) return { map: doc, at: [] };
  throw new BatchFormatError('not_a_config');
}

/** A key that occurs twice in one object of a JSON text, with the keys leading to that object. */
export interface RepeatedKey {
  at: string[];
  key: string;
}

/**
 * The keys a JSON text repeats within one object. `JSON.parse` silently keeps the last of them, so a
 * document naming the same server twice would lose the first without a word. The text must already be
 * valid JSON (the caller parsed it): this only walks strings and brackets.
 */
export function repeatedKeys(text: string): RepeatedKey[] {
  type Frame = { object: boolean; at: string[]; keys: Set<string>; current: string; wantKey: boolean };
  const found: RepeatedKey[] = [];
  const stack: Frame[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    const top = stack.at(-1);
    if (c === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      if (top?.object && top.wantKey) {
        const key = JSON.parse(text.slice(i, end + 1)) as string;
        if (top.keys.has(key)) found.push({ at: top.at, key });
        top.keys.add(key);
        top.current = key;
        top.wantKey = false;
      }
      i = end + 1;
      continue;
    }
    if (c === '{' || c === '[') {
      const at = top ? [...top.at, top.object ? top.current : '[]'] : [];
      stack.push({ object: c === '{', at, keys: new Set(), current: '', wantKey: c === '{' });
    } else if (c === '}' || c === ']') {
      stack.pop();
    } else if (c === ',' && top?.object) {
      top.wantKey = true;
    }
    i += 1;
  }
  return found;
}

const sameKeys = (a: string[], b: string[]) => a.length === b.length && a.every((k, i) => k === b[i]);

/**
 * Every entry of the document, in order; the document itself must be one of the known shapes. Given
 * the keys its text repeats, a server name that occurs twice is refused rather than silently merged.
 */
export function parseBatchConfig(doc: unknown, repeated: RepeatedKey[] = []): BatchEntry[] {
  const { map, at } = serversMap(doc);
  const twice = repeated.find((r) => sameKeys(r.at, at));
  if (twice) throw new BatchFormatError('duplicate_key', twice.key);
  const keys = Object.keys(map);
  if (keys.length === 0) throw new BatchFormatError('empty');
  if (keys.length > MAX_BATCH_ENTRIES) throw new BatchFormatError('too_many');
  return keys.map((key) => entryOf(key, map[key]));
}

/**
 * The service name: the entry's own `name` when it is URL-safe (Cherry Studio keys entries by a
 * random id and names them in `name`), else the key, else a slug of either.
 */
function namesOf(key: string, cfg: Json): EntryBase {
  const given = str(cfg.name);
  const name = SERVICE_NAME.test(given) ? given : SERVICE_NAME.test(key) ? key : slugFrom(given || key);
  return {
    name,
    displayName: (given || key).slice(0, 128) || name,
    description: str(cfg.description).slice(0, 2000),
    isolation: cfg.isolation === 'session' ? 'session' : 'shared',
  };
}

/** `{K: V}`, or mcphost's `["K: V"]` header lines. Non-string values are written out as text. */
function stringMap(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (Array.isArray(value)) {
    for (const line of value) {
      const text = str(line);
      const colon = text.indexOf(':');
      if (colon > 0) out[text.slice(0, colon).trim()] = text.slice(colon + 1).trim();
    }
    return out;
  }
  if (!isObject(value)) return out;
  for (const [k, v] of Object.entries(value)) {
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out[k] = String(v);
  }
  return out;
}

const REMOTE_TYPES: Record<string, 'sse' | 'streamableHttp'> = {
  sse: 'sse',
  http: 'streamableHttp',
  streamablehttp: 'streamableHttp',
  'streamable-http': 'streamableHttp',
  streamable_http: 'streamableHttp',
};

/** `${input:…}`, `${env:…}`, `${workspaceFolder}`: values only the client that wrote the file can fill in. */
const CLIENT_VARIABLE = /\$\{[^}]+\}/;

function entryOf(key: string, raw: unknown): BatchEntry {
  const cfg = isObject(raw) ? raw : {};
  const base = namesOf(key, cfg);
  const invalid = (problem: string): BatchEntry => ({ ...base, kind: 'invalid', problem });
  if (!isObject(raw)) return invalid('the entry is not an object');
  const type = str(cfg.type).toLowerCase();
  if (type === 'inmemory') return invalid('a built-in Cherry Studio server runs inside Cherry Studio and cannot be imported');

  const url = str(cfg.url) || str(cfg.baseUrl) || str(cfg.serverUrl);
  const command = str(cfg.command);
  const args = Array.isArray(cfg.args) ? cfg.args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))) : [];
  // A value an export masked (`********`, written without include_secrets) is no value: it is left out, never
  // stored, and the report names it (docs/decisions/0037).
  const [env, maskedEnv] = unmasked(stringMap(cfg.env));
  const [headers, maskedHeaders] = unmasked(stringMap(cfg.headers));
  const placeholder = [url, command, ...args, ...Object.values(env), ...Object.values(headers)].find((v) => CLIENT_VARIABLE.test(v));
  if (placeholder) {
    const variable = CLIENT_VARIABLE.exec(placeholder)?.[0] ?? '';
    return invalid(`it uses ${variable}, which only the client that wrote this configuration can fill in; put the value itself`);
  }
  if (cfg.args !== undefined && !Array.isArray(cfg.args)) return invalid('"args" must be an array of strings');
  if (cfg.isolation !== undefined && cfg.isolation !== 'shared' && cfg.isolation !== 'session')
    return invalid('"isolation" must be "shared" or "session"');

  if (type === 'openapi') {
    const [kept, maskedUrl] = url ? unmaskedUrl(url) : ['', []];
    const document = str(cfg.document);
    if (!kept && !document) return invalid('an openapi server needs a "url" or a "document"');
    const parsed = OperationFilter.safeParse(cfg.operation_filter ?? {});
    if (!parsed.success) return invalid('"operation_filter" must hold lists of tags, paths or operation_ids');
    return {
      ...base,
      kind: 'openapi',
      url: kept,
      document,
      baseUrl: str(cfg.base_url),
      filter: parsed.data,
      headers,
      env,
      masked: [...maskedUrl, ...maskedHeaders, ...maskedEnv],
    };
  }
  const remote = REMOTE_TYPES[type];
  if (type && !remote && type !== 'stdio') return invalid(`unknown server type "${String(cfg.type).slice(0, 40)}"`);
  if (remote || (!command && url)) {
    if (!url) return invalid(`a ${cfg.type} server needs a "url"`);
    const [kept, maskedUrl] = unmaskedUrl(url);
    return {
      ...base,
      kind: 'remote',
      transport: remote ?? transportFromUrl(kept),
      url: kept,
      headers,
      masked: [...maskedUrl, ...maskedHeaders],
    };
  }
  if (!command) return invalid('the entry has neither a "command" nor a "url"');
  return { ...base, kind: 'stdio', command, args, env, masked: maskedEnv };
}

/** The values without those an export masked, and the keys of the masked ones. */
function unmasked(values: Record<string, string>): [Record<string, string>, string[]] {
  const kept: Record<string, string> = {};
  const masked: string[] = [];
  for (const [key, value] of Object.entries(values)) {
    if (value === MASKED_SECRET) masked.push(key);
    else kept[key] = value;
  }
  return [kept, masked];
}

/** Clients that accept a bare URL try streamable HTTP unless the path says SSE. */
function transportFromUrl(url: string): 'sse' | 'streamableHttp' {
  try {
    return /\/sse\/?$/i.test(new URL(url).pathname) ? 'sse' : 'streamableHttp';
  } catch {
    return 'streamableHttp';
  }
}
