import type { IncomingMessage } from 'node:http';
import type {
  ClientCapabilities,
  Implementation,
  JSONRPCError,
  JSONRPCMessage,
  JSONRPCRequest,
  JSONRPCResponse,
  RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import { VERSION } from '../../version.js';
import { decodeHeaderValue, isModernVersion, META, MODERN_VERSIONS, NAME_SOURCE, REVISION_DATE } from '../wire/revision-2026-07-28.js';
import { failures, type ProxyFailure } from './rpc-errors.js';
import { sessionIdOf } from './session-access.js';

/**
 * The wire rules of the 2026-07-28 revision ("the modern era", docs/protocol.md) as this gateway applies
 * them: which era a POST belongs to, the header checks, the per-request `_meta` envelope, and the shape
 * of a modern answer. Pure functions; the HTTP side is modern.ts. The revision's vocabulary that the upstream side
 * speaks too (envelope keys, header values) lives in ../wire/revision-2026-07-28.ts.
 */

export { decodeHeaderValue, encodeHeaderValue, isModernVersion, META, MODERN_VERSIONS, mcpNameOf } from '../wire/revision-2026-07-28.js';

/** What a modern request says about its client, in place of an initialize. */
export interface Envelope {
  protocolVersion: string;
  capabilities: ClientCapabilities;
  clientInfo?: Implementation;
  /** The client asked for log messages of this level and above during the request (absent: none). */
  logLevel?: string;
}

export type Classified =
  | { era: 'legacy' }
  | { era: 'modern'; request: JSONRPCRequest; envelope: Envelope }
  /** A modern notification: nothing in the 2026-07-28 revision needs one over HTTP; accepted and dropped. */
  | { era: 'modern-notification' }
  | { era: 'refused'; failure: ProxyFailure };

type Params = Record<string, unknown>;
const isObject = (v: unknown): v is Params => typeof v === 'object' && v !== null && !Array.isArray(v);
const metaOf = (params: unknown): Params | undefined => (isObject(params) && isObject(params._meta) ? params._meta : undefined);
/** A request claims the modern era by carrying the protocol version key in `params._meta`. */
const claims = (params: unknown): boolean => {
  const meta = metaOf(params);
  return meta !== undefined && META.protocolVersion in meta;
};

const headerOf = (req: IncomingMessage, name: string): string | undefined => {
  const value = req.headers[name];
  const text = Array.isArray(value) ? value.join(',') : value;
  return text === undefined ? undefined : text.trim();
};

const legacy: Classified = { era: 'legacy' };
const refused = (failure: ProxyFailure): Classified => ({ era: 'refused', failure });

/**
 * Which era one POST belongs to, decided by its shape: a session id, a batch, a response, an
 * `initialize` or a request without the envelope claim is the legacy era (served exactly as before);
 * a request whose `params._meta` names a modern revision is modern, and must then carry the
 * `MCP-Protocol-Version` and `Mcp-Method` headers (and `Mcp-Name` for calls, prompts and reads) agreeing
 * with the body, else 400 with -32020.
 */
export function classify(req: IncomingMessage, messages: JSONRPCMessage[], batch: boolean): Classified {
  if (sessionIdOf(req)) return legacy;
  const versionHeader = headerOf(req, 'mcp-protocol-version');
  const methodHeader = headerOf(req, 'mcp-method');
  const headerModern = isModernVersion(versionHeader);
  if (batch) return messages.some((m) => 'method' in m && claims(m.params)) ? refused(failures.modernBatch()) : legacy;
  const message = messages[0];
  if (!message || !('method' in message)) return legacy;
  const isRequest = 'id' in message;
  const { method, params } = message;

  if (isRequest && method === 'initialize' && !claims(params)) {
    if (headerModern) {
      return refused(
        failures.headerMismatch(
          versionHeader,
          'an initialize request (legacy handshake) was sent with a modern MCP-Protocol-Version header',
        ),
      );
    }
    return legacy;
  }
  if (!claims(params)) {
    if (!headerModern) return legacy;
    if (!isRequest) {
      if (methodHeader !== undefined && methodHeader !== method) return refused(methodMismatch(methodHeader, method));
      return { era: 'modern-notification' };
    }
    return refused(
      failures.invalidEnvelope(
        `the MCP-Protocol-Version header names protocol revision ${versionHeader}, but the request is missing the required per-request envelope key(s): ${metaOf(params) ? META.protocolVersion : '_meta'}`,
      ),
    );
  }

  const meta = metaOf(params) as Params;
  const version = meta[META.protocolVersion];
  if (typeof version !== 'string') return refused(failures.invalidEnvelope(`${META.protocolVersion}: expected a protocol version string`));
  // A claim naming a 2025 revision is legacy traffic, answered as before; one that is no revision date at
  // all is refused here as a modern request would be (header mismatch, else unsupported version).
  if (!isModernVersion(version) && REVISION_DATE.test(version)) return legacy;
  if (versionHeader !== undefined && versionHeader !== version) {
    return refused(
      failures.headerMismatch(
        versionHeader,
        `the body envelope names protocol version ${version} but the MCP-Protocol-Version header names ${versionHeader}`,
      ),
    );
  }
  if (methodHeader !== undefined && methodHeader !== method) return refused(methodMismatch(methodHeader, method));
  if (!MODERN_VERSIONS.includes(version)) return refused(failures.unsupportedModernVersion(version, MODERN_VERSIONS));
  if (!isRequest) return { era: 'modern-notification' };

  const capabilities = meta[META.clientCapabilities];
  if (!isObject(capabilities)) return refused(failures.invalidEnvelope(`${META.clientCapabilities}: required, an object`));
  if (versionHeader === undefined) {
    return refused(
      failures.headerMismatch(
        '(missing)',
        `the body envelope names protocol version ${version} but the required MCP-Protocol-Version header is absent`,
      ),
    );
  }
  if (methodHeader === undefined) {
    return refused(failures.headerMismatch('(missing)', `the body names method ${method} but the required Mcp-Method header is absent`));
  }
  const field = Object.hasOwn(NAME_SOURCE, method) ? NAME_SOURCE[method] : undefined;
  const bodyName = field && isObject(params) && typeof params[field] === 'string' ? (params[field] as string) : undefined;
  if (field && bodyName !== undefined) {
    const nameHeader = headerOf(req, 'mcp-name');
    if (nameHeader === undefined) {
      return refused(
        failures.headerMismatch('(missing)', `the body carries params.${field}="${bodyName}" but the required Mcp-Name header is absent`),
      );
    }
    const decoded = decodeHeaderValue(nameHeader);
    if (decoded === undefined)
      return refused(failures.headerMismatch(nameHeader, 'the Mcp-Name header carries an invalid Base64 sentinel value'));
    if (decoded !== bodyName) {
      return refused(
        failures.headerMismatch(nameHeader, `the body carries params.${field}="${bodyName}" but the Mcp-Name header names "${decoded}"`),
      );
    }
  }
  const clientInfo = meta[META.clientInfo];
  const logLevel = meta[META.logLevel];
  return {
    era: 'modern',
    request: message as JSONRPCRequest,
    envelope: {
      protocolVersion: version,
      capabilities: capabilities as ClientCapabilities,
      ...(isObject(clientInfo) && typeof clientInfo.name === 'string' ? { clientInfo: clientInfo as unknown as Implementation } : {}),
      ...(typeof logLevel === 'string' ? { logLevel } : {}),
    },
  };
}

/** The `_meta` keys that say what an envelope says (for a request the gateway makes on a modern client's behalf). */
export function envelopeMeta(envelope: Envelope): Params {
  return {
    [META.protocolVersion]: envelope.protocolVersion,
    [META.clientCapabilities]: envelope.capabilities,
    ...(envelope.clientInfo ? { [META.clientInfo]: envelope.clientInfo } : {}),
  };
}

/**
 * The request with a modern envelope: as it is when it has one, else with one saying what `client` said of itself
 * (the parameters of its session: a modern request's envelope, or a group's client's).
 */
export function withEnvelope(
  request: JSONRPCRequest,
  client: { capabilities?: ClientCapabilities; clientInfo?: Implementation },
): JSONRPCRequest {
  if (claims(request.params)) return request;
  const params: Params = isObject(request.params) ? request.params : {};
  const meta = isObject(params._meta) ? params._meta : {};
  const envelope = envelopeMeta({
    protocolVersion: MODERN_VERSIONS[0] as string,
    capabilities: client.capabilities ?? {},
    clientInfo: client.clientInfo,
  });
  return { ...request, params: { ...params, _meta: { ...meta, ...envelope } } };
}

/** The id a refusal answers under: the request's, when the POST is one request (JSON-RPC keeps ids paired). */
export function refusedId(messages: JSONRPCMessage[], batch: boolean): RequestId | null {
  const [message] = messages;
  return !batch && message && 'method' in message && 'id' in message ? message.id : null;
}

const methodMismatch = (header: string, method: string): ProxyFailure =>
  failures.headerMismatch(header, `the body names method ${method} but the Mcp-Method header names ${header}`);

/** Whether a GET or DELETE comes from a modern client: no session, and a modern version header. */
export const isModernBodyless = (req: IncomingMessage): boolean =>
  !sessionIdOf(req) && isModernVersion(headerOf(req, 'mcp-protocol-version'));

/**
 * The request as a legacy upstream hears it: without the envelope keys (the upstream learnt the
 * client's capabilities from the session's initialize) and without the retry members.
 */
export function upstreamRequest(request: JSONRPCRequest): JSONRPCRequest {
  if (!isObject(request.params)) return request;
  const { inputResponses: _responses, requestState: _state, _meta, ...rest } = request.params as Params;
  const params: Params = { ...rest };
  if (isObject(_meta)) {
    const kept = Object.fromEntries(
      Object.entries(_meta).filter(
        ([k]) => k !== META.protocolVersion && k !== META.clientInfo && k !== META.clientCapabilities && k !== META.logLevel,
      ),
    );
    if (Object.keys(kept).length > 0) params._meta = kept;
  }
  return { ...request, params };
}

/**
 * The prefix of the `requestState` this gateway issues for a call it parks (modern.ts). A state without it
 * belongs to an upstream that speaks the revision itself and goes to it untouched (docs/decisions/0039).
 */
export const PARKED_STATE_PREFIX = 'toolport.';

/** A retry carrying a `requestState` the gateway did not issue. */
export function carriesForeignState(request: JSONRPCRequest): boolean {
  const state = isObject(request.params) ? request.params.requestState : undefined;
  return state !== undefined && !(typeof state === 'string' && state.startsWith(PARKED_STATE_PREFIX));
}

/** Results a modern client may cache: each carries `ttlMs` and `cacheScope`. */
const CACHEABLE = new Set([
  'tools/list',
  'prompts/list',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'server/discover',
]);

/**
 * How long a modern client may reuse a list or a read: not at all. What a list holds depends on the
 * service's tool overrides, the user's access and the upstream, which change without notice to a client
 * that is not listening; a client asks again as a legacy one does.
 */
export const CACHE_TTL_MS = 0;

export const SERVER_INFO: Implementation = { name: 'toolport', version: VERSION };

/**
 * A legacy answer in modern shape, under the id of the HTTP request it answers: `resultType`,
 * `ttlMs` and `cacheScope` (lists differ per user: `private`), and the server's name in `_meta`.
 */
export function modernAnswer(method: string, id: RequestId, message: JSONRPCResponse | JSONRPCError): string {
  if (!('result' in message)) return JSON.stringify({ ...message, id });
  const result: Params = { ...(message.result as Params) };
  if (typeof result.resultType !== 'string') result.resultType = 'complete';
  if (CACHEABLE.has(method) && result.resultType === 'complete') {
    if (typeof result.ttlMs !== 'number') result.ttlMs = CACHE_TTL_MS;
    if (result.cacheScope !== 'public' && result.cacheScope !== 'private') result.cacheScope = 'private';
  }
  const meta = isObject(result._meta) ? result._meta : {};
  result._meta = { ...meta, [META.serverInfo]: meta[META.serverInfo] ?? SERVER_INFO };
  return JSON.stringify({ jsonrpc: '2.0', id, result });
}

/** Server capabilities the 2026-07-28 revision knows (the rest, such as tasks, is left out). */
const MODERN_CAPABILITIES = ['experimental', 'logging', 'completions', 'prompts', 'resources', 'tools', 'extensions'];

/** `server/discover`'s result from an initialize result (the upstream's, or a group's own). */
export function discoverResult(init: Params): Params {
  const capabilities = isObject(init.capabilities) ? init.capabilities : {};
  return {
    supportedVersions: [...MODERN_VERSIONS],
    capabilities: Object.fromEntries(Object.entries(capabilities).filter(([k]) => MODERN_CAPABILITIES.includes(k))),
    ...(typeof init.instructions === 'string' ? { instructions: init.instructions } : {}),
  };
}

/** The embedded form of a server-to-client request: its method and params, without JSON-RPC framing. */
export function inputRequest(message: JSONRPCRequest): { method: string; params?: Params } {
  if (!isObject(message.params)) return { method: message.method };
  const { _meta: _ignored, ...params } = message.params as Params;
  return { method: message.method, params };
}

/** The methods of the legacy era that the modern one removed: answered -32601 on a modern request. */
export const REMOVED_METHODS = new Set(['initialize', 'ping', 'logging/setLevel', 'resources/subscribe', 'resources/unsubscribe']);
