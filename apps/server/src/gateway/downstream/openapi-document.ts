import type { JSONRPCError, JSONRPCResponse } from '@modelcontextprotocol/sdk/types.js';
import { type Locale, type MessageKey, translate } from '../../i18n/index.js';
import { parseLimitMessage } from '../meter.js';
import { RpcCode } from './rpc-errors.js';

/**
 * The OpenAPI face's two pure halves (docs/decisions/0053-openapi-face.md): the OpenAPI 3.1 document
 * of a tool list, and the HTTP answer of a `tools/call` answer. The conventions are mcpo's and Open
 * WebUI's tool servers': one `POST /{tool}` per tool below the server URL, the JSON body is the
 * arguments, the JSON answer is the tool's result; the operation id is the tool's name.
 */

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A tool as a tools/list answer gives it (already normalised for strict clients: tool-schema.ts). */
export interface ListedTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema?: unknown;
  outputSchema?: unknown;
  annotations?: unknown;
}

/** How deep a tool's schema is copied into the document; what lies deeper is taken as "any value". */
const MAX_SCHEMA_DEPTH = 64;

/** Names of the document's own components: a tool's schema never takes one of them. */
const ERROR = 'toolport.Error';
const RESERVED = [ERROR];

/** A JSON pointer segment (RFC 6901). */
const pointer = (segment: string): string => segment.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * A copy of a tool's schema that reads the same inside the document: a local `$ref` ("#/…", which the
 * schema meant relative to itself) is rewritten to point below the component the schema now is, and
 * `$id` (which would move that base elsewhere) is left out. Walked with a depth bound: a hostile
 * upstream's deep schema cannot overflow the stack.
 */
function relocate(schema: unknown, base: string, depth = 0): unknown {
  if (depth > MAX_SCHEMA_DEPTH) return {};
  if (Array.isArray(schema)) return schema.map((s) => relocate(s, base, depth + 1));
  if (!isObj(schema)) return schema;
  const out: Obj = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === '$id') continue;
    if (key === '$ref' && typeof value === 'string' && value.startsWith('#')) {
      out[key] = `${base}${value.slice(1)}`;
      continue;
    }
    out[key] = relocate(value, base, depth + 1);
  }
  return out;
}

/** Component keys must match ^[a-zA-Z0-9._-]+$ (OpenAPI 3.1 §4.8.7.1); each tool gets its own. */
function keyFor(name: string, used: Set<string>): string {
  const safe = name.replace(/[^A-Za-z0-9._-]/g, '_') || 'tool';
  let key = safe;
  for (let n = 2; used.has(key); n++) key = `${safe}_${n}`;
  used.add(key);
  return key;
}

/** The path of a tool below the server URL: its name as one path segment. */
export const toolPath = (name: string): string => `/${encodeURIComponent(name)}`;

const ERROR_SCHEMA = {
  type: 'object',
  required: ['detail'],
  properties: {
    detail: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: { type: 'string', description: 'What went wrong, for programs (e.g. unknown_tool, tool_error, daily_limit).' },
        message: { type: 'string', description: 'What went wrong, for people: in English or Chinese by Accept-Language.' },
        content: {
          type: 'array',
          items: { type: 'object' },
          description: "tool_error only: the tool's own content items (MCP CallToolResult.content), unchanged.",
        },
        structuredContent: { type: 'object', description: "tool_error only: the tool's structured content, when it sent any." },
      },
    },
  },
} as const;

/** The error answers every operation may give, by status. */
const ERRORS: [status: string, description: string][] = [
  ['400', 'The body is not JSON, not an object, or nests too deeply (invalid_json, not_an_object, too_deep).'],
  ['401', 'No valid API key or OAuth access token (unauthorized).'],
  ['403', 'The caller may not use this service or group, or this member of the group (no_access); or a foreign Host or Origin.'],
  ['404', 'No such service, group or tool for this caller (unknown_service, unknown_group, unknown_tool).'],
  ['413', 'The body is larger than 4 MiB (too_large).'],
  ['415', 'The body is not application/json (unsupported_media_type).'],
  [
    '422',
    "The tool answered with an error (tool_error: MCP isError; detail.content holds the tool's content) or refused its arguments (invalid_arguments).",
  ],
  [
    '429',
    "The caller's daily request limit on the service is used up (daily_limit), or too many of their calls are in flight (too_many_calls).",
  ],
  ['502', 'The tool server could not be reached or failed to answer (upstream_error).'],
  ['503', 'The service is disabled, switched off for the caller, or the gateway cannot take the call now (unavailable).'],
];

export interface DocumentInput {
  /** The service's or group's name and its display name. */
  name: string;
  title: string;
  description?: string;
  kind: 'proxy' | 'group';
  /** The absolute URL the operations' paths are relative to: `{base}/openapi/{kind}/{name}`. */
  serverUrl: string;
  tools: readonly ListedTool[];
}

/** The OpenAPI 3.1 document of a service's or group's tools as this caller sees them. */
export function buildDocument(input: DocumentInput): Obj {
  const used = new Set<string>(RESERVED);
  const schemas: Obj = { [ERROR]: ERROR_SCHEMA };
  const paths: Obj = {};
  const errorRefs = Object.fromEntries(ERRORS.map(([status]) => [status, { $ref: `#/components/responses/${status}` }]));
  for (const tool of input.tools) {
    const path = toolPath(tool.name);
    // Two tools cannot share a name in one list; a repeat (a misbehaving server) keeps the first.
    if (path in paths) continue;
    const inputKey = keyFor(tool.name, used);
    schemas[inputKey] = relocate(
      isObj(tool.inputSchema) ? tool.inputSchema : { type: 'object' },
      `#/components/schemas/${pointer(inputKey)}`,
    );
    let result: Obj = {
      description:
        'Without structured content, the content items (one alone, several as an array): a text that is JSON is that value, ' +
        'other text a string; an image or audio a data: URL; a resource its text (or a data: URL of its blob); a resource link its URI.',
    };
    if (isObj(tool.outputSchema)) {
      const outputKey = keyFor(`${tool.name}.output`, used);
      schemas[outputKey] = relocate(tool.outputSchema, `#/components/schemas/${pointer(outputKey)}`);
      result = { $ref: `#/components/schemas/${pointer(outputKey)}` };
    }
    const summary = typeof tool.title === 'string' && tool.title !== '' ? tool.title : tool.name;
    paths[path] = {
      post: {
        operationId: tool.name,
        summary,
        ...(typeof tool.description === 'string' && tool.description !== '' ? { description: tool.description } : {}),
        requestBody: {
          required: true,
          description: "The tool's arguments.",
          content: { 'application/json': { schema: { $ref: `#/components/schemas/${pointer(inputKey)}` } } },
        },
        responses: {
          '200': {
            description:
              "The tool's result: its structured content when it sent one, else its content items (see the schema's description).",
            content: { 'application/json': { schema: result } },
          },
          ...errorRefs,
        },
      },
    };
  }
  const kindWord = input.kind === 'group' ? 'group' : 'service';
  return {
    openapi: '3.1.0',
    info: {
      title: input.title || input.name,
      version: '1.0.0',
      description:
        `${input.description ? `${input.description}\n\n` : ''}The tools of the Toolport ${kindWord} "${input.name}" as the caller may use them. ` +
        `Each tool is POST /{tool name} with its arguments as the JSON body; the same calls are served over MCP at /${input.kind}/${encodeURIComponent(input.name)}/mcp.`,
    },
    servers: [{ url: input.serverUrl }],
    security: [{ bearer: [] }, { key: [] }],
    paths,
    components: {
      schemas,
      responses: Object.fromEntries(
        ERRORS.map(([status, description]) => [
          status,
          { description, content: { 'application/json': { schema: { $ref: `#/components/schemas/${ERROR}` } } } },
        ]),
      ),
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'A Toolport API key, or an OAuth access token for this service or group.' },
        key: { type: 'apiKey', in: 'query', name: 'key', description: 'A Toolport API key in the query string.' },
      },
    },
  };
}

/** An HTTP answer of the face: status and JSON body. */
export interface FaceAnswer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** The error body: `{detail: {code, message}}` (mcpo answers `{detail: {message}}` through FastAPI). */
export const errorBody = (code: string, message: string, extra: Obj = {}): Obj => ({ detail: { code, message, ...extra } });

export function failure(
  status: number,
  code: string,
  locale: Locale,
  key: MessageKey,
  params?: Record<string, string | number>,
): FaceAnswer {
  return { status, body: errorBody(code, translate(locale, key, params)) };
}

/** One content item as mcpo answers it. */
function itemValue(item: unknown): unknown {
  if (!isObj(item)) return item;
  if (item.type === 'text' && typeof item.text === 'string') {
    try {
      return JSON.parse(item.text);
    } catch {
      return item.text;
    }
  }
  if ((item.type === 'image' || item.type === 'audio') && typeof item.data === 'string') {
    return `data:${typeof item.mimeType === 'string' ? item.mimeType : 'application/octet-stream'};base64,${item.data}`;
  }
  if (item.type === 'resource' && isObj(item.resource)) {
    const r = item.resource;
    if (typeof r.text === 'string') return r.text;
    if (typeof r.blob === 'string')
      return `data:${typeof r.mimeType === 'string' ? r.mimeType : 'application/octet-stream'};base64,${r.blob}`;
  }
  if (item.type === 'resource_link' && typeof item.uri === 'string') return item.uri;
  return item;
}

/** The text a tool error names: its first text item, as the metering hook reads it. */
const firstText = (content: unknown): string | undefined => {
  const first = Array.isArray(content) ? content[0] : undefined;
  return isObj(first) && first.type === 'text' && typeof first.text === 'string' ? first.text : undefined;
};

/**
 * The HTTP answer of a tools/call answer. `status` is the one the dispatcher asked for (429 for a limit,
 * 503 when metering failed); otherwise a JSON-RPC error maps by its code and an `isError` result is 422.
 */
export function callAnswer(message: JSONRPCResponse | JSONRPCError, status: number | undefined, locale: Locale): FaceAnswer {
  if ('error' in message) {
    const text = message.error.message;
    if (status === 429) {
      const daily = parseLimitMessage(text);
      if (daily) return failure(429, 'daily_limit', locale, 'openapi.daily_limit', daily);
      return { status: 429, body: errorBody('too_many_calls', text) };
    }
    if (status !== undefined && status >= 500) return failure(status, 'unavailable', locale, 'openapi.unavailable', { message: text });
    if (message.error.code === RpcCode.InvalidParams)
      return failure(422, 'invalid_arguments', locale, 'openapi.invalid_arguments', { message: text });
    if (message.error.code === RpcCode.ServerError) return failure(503, 'unavailable', locale, 'openapi.unavailable', { message: text });
    return failure(502, 'upstream_error', locale, 'openapi.upstream_error', { message: text });
  }
  const result = isObj(message.result) ? message.result : {};
  if (result.isError === true) {
    const text = firstText(result.content) ?? 'tool reported an error';
    const extra: Obj = { content: Array.isArray(result.content) ? result.content : [] };
    if (isObj(result.structuredContent)) extra.structuredContent = result.structuredContent;
    return { status: 422, body: errorBody('tool_error', translate(locale, 'openapi.tool_error', { message: text }), extra) };
  }
  if (isObj(result.structuredContent)) return { status: 200, body: result.structuredContent };
  const items = Array.isArray(result.content) ? result.content.map(itemValue) : [];
  return { status: 200, body: items.length === 1 ? items[0] : items };
}
