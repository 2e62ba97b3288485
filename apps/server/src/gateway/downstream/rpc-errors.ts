import type { ServerResponse } from 'node:http';
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';

/**
 * The errors MCP clients see from the proxy routes: HTTP statuses and JSON-RPC codes as the SDK's
 * own server transport answers them (docs/protocol.md), so every client library reacts the way it
 * expects (a 404 with -32001 means "session gone, initialize again"). Messages are protocol text in
 * English like the SDK's, not console messages: MCP clients match on them, people do not read them
 * in the console.
 */
export const RpcCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /** The SDK transports' generic server error. */
  ServerError: -32000,
  SessionNotFound: -32001,
  /** 2026-07-28: the MCP-Protocol-Version, Mcp-Method or Mcp-Name header disagrees with the body, or is missing. */
  HeaderMismatch: -32020,
  /** 2026-07-28: the server needs a client capability the request's envelope does not declare (data: requiredCapabilities). */
  MissingClientCapability: -32021,
  /** 2026-07-28: a protocol version this gateway does not speak (the error's data lists the supported ones). */
  UnsupportedProtocolVersion: -32022,
} as const;

export interface ProxyFailure {
  status: number;
  code: number;
  message: string;
  headers?: Record<string, string>;
  /** The JSON-RPC error's `data` (the 2026-07-28 header and version errors carry one). */
  data?: unknown;
  /**
   * What went wrong, for faces that answer people in their language rather than in protocol text (the
   * OpenAPI face, openapi-face.ts): a short name and the values its message names.
   */
  reason?: { name: FailureReason; params?: Record<string, string | number> };
}

export type FailureReason =
  | 'unauthorized'
  | 'foreign_host'
  | 'foreign_origin'
  | 'unknown_group'
  | 'unknown_service'
  | 'no_access'
  | 'disabled_service'
  | 'switched_off_service'
  | 'unsupported_media_type'
  | 'too_large'
  | 'invalid_json'
  | 'too_deep'
  | 'method_not_allowed';

const because = (failure: ProxyFailure, name: FailureReason, params?: Record<string, string | number>): ProxyFailure => ({
  ...failure,
  reason: params ? { name, params } : { name },
});

const fail = (status: number, code: number, message: string, headers?: Record<string, string>): ProxyFailure =>
  headers ? { status, code, message, headers } : { status, code, message };

export const failures = {
  /**
   * The challenge of the MCP authorization specification: where the endpoint's protected resource
   * metadata is (RFC 9728 §5.1), and `invalid_token` when a token was presented but refused (RFC 6750 §3.1).
   */
  unauthorized: (resourceMetadata?: string, invalidToken = false) =>
    because(
      fail(
        401,
        RpcCode.ServerError,
        'Unauthorized: a valid API key or OAuth access token is required (Authorization: Bearer <key> or ?key=<key>)',
        {
          'www-authenticate': [
            'Bearer realm="toolport"',
            ...(resourceMetadata ? [`resource_metadata="${resourceMetadata}"`] : []),
            ...(invalidToken
              ? ['error="invalid_token"', 'error_description="The access token is invalid, expired, revoked or for another endpoint"']
              : []),
          ].join(', '),
        },
      ),
      'unauthorized',
    ),
  foreignHost: (host: string) =>
    because(
      fail(
        403,
        RpcCode.ServerError,
        `Forbidden: invalid Host header: ${host} (add it to ALLOWED_HOSTS or set the server address preference)`,
      ),
      'foreign_host',
      { host },
    ),
  foreignOrigin: (origin: string) =>
    because(fail(403, RpcCode.ServerError, `Forbidden: invalid Origin header: ${origin}`), 'foreign_origin', { origin }),
  unknownGroup: (name: string) => because(fail(404, RpcCode.ServerError, `Group not found: ${name}`), 'unknown_group', { name }),
  unknownService: (name: string) => because(fail(404, RpcCode.ServerError, `Service not found: ${name}`), 'unknown_service', { name }),
  noAccess: (name: string) =>
    because(fail(403, RpcCode.ServerError, `Forbidden: you do not have access to ${name}`), 'no_access', { name }),
  disabledService: (name: string) =>
    because(fail(503, RpcCode.ServerError, `Service unavailable: ${name} is disabled`), 'disabled_service', { name }),
  /** The caller's own personal switch: they can turn it back on in the console. */
  switchedOffService: (name: string) =>
    because(
      fail(503, RpcCode.ServerError, `Service unavailable: ${name} is switched off for you; switch it on again in the console`),
      'switched_off_service',
      { name },
    ),
  notAcceptable: (what: string) => fail(406, RpcCode.ServerError, `Not Acceptable: Client must accept ${what}`),
  unsupportedMediaType: () =>
    because(fail(415, RpcCode.ServerError, 'Unsupported Media Type: Content-Type must be application/json'), 'unsupported_media_type'),
  tooLarge: (limit: number) =>
    because(fail(413, RpcCode.ServerError, `Payload Too Large: Request body must not exceed ${limit} bytes`), 'too_large', { limit }),
  invalidJson: () => because(fail(400, RpcCode.ParseError, 'Parse error: Invalid JSON'), 'invalid_json'),
  invalidMessage: () => fail(400, RpcCode.ParseError, 'Parse error: Invalid JSON-RPC message'),
  emptyBatch: () => fail(400, RpcCode.InvalidRequest, 'Invalid Request: empty batch'),
  batchTooLarge: (max: number) => fail(400, RpcCode.InvalidRequest, `Invalid Request: Batch must not exceed ${max} messages`),
  tooDeep: (max: number) =>
    because(fail(400, RpcCode.InvalidRequest, `Invalid Request: JSON must not nest deeper than ${max} levels`), 'too_deep', { max }),
  batchNotAllowed: (version: string) =>
    fail(400, RpcCode.InvalidRequest, `Invalid Request: JSON-RPC batches are not supported by protocol version ${version}`),
  sessionRequired: () => fail(400, RpcCode.ServerError, 'Bad Request: Mcp-Session-Id header is required'),
  sessionNotFound: () => fail(404, RpcCode.SessionNotFound, 'Session not found'),
  alreadyInitialized: () => fail(400, RpcCode.InvalidRequest, 'Invalid Request: Server already initialized'),
  oneInitialize: () => fail(400, RpcCode.InvalidRequest, 'Invalid Request: Only one initialization request is allowed'),
  unsupportedVersion: (version: string) =>
    fail(
      400,
      RpcCode.ServerError,
      `Bad Request: Unsupported protocol version: ${version} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`,
    ),
  secondStream: () => fail(409, RpcCode.ServerError, 'Conflict: Only one SSE stream is allowed per session'),
  methodNotAllowed: (allow: string) =>
    because(fail(405, RpcCode.ServerError, 'Method not allowed.', { allow }), 'method_not_allowed', { allow }),
  /** 2026-07-28 (modern.ts): a required header missing, or naming something else than the body. */
  headerMismatch: (header: string, body: string) => ({
    ...fail(400, RpcCode.HeaderMismatch, `Bad Request: the request headers and body disagree: ${body}`),
    data: { mismatch: { header, body } },
  }),
  /** 2026-07-28: a malformed `_meta` envelope, or a modern version header on a request without one. */
  invalidEnvelope: (detail: string) => fail(400, RpcCode.InvalidParams, `Invalid params: ${detail}`),
  unsupportedModernVersion: (version: string, supported: readonly string[]) => ({
    ...fail(
      400,
      RpcCode.UnsupportedProtocolVersion,
      `Unsupported protocol version: ${version} (supported versions: ${supported.join(', ')})`,
    ),
    data: { supported: [...supported], requested: version },
  }),
  modernBatch: () =>
    fail(400, RpcCode.InvalidRequest, 'Bad Request: JSON-RPC batches may not contain requests for protocol revision 2026-07-28 or later'),
};

export const rpcErrorJson = (id: string | number | null, code: number, message: string): string =>
  JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } });

/** Answers a whole HTTP request with a JSON-RPC error body (under the request's id when it is known). */
export function sendFailure(res: ServerResponse, failure: ProxyFailure, id: string | number | null = null): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const body =
    failure.data === undefined
      ? rpcErrorJson(id, failure.code, failure.message)
      : JSON.stringify({ jsonrpc: '2.0', id, error: { code: failure.code, message: failure.message, data: failure.data } });
  res.writeHead(failure.status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    ...failure.headers,
  });
  res.end(body);
}

/** What a proxied request hears when it needs the database and the database is away (HTTP 503, Retry-After). */
export const DATABASE_AWAY = 'Service unavailable: the database cannot be reached, retry shortly';
