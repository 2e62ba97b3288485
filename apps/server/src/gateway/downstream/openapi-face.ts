import type { ServerResponse } from 'node:http';
import { type JSONRPCError, type JSONRPCRequest, type JSONRPCResponse, LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { publicBase } from '../../http/public-base.js';
import { type Locale, translate } from '../../i18n/index.js';
import type { ConfigEvents } from '../../infra/events.js';
import type { ServiceSpec } from '../catalog.js';
import type { OptionsReader } from '../options-reader.js';
import type { AbuseGuard } from './abuse.js';
import { CallScope } from './call-scope.js';
import type { Dispatcher } from './dispatcher.js';
import { BODY_LIMIT, bodyTimeout, isJsonContentType, localeOf, onClientGone, readBody } from './http-io.js';
import { deeperThan, MAX_DEPTH } from './messages.js';
import { buildDocument, callAnswer, errorBody, type FaceAnswer, failure, type ListedTool } from './openapi-document.js';
import type { OriginPolicy } from './origin-policy.js';
import type { ProxyCaller } from './proxy-auth.js';
import { rawRoute } from './routes.js';
import { failures, type ProxyFailure } from './rpc-errors.js';
import { DownstreamSession } from './session.js';
import type { SessionRegistry } from './session-registry.js';
import { newNonce } from './session-token.js';

type Answer = JSONRPCResponse | JSONRPCError;
type Kind = 'proxy' | 'group';

/** How long a caller's tool list is reused to check a call's tool name (every configuration change drops it at once). */
export const TOOL_LIST_CACHE_MS = 10_000;
const MAX_CACHED = 10_000;
/** Pages of a tools/list read at most (as the 2026-07-28 path reads them: modern.ts). */
const MAX_PAGES = 20;

/** One of the MCP faces the OpenAPI face stands beside: its authentication and its dispatcher. */
export interface FaceOf {
  resolve(req: FastifyRequest, name: string): Promise<ProxyCaller | ProxyFailure>;
  dispatcher: Pick<Dispatcher, 'dispatch'>;
  /** A group's word on a tool name the caller's list does not hold: a member they may not use (group-face.ts). */
  refusalOf?(userId: number, stand: ServiceSpec, name: string): Promise<ProxyFailure | undefined>;
}

export interface OpenApiFaceDeps {
  origins: OriginPolicy;
  options: Pick<OptionsReader, 'get'>;
  sessions: Pick<SessionRegistry, 'remove'>;
  abuse: Pick<AbuseGuard, 'limits' | 'refused'>;
  events: ConfigEvents;
  logger: Logger;
  faces: Record<Kind, FaceOf>;
}

type FaceRequest = FastifyRequest<{ Params: { name: string; tool?: string } }>;

/** A failure of the MCP faces in the words of this one: localised, in the `{detail: {code, message}}` body. */
function fromProxyFailure(f: ProxyFailure, locale: Locale): FaceAnswer {
  const reason = f.reason;
  const body = reason
    ? errorBody(reason.name, translate(locale, `openapi.${reason.name}`, reason.params))
    : // Already in the caller's words (the abuse limits') or the database away.
      errorBody(f.status === 429 ? 'rate_limited' : f.status >= 500 ? 'unavailable' : 'error', f.message);
  return { status: f.status, body, ...(f.headers ? { headers: f.headers } : {}) };
}

function send(res: ServerResponse, answer: FaceAnswer): void {
  if (res.headersSent) return void res.end();
  const json = JSON.stringify(answer.body);
  res.writeHead(answer.status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(json),
    'cache-control': 'no-store',
    ...answer.headers,
  });
  res.end(json);
}

/**
 * The OpenAPI face of every service and group (issue 30, docs/decisions/0053-openapi-face.md):
 * `GET /openapi/{proxy|group}/{name}/openapi.json` is the OpenAPI 3.1 document of the tools the caller
 * sees on that face's MCP endpoint, and `POST /openapi/{proxy|group}/{name}/{tool}` calls one. Nothing
 * here decides who may call what or counts anything: the caller is found by the MCP face's own
 * authentication, and each list and call is one request on a session that lives as long as it (as a
 * 2026-07-28 request does: modern.ts), dispatched by that face's Dispatcher or GroupFace. Overrides,
 * access, switches, the in-flight cap, daily limits and metering therefore apply exactly as over MCP.
 */
export class OpenApiFace {
  /** Each caller's tool list per face, for checking a call's tool name without listing upstream on every call. */
  private readonly lists = new Map<string, { at: number; tools: Promise<ListedTool[] | FaceAnswer> }>();
  private ids = 0;

  constructor(private readonly deps: OpenApiFaceDeps) {
    deps.events.on((e) => {
      // Overrides, access, membership, switches, a service's settings: any of them may change a list.
      if (e.type !== 'option.changed') this.lists.clear();
    });
  }

  async document(kind: Kind, req: FaceRequest, res: ServerResponse): Promise<void> {
    const locale = localeOf(req.raw);
    const caller = await this.deps.faces[kind].resolve(req, req.params.name);
    if ('status' in caller) return send(res, fromProxyFailure(caller, locale));
    const tools = await this.list(kind, caller, locale, true);
    if (!Array.isArray(tools)) return send(res, tools);
    const base = publicBase(req, this.deps.options.get('ServerAddress'));
    const service = caller.service;
    const document = buildDocument({
      name: service.name,
      title: service.displayName || service.name,
      ...(service.description ? { description: service.description } : {}),
      kind,
      serverUrl: `${base}/openapi/${kind}/${encodeURIComponent(service.name)}`,
      tools,
    });
    send(res, { status: 200, body: document });
  }

  async call(kind: Kind, req: FaceRequest, res: ServerResponse): Promise<void> {
    const locale = localeOf(req.raw);
    const face = this.deps.faces[kind];
    const caller = await face.resolve(req, req.params.name);
    if ('status' in caller) return send(res, fromProxyFailure(caller, locale));
    const args = await this.readArguments(req, locale);
    if ('status' in args) return send(res, args);
    const name = req.params.tool ?? '';
    const tools = await this.list(kind, caller, locale, false);
    if (!Array.isArray(tools)) return send(res, tools);
    if (!tools.some((t) => t.name === name)) {
      const refused = await face.refusalOf?.(caller.user.id, caller.service, name);
      if (refused) return send(res, fromProxyFailure(refused, locale));
      return send(res, failure(404, 'unknown_tool', locale, 'openapi.unknown_tool', { tool: name.slice(0, 200) }));
    }
    const request: JSONRPCRequest = { jsonrpc: '2.0', id: this.nextId(), method: 'tools/call', params: { name, arguments: args.value } };
    const session = this.session(caller);
    const scope = new CallScope(session);
    // A client that leaves before its answer cancels the call upstream, as over MCP; nothing is then waited for
    // (a call cancelled before it went upstream is never answered). One that left while its call was being read and
    // checked has left already: the dispatcher then never sends it.
    const left = new Promise<undefined>((resolve) =>
      onClientGone(res, () => {
        if (res.writableFinished) return;
        scope.leave('client disconnected');
        resolve(undefined);
      }),
    );
    try {
      // Weighed as the same call over MCP would be: its JSON-RPC request is the metering record's bytes in.
      const bytes = Buffer.byteLength(JSON.stringify(request));
      const answered = await Promise.race([this.ask(face, session, caller.service, request, scope, locale, bytes), left]);
      if (answered) send(res, callAnswer(answered.message, answered.status, locale));
    } finally {
      this.deps.sessions.remove(session, 'openapi call answered');
    }
  }

  /** The body: a JSON object of arguments (an empty body is no arguments), within the MCP faces' size and depth bounds. */
  private async readArguments(req: FaceRequest, locale: Locale): Promise<{ value: Record<string, unknown> } | FaceAnswer> {
    const deadlineMs = Math.floor(this.deps.abuse.limits.requestTimeoutMs / 2);
    const body = await readBody(req.raw, BODY_LIMIT, deadlineMs);
    if (!body.ok) {
      if (body.reason === 'too_large') return fromProxyFailure(failures.tooLarge(BODY_LIMIT), locale);
      if (body.reason === 'timeout') this.deps.abuse.refused('body_timeout', req.ip, { ip: req.ip, deadlineMs });
      return fromProxyFailure(bodyTimeout(req.raw, deadlineMs), locale);
    }
    if (body.text.trim() === '') return { value: {} };
    if (!isJsonContentType(req.headers['content-type'])) return fromProxyFailure(failures.unsupportedMediaType(), locale);
    let value: unknown;
    try {
      value = JSON.parse(body.text);
    } catch {
      return fromProxyFailure(failures.invalidJson(), locale);
    }
    if (deeperThan(value, MAX_DEPTH)) return fromProxyFailure(failures.tooDeep(MAX_DEPTH), locale);
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      return failure(400, 'not_an_object', locale, 'openapi.not_an_object');
    return { value: value as Record<string, unknown> };
  }

  /**
   * The caller's tools on this face, every page: read afresh for a document, reused for a few seconds to
   * check calls (calls arriving together wait for one listing).
   */
  private list(kind: Kind, caller: ProxyCaller, locale: Locale, fresh: boolean): Promise<ListedTool[] | FaceAnswer> {
    const key = `${kind}:${caller.service.id}:${caller.user.id}`;
    const now = Date.now();
    const hit = this.lists.get(key);
    if (!fresh && hit && now - hit.at < TOOL_LIST_CACHE_MS) return hit.tools;
    const tools = this.readList(kind, caller, locale);
    if (this.lists.size >= MAX_CACHED) this.lists.clear();
    this.lists.set(key, { at: now, tools });
    // A failed listing is not kept: the next call asks again.
    void tools.then((t) => {
      if (!Array.isArray(t) && this.lists.get(key)?.tools === tools) this.lists.delete(key);
    });
    return tools;
  }

  private async readList(kind: Kind, caller: ProxyCaller, locale: Locale): Promise<ListedTool[] | FaceAnswer> {
    const face = this.deps.faces[kind];
    const session = this.session(caller);
    const tools: ListedTool[] = [];
    try {
      let cursor: string | undefined;
      for (let page = 0; page < MAX_PAGES; page++) {
        const request: JSONRPCRequest = { jsonrpc: '2.0', id: this.nextId(), method: 'tools/list', params: cursor ? { cursor } : {} };
        const { message, status } = await this.ask(face, session, caller.service, request, new CallScope(session), locale, 0);
        if ('error' in message) {
          const answer = callAnswer(message, status, locale);
          return answer.status >= 500
            ? failure(answer.status, 'upstream_error', locale, 'openapi.list_failed', { message: message.error.message })
            : answer;
        }
        const result = message.result as { tools?: unknown; nextCursor?: unknown };
        if (Array.isArray(result.tools)) {
          for (const t of result.tools)
            if (typeof t === 'object' && t !== null && typeof (t as ListedTool).name === 'string') tools.push(t as ListedTool);
        }
        cursor = typeof result.nextCursor === 'string' ? result.nextCursor : undefined;
        if (!cursor) break;
      }
      return tools;
    } finally {
      this.deps.sessions.remove(session, 'openapi tools listed');
    }
  }

  /** One request through the face's dispatcher, and its answer (with the HTTP status the dispatcher asked for, if any). */
  private ask(
    face: FaceOf,
    session: DownstreamSession,
    service: ServiceSpec,
    request: JSONRPCRequest,
    scope: CallScope,
    locale: Locale,
    bodyBytes: number,
  ): Promise<{ message: Answer; status: number | undefined }> {
    return new Promise((resolve, reject) => {
      face.dispatcher
        .dispatch(
          session,
          service,
          [request],
          { notification() {}, response: (json, status) => resolve({ message: JSON.parse(json) as Answer, status }), locale },
          scope,
          bodyBytes,
        )
        .catch(reject);
    });
  }

  private nextId(): string {
    this.ids += 1;
    return `openapi-${this.ids}`;
  }

  /** The session one request lives on: no stream, no client capabilities (it cannot be asked anything back). */
  private session(caller: ProxyCaller): DownstreamSession {
    const nonce = newNonce();
    return new DownstreamSession({
      key: `openapi-${nonce}`,
      peerId: nonce,
      userId: caller.user.id,
      serviceId: caller.service.id,
      protocolVersion: LATEST_PROTOCOL_VERSION,
      issuedAt: Date.now(),
      // Stateless like a 2026-07-28 request: an isolated service serves it on the user's own link (pool.ts).
      transport: 'modern',
      initParams: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'toolport-openapi', version: '1' } },
      revocationCheckedAt: Date.now(),
    });
  }
}

/** The routes of the OpenAPI face, beside /proxy and /group (registered on the root app like them). */
export async function registerOpenApiRoutes(app: FastifyInstance, face: OpenApiFace, deps: OpenApiFaceDeps): Promise<void> {
  // The gateway's own failures in the face's words: the database away (503, retry) or anything else (500, no details).
  const raw = rawRoute(deps.origins, deps.logger, (res, f, req) => {
    const locale = localeOf(req.raw);
    const answer =
      f.status === 503
        ? failure(503, 'unavailable', locale, 'openapi.database_away')
        : failure(500, 'internal', locale, 'openapi.internal');
    send(res, f.headers ? { ...answer, headers: f.headers } : answer);
  });
  const notAllowed = (allow: string) =>
    raw<FaceRequest>(async (req, res) => send(res, fromProxyFailure(failures.methodNotAllowed(allow), localeOf(req.raw))));
  const options = (allow: string) =>
    raw<FaceRequest>(async (req, res) => {
      if (!deps.origins.preflight(req, res, allow)) send(res, fromProxyFailure(failures.methodNotAllowed(allow), localeOf(req.raw)));
    });
  await app.register(async (scope) => {
    // The body is read by the handler after authentication, within the MCP faces' bounds.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_req, _payload, done) => done(null, undefined));
    const config = { auth: 'public' as const };
    for (const kind of ['proxy', 'group'] as const) {
      const prefix = `/openapi/${kind}/:name`;
      scope.get(
        `${prefix}/openapi.json`,
        { config, exposeHeadRoute: false },
        raw<FaceRequest>((req, res) => face.document(kind, req, res)),
      );
      scope.options(`${prefix}/openapi.json`, { config }, options('GET'));
      scope.post(
        `${prefix}/:tool`,
        { config },
        raw<FaceRequest>((req, res) => face.call(kind, req, res)),
      );
      scope.get(`${prefix}/:tool`, { config, exposeHeadRoute: false }, notAllowed('POST'));
      scope.options(`${prefix}/:tool`, { config }, options('POST'));
    }
  });
}
