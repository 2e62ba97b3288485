import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { FetchLike } from '../../infra/outbound.js';
import type { OpenApiOperation } from './plan.js';
import { readCapped } from './read-capped.js';

/** The largest REST answer turned into a tool result. */
export const MAX_ANSWER_BYTES = 4 * 1024 * 1024;
/** Environment names with a meaning of their own; every other variable is a query parameter. */
export const BEARER_VARIABLE = 'OPENAPI_BEARER_TOKEN';
export const BASIC_USER_VARIABLE = 'OPENAPI_BASIC_USERNAME';
export const BASIC_PASSWORD_VARIABLE = 'OPENAPI_BASIC_PASSWORD';

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what is refused.
const CONTROL = /[\u0000-\u001f\u007f]/;

/** How every call of a service goes out: where, with which secrets, through which fetch. */
export interface CallSetup {
  baseUrl: string;
  /** Sent on every request; they win over a header parameter of the same name. */
  headers: Record<string, string>;
  /** The service's variables, a user's personal values over them (see the names above). */
  variables: Record<string, string>;
  fetch: FetchLike;
}

const failure = (text: string): CallToolResult => ({ content: [{ type: 'text', text }], isError: true });

function scalar(value: unknown): string {
  return typeof value === 'string' ? value : typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value);
}

/** The request an operation makes for these arguments, or a message saying which argument is wrong. */
export function buildRequest(
  op: OpenApiOperation,
  args: Record<string, unknown>,
  setup: CallSetup,
): { url: URL; init: RequestInit } | string {
  let path = op.path;
  const url = new URL(setup.baseUrl);
  const query = new URLSearchParams();
  const headers = new Headers();
  for (const p of op.params) {
    const value = args[p.arg];
    if (value === undefined || value === null) {
      if (p.required) return `missing required argument "${p.arg}"`;
      continue;
    }
    if (p.in === 'path') path = path.split(`{${p.name}}`).join(encodeURIComponent(scalar(value)));
    else if (p.in === 'query') {
      for (const v of Array.isArray(value) ? value : [value]) query.append(p.name, scalar(v));
    } else {
      const text = scalar(value);
      if (CONTROL.test(text)) return `argument "${p.arg}" cannot be an HTTP header value`;
      headers.set(p.name, text);
    }
  }
  url.pathname = `${url.pathname.replace(/\/+$/, '')}${path.startsWith('/') ? path : `/${path}`}`;
  const { [BEARER_VARIABLE]: bearer, [BASIC_USER_VARIABLE]: user, [BASIC_PASSWORD_VARIABLE]: password, ...rest } = setup.variables;
  for (const [name, value] of Object.entries(rest)) query.set(name, value);
  url.search = query.toString();
  if (bearer) headers.set('authorization', `Bearer ${bearer}`);
  if (user !== undefined || password !== undefined)
    headers.set('authorization', `Basic ${Buffer.from(`${user ?? ''}:${password ?? ''}`).toString('base64')}`);
  for (const [name, value] of Object.entries(setup.headers)) headers.set(name, value);
  headers.set('accept', 'application/json, text/*;q=0.9, */*;q=0.5');
  const init: RequestInit = { method: op.method, headers };
  if (op.body) {
    const value = args[op.body.arg];
    if (value === undefined) {
      if (op.body.required) return `missing required argument "${op.body.arg}"`;
    } else {
      headers.set('content-type', op.body.contentType);
      if (/json/i.test(op.body.contentType)) init.body = JSON.stringify(value);
      else if (/x-www-form-urlencoded/i.test(op.body.contentType)) {
        const form = new URLSearchParams();
        if (typeof value === 'object' && value !== null) for (const [k, v] of Object.entries(value)) form.append(k, scalar(v));
        init.body = form.toString();
      } else init.body = scalar(value);
    }
  }
  return { url, init };
}

/** The message an error answer carries: its `message`, `error`, `detail` or `title`, else its text. */
function errorMessage(body: unknown, text: string): string {
  if (typeof body === 'object' && body !== null) {
    const b = body as Record<string, unknown>;
    const error = b.error;
    for (const v of [
      b.message,
      typeof error === 'object' && error !== null ? (error as Record<string, unknown>).message : error,
      b.detail,
      b.title,
    ])
      if (typeof v === 'string' && v) return v;
  }
  return text;
}

/**
 * One call of an operation: the answer's JSON as structured content and text, text as text, an image as
 * an image; an error status is a tool error naming the status and the answer's message.
 */
export async function callOperation(
  op: OpenApiOperation,
  args: Record<string, unknown>,
  setup: CallSetup,
  signal: AbortSignal,
): Promise<CallToolResult> {
  const request = buildRequest(op, args, setup);
  if (typeof request === 'string') return failure(`${op.name}: ${request}`);
  let response: Response;
  try {
    response = await setup.fetch(request.url, { ...request.init, signal });
  } catch (err) {
    return failure(`${op.method} ${op.path} failed: ${err instanceof Error ? err.message : String(err)}`);
  }
  let bytes: Buffer | undefined;
  try {
    bytes = await readCapped(response, MAX_ANSWER_BYTES);
  } catch (err) {
    return failure(`${op.method} ${op.path}: the answer broke off: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!bytes) return failure(`${op.method} ${op.path}: the answer is larger than ${MAX_ANSWER_BYTES} bytes`);
  const type = response.headers.get('content-type') ?? '';
  const text = bytes.toString('utf8');
  let json: unknown;
  let isJson = false;
  if (/json/i.test(type) || (!type && /^\s*[[{]/.test(text))) {
    try {
      json = JSON.parse(text);
      isJson = true;
    } catch {
      isJson = false;
    }
  }
  if (!response.ok) {
    const message = errorMessage(json, text).slice(0, 2000);
    return failure(`HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}${message ? `: ${message}` : ''}`);
  }
  if (isJson) {
    const structured =
      typeof json === 'object' && json !== null && !Array.isArray(json) ? (json as Record<string, unknown>) : { result: json };
    return { content: [{ type: 'text', text: JSON.stringify(json) }], structuredContent: structured };
  }
  if (/^image\//i.test(type)) return { content: [{ type: 'image', data: bytes.toString('base64'), mimeType: type.split(';')[0] ?? type }] };
  if (!text && bytes.length === 0) return { content: [{ type: 'text', text: `HTTP ${response.status}` }] };
  return { content: [{ type: 'text', text }] };
}
