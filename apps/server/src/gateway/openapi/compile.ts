import { parse as parseYaml } from 'yaml';
import type { MessageKey, MessageParams } from '../../i18n/index.js';
import { LocalisedError } from '../../i18n/localised-error.js';
import type { OpenApiOperation, OpenApiPlan, OperationFilter, ParameterPlace } from './plan.js';

/** The largest document taken, fetched or uploaded. */
export const MAX_DOCUMENT_BYTES = 2 * 1024 * 1024;
/** Deeper than this, a document is refused before any library walks it. */
export const MAX_DOCUMENT_DEPTH = 100;
/** At most this many operations become tools. */
export const MAX_OPERATIONS = 500;
/** Nodes of one tool's input schema once `$ref`s are resolved (shared references count each time). */
const MAX_SCHEMA_NODES = 20_000;
/** A resolved schema deeper than this is cut (its deeper parts accept anything). */
const MAX_SCHEMA_DEPTH = 32;
/** Nodes of the paths once every internal `$ref` is expanded: past this, the validator is not started. */
export const MAX_EXPANDED_NODES = 1_000_000;
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** A document refused: the key names the problem; a `reason` parameter is a library's own diagnostic, untranslated. */
export class OpenApiError extends LocalisedError {
  constructor(key: MessageKey, params: MessageParams = {}, reason?: string) {
    super(key, reason === undefined ? params : { ...params, reason: reason.slice(0, 500) });
  }
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** JSON or YAML text as data. Anything nested deeper than MAX_DOCUMENT_DEPTH is refused, with no recursion. */
export function parseDocument(text: string): Json {
  if (Buffer.byteLength(text) > MAX_DOCUMENT_BYTES) throw new OpenApiError('openapi_service.too_large', { max: MAX_DOCUMENT_BYTES });
  if (!text.trim()) throw new OpenApiError('openapi_service.source_required');
  // Brackets are counted first: a JSON or flow-YAML bomb never reaches a recursive parser.
  if (bracketDepth(text) > MAX_DOCUMENT_DEPTH) throw new OpenApiError('openapi_service.too_deep', { max: MAX_DOCUMENT_DEPTH });
  let data: unknown;
  try {
    data = text.trimStart().startsWith('{') ? JSON.parse(text) : parseYaml(text, { maxAliasCount: 100 });
  } catch (err) {
    throw new OpenApiError('openapi_service.parse_failed', {}, err instanceof Error ? err.message : String(err));
  }
  if (depthOf(data) > MAX_DOCUMENT_DEPTH) throw new OpenApiError('openapi_service.too_deep', { max: MAX_DOCUMENT_DEPTH });
  if (!isObject(data)) throw new OpenApiError('openapi_service.not_openapi');
  return data;
}

/** The deepest nesting of `{` and `[` in the text (strings not told apart: an over-estimate is safe). */
function bracketDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 123 || c === 91) {
      depth++;
      if (depth > deepest) deepest = depth;
    } else if ((c === 125 || c === 93) && depth > 0) depth--;
  }
  return deepest;
}

function depthOf(root: unknown): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[root, 1]];
  const seen = new Set<unknown>();
  while (stack.length) {
    const [value, depth] = stack.pop() as [unknown, number];
    if (typeof value !== 'object' || value === null || seen.has(value)) continue;
    seen.add(value);
    if (depth > deepest) deepest = depth;
    if (deepest > MAX_DOCUMENT_DEPTH) return deepest;
    for (const child of Object.values(value)) stack.push([child, depth + 1]);
  }
  return deepest;
}

/**
 * How many nodes `paths` has with every internal reference expanded, counted with memory (linear in the
 * document), stopping past `limit`; a cycle counts once. Too long a chain of references to count is over.
 */
export function expandedSize(root: Json, limit: number): number {
  const memo = new Map<object, number>();
  const open = new Set<object>();
  const target = (ref: string): unknown => {
    if (!ref.startsWith('#/')) return undefined;
    let node: unknown = root;
    for (const raw of ref.slice(2).split('/')) {
      const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
      if (typeof node !== 'object' || node === null || !Object.hasOwn(node, key)) return undefined;
      node = (node as Json)[key];
    }
    return node;
  };
  const size = (node: unknown): number => {
    if (typeof node !== 'object' || node === null) return 1;
    const known = memo.get(node);
    if (known !== undefined) return known;
    if (open.has(node)) return 1;
    open.add(node);
    let total = 1;
    const ref = (node as Json).$ref;
    if (typeof ref === 'string') total += size(target(ref));
    for (const child of Object.values(node)) {
      if (total > limit) break;
      total += size(child);
    }
    open.delete(node);
    memo.set(node, total);
    return total;
  };
  try {
    return size(root.paths);
  } catch (err) {
    if (err instanceof RangeError) return limit + 1;
    throw err;
  }
}

export interface CompileInput {
  data: Json;
  /** The document's own URL: relative server URLs are resolved against it. */
  sourceUrl: string;
  /** The uploaded text, kept for export ('' when fetched). */
  document: string;
  baseUrl: string;
  filter: OperationFilter;
}

/** Validates and dereferences a parsed document and makes one tool per kept operation. */
export async function compileDocument(input: CompileInput): Promise<OpenApiPlan> {
  const { data } = input;
  if (typeof data.openapi !== 'string' || !/^3\.[01]\./.test(data.openapi)) throw new OpenApiError('openapi_service.not_openapi');
  // A small document whose references expand exponentially would keep the validator busy for minutes.
  if (expandedSize(data, MAX_EXPANDED_NODES) > MAX_EXPANDED_NODES)
    throw new OpenApiError('openapi_service.too_expanded', { max: MAX_EXPANDED_NODES });
  // Loaded on the first document, not with the app: most processes (and test files) never compile one.
  const { default: SwaggerParser } = await import('@apidevtools/swagger-parser');
  let api: Json;
  try {
    // Only references inside the document: nothing is fetched or read from disk on its behalf.
    api = (await SwaggerParser.validate(data as never, {
      resolve: { external: false },
      // Cycles become cycles of objects; copySchema cuts them where a schema meets itself again.
      dereference: { circular: true },
    })) as unknown as Json;
  } catch (err) {
    if (err instanceof RangeError) throw new OpenApiError('openapi_service.too_deep', { max: MAX_DOCUMENT_DEPTH });
    throw new OpenApiError('openapi_service.invalid', {}, err instanceof Error ? err.message : String(err));
  }
  const info = isObject(api.info) ? api.info : {};
  const baseUrl = chooseBaseUrl(api, input.baseUrl, input.sourceUrl);
  const operations = collectOperations(api, input.filter);
  return {
    sourceUrl: input.sourceUrl,
    document: input.document,
    filter: input.filter,
    title: String(info.title ?? ''),
    version: String(info.version ?? ''),
    baseUrl,
    baseUrlOverride: input.baseUrl.trim(),
    operations,
  };
}

function chooseBaseUrl(api: Json, override: string, sourceUrl: string): string {
  let raw = override.trim();
  if (!raw) {
    const server = Array.isArray(api.servers) ? api.servers.find(isObject) : undefined;
    if (server && typeof server.url === 'string') {
      raw = server.url;
      // Server variables take their defaults.
      const vars = isObject(server.variables) ? server.variables : {};
      raw = raw.replace(/\{([^}]+)\}/g, (_, name: string) => {
        const v = vars[name];
        return isObject(v) && v.default !== undefined ? String(v.default) : '';
      });
    }
  }
  if (!raw) throw new OpenApiError('openapi_service.no_base_url');
  let url: URL;
  try {
    url = sourceUrl ? new URL(raw, sourceUrl) : new URL(raw);
  } catch {
    throw new OpenApiError(override.trim() ? 'openapi_service.base_url_invalid' : 'openapi_service.no_base_url', {
      url: raw.slice(0, 200),
    });
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || !url.hostname)
    throw new OpenApiError('openapi_service.base_url_invalid', { url: raw.slice(0, 200) });
  url.search = url.hash = '';
  return url.href.replace(/\/+$/, '');
}

function kept(filter: OperationFilter, path: string, op: Json): boolean {
  const tags = filter.tags ?? [];
  const paths = filter.paths ?? [];
  const ids = filter.operation_ids ?? [];
  if (!tags.length && !paths.length && !ids.length) return true;
  const opTags = Array.isArray(op.tags) ? op.tags.map(String) : [];
  return (
    opTags.some((t) => tags.includes(t)) || paths.includes(path) || (typeof op.operationId === 'string' && ids.includes(op.operationId))
  );
}

function collectOperations(api: Json, filter: OperationFilter): OpenApiOperation[] {
  const paths = isObject(api.paths) ? api.paths : {};
  const found: { path: string; method: string; op: Json; shared: unknown[] }[] = [];
  let total = 0;
  for (const [path, item] of Object.entries(paths)) {
    if (!isObject(item)) continue;
    for (const method of METHODS) {
      const op = item[method];
      if (!isObject(op)) continue;
      total++;
      if (kept(filter, path, op)) found.push({ path, method, op, shared: Array.isArray(item.parameters) ? item.parameters : [] });
    }
  }
  if (!total) throw new OpenApiError('openapi_service.no_operations');
  if (!found.length) throw new OpenApiError('openapi_service.no_operations_after_filter', { count: total });
  if (found.length > MAX_OPERATIONS)
    throw new OpenApiError('openapi_service.too_many_operations', { count: found.length, max: MAX_OPERATIONS });
  const names = new Set<string>();
  return found.map(({ path, method, op, shared }) => toOperation(path, method, op, shared, names));
}

/** MCP tool names: 1-128 of A-Z a-z 0-9 _ - . ; kept to 64, which some clients require. */
export function toolName(raw: string): string {
  return raw
    .replace(/[^A-Za-z0-9_.-]+/g, '_')
    .replace(/_+/g, '_')
    .replace(/^[_.-]+|[_.-]+$/g, '')
    .slice(0, 64);
}

function uniqueName(base: string, names: Set<string>): string {
  let name = base;
  for (let n = 2; names.has(name); n++) name = `${base.slice(0, 60)}_${n}`;
  names.add(name);
  return name;
}

function toOperation(path: string, method: string, op: Json, shared: unknown[], names: Set<string>): OpenApiOperation {
  const label = `${typeof op.operationId === 'string' ? `${op.operationId} ` : ''}(${method.toUpperCase()} ${path})`.slice(0, 300);
  const fromId = typeof op.operationId === 'string' ? toolName(op.operationId) : '';
  const name = uniqueName(fromId || toolName(`${method}_${path.replace(/[{}]/g, '')}`) || method, names);
  const description = [op.summary, op.description]
    .filter((s): s is string => typeof s === 'string' && s.trim() !== '')
    .join('\n\n')
    .slice(0, 4000);

  // Operation parameters override the path item's of the same name and place.
  const byKey = new Map<string, Json>();
  for (const p of [...shared, ...(Array.isArray(op.parameters) ? op.parameters : [])]) {
    if (isObject(p) && typeof p.name === 'string' && typeof p.in === 'string') byKey.set(`${p.in}:${p.name}`, p);
  }
  const budget = { nodes: MAX_SCHEMA_NODES };
  const properties: Json = {};
  const required: string[] = [];
  const params: OpenApiOperation['params'] = [];
  for (const p of byKey.values()) {
    const place = p.in as string;
    const pname = p.name as string;
    if (place === 'cookie') {
      if (p.required === true) throw new OpenApiError('openapi_service.operation_cookie', { operation: label, name: pname.slice(0, 100) });
      continue;
    }
    if (place !== 'path' && place !== 'query' && place !== 'header') continue;
    const arg = properties[pname] === undefined ? pname : `${place}_${pname}`;
    const media = isObject(p.content) ? Object.values(p.content).find(isObject) : undefined;
    const schema = copySchema(p.schema ?? media?.schema ?? { type: 'string' }, budget, label);
    if (typeof p.description === 'string' && !schema.description) schema.description = p.description.slice(0, 2000);
    properties[arg] = schema;
    const isRequired = place === 'path' || p.required === true;
    if (isRequired) required.push(arg);
    params.push({ in: place as ParameterPlace, name: pname, arg, required: isRequired });
  }

  let body: OpenApiOperation['body'];
  if (isObject(op.requestBody)) {
    const content = isObject(op.requestBody.content) ? op.requestBody.content : {};
    const types = Object.keys(content);
    const contentType =
      types.find((t) => /^application\/(.+\+)?json\b/i.test(t)) ??
      types.find((t) => /^application\/x-www-form-urlencoded\b/i.test(t)) ??
      types.find((t) => /^text\//i.test(t));
    if (!contentType && types.length)
      throw new OpenApiError('openapi_service.operation_body_unsupported', { operation: label, types: types.join(', ').slice(0, 200) });
    if (contentType) {
      const media = isObject(content[contentType]) ? (content[contentType] as Json) : {};
      const arg = properties.body === undefined ? 'body' : 'request_body';
      const schema = copySchema(media.schema ?? (/^text\//i.test(contentType) ? { type: 'string' } : {}), budget, label);
      if (typeof op.requestBody.description === 'string' && !schema.description)
        schema.description = op.requestBody.description.slice(0, 2000);
      properties[arg] = schema;
      const isRequired = op.requestBody.required === true;
      if (isRequired) required.push(arg);
      body = { arg, contentType, required: isRequired };
    }
  }
  const inputSchema: Json = { type: 'object', properties };
  if (required.length) inputSchema.required = required;
  return {
    name,
    description: description || `${method.toUpperCase()} ${path}`,
    method: method.toUpperCase(),
    path,
    inputSchema,
    params,
    ...(body ? { body } : {}),
  };
}

/**
 * A plain JSON copy of a resolved schema: where it meets itself again (a cycle) or a reference left unresolved
 * (outside the document), a schema that accepts anything and says so; parts deeper than MAX_SCHEMA_DEPTH too;
 * more than MAX_SCHEMA_NODES nodes refuse the operation.
 */
function copySchema(schema: unknown, budget: { nodes: number }, label: string): Json {
  const copied = copyValue(schema, budget, label, 0, new Set());
  return isObject(copied) ? copied : {};
}

function copyValue(value: unknown, budget: { nodes: number }, label: string, depth: number, path: Set<object>): unknown {
  if (--budget.nodes < 0) throw new OpenApiError('openapi_service.operation_schema_too_large', { operation: label, max: MAX_SCHEMA_NODES });
  if (typeof value !== 'object' || value === null) return value;
  if (path.has(value)) return { description: 'recursive: the same schema as an enclosing one' };
  if (depth > MAX_SCHEMA_DEPTH) return Array.isArray(value) ? [] : {};
  path.add(value);
  try {
    if (Array.isArray(value)) return value.map((v) => copyValue(v, budget, label, depth + 1, path));
    const obj = value as Json;
    if (typeof obj.$ref === 'string') return { description: `unresolved reference outside the document: ${obj.$ref.slice(0, 200)}` };
    const out: Json = {};
    for (const [key, v] of Object.entries(obj)) {
      if (key === 'xml' || key === 'externalDocs') continue;
      out[key] = copyValue(v, budget, label, depth + 1, path);
    }
    return out;
  } finally {
    path.delete(value);
  }
}
