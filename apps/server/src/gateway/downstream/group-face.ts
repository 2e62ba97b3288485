import { UriTemplate } from '@modelcontextprotocol/sdk/shared/uriTemplate.js';
import {
  type InitializeResult,
  type JSONRPCError,
  type JSONRPCMessage,
  type JSONRPCNotification,
  type JSONRPCRequest,
  type JSONRPCResponse,
  LATEST_PROTOCOL_VERSION,
  type RequestId,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import type { Locale } from '../../i18n/index.js';
import type { ConfigEvents } from '../../infra/events.js';
import type { GatewayUser, ServiceCatalog, ServiceSpec } from '../catalog.js';
import type { GroupDirectory, GroupSpec, ToolOverrides, ToolPolicy } from '../tool-policy.js';
import type { CallScope } from './call-scope.js';
import { type DispatchDeps, type Dispatcher, isNotification, isRequest, isResponse } from './dispatcher.js';
import {
  CALL_TOOL,
  DiscoverySearch,
  discoveryTools,
  SEARCH_TOOLS,
  type ServiceLine,
  searchRequest,
  serviceLine,
  unwrapCallTool,
} from './group-discovery.js';
import type { SemanticRanker } from './hybrid-search.js';
import type { ReplyTarget } from './reply-target.js';
import { failures, type ProxyFailure, RpcCode, rpcErrorJson } from './rpc-errors.js';
import { DownstreamSession } from './session.js';

/** How long tools/list waits for a member before answering from its last known list. */
export const MEMBER_LIST_BOUND_MS = 3000;
/**
 * How long it waits for a member it has no list of yet (for this user): there is nothing to answer with, and a
 * client that lists once would not see the member's tools until the next change. A member that starts slowly (a
 * first process start, the era check of a 2026-07-28 request) is waited for; one that passes even this bound is
 * answered empty once, and with the shorter bound from then on.
 */
export const FIRST_MEMBER_LIST_BOUND_MS = 20_000;
const CACHE_MS = 3000;
const MAX_PAGES = 20;
/**
 * How long a merged list is answered from the cache at most. Every change the gateway hears of drops
 * it at once (a member's list_changed, membership, overrides, access, switches); this bounds what
 * it cannot hear: a member's list that changed while no group session held a session on it.
 */
export const LIST_CACHE_MS = 30_000;
const MAX_CACHED_LISTS = 10_000;
/** The longest URI matched against members' resource templates (templateMatches). */
export const MAX_TEMPLATE_URI = 2048;

/** Group sessions carry the group as a negative service id: they never collide with a service's. */
export const groupStandInId = (groupId: number): number => -groupId;

type Kind = 'tools' | 'prompts' | 'resources' | 'resourceTemplates';
const LIST_METHODS: Record<string, Kind> = {
  'tools/list': 'tools',
  'prompts/list': 'prompts',
  'resources/list': 'resources',
  'resources/templates/list': 'resourceTemplates',
};
type Item = Record<string, unknown>;
/** Whether a member takes a user's calls now, and if not, why (the words of the refusal follow it). */
type MemberState = 'on' | 'no-access' | 'disabled' | 'switched-off';

/**
 * One member's side of a group session: a session of its own towards the member's link (shared,
 * per-user or isolated, exactly as /proxy would pick), whose server notifications reach the group's
 * client. It never enters the registry: the group session holds it and ends it.
 */
class MemberSession extends DownstreamSession {
  /** Ids of the client's requests sent to this member and not answered yet: where a cancellation goes. */
  readonly sent = new Set<RequestId>();

  constructor(
    readonly group: DownstreamSession,
    serviceId: number,
    /** A member's own list changed: the group's cached merged lists are stale. */
    private readonly listChanged: (serviceId: number) => void,
  ) {
    super({
      key: `${group.key}#${serviceId}`,
      peerId: `${group.id}:${serviceId}`,
      userId: group.userId,
      serviceId,
      protocolVersion: group.protocolVersion,
      issuedAt: group.issuedAt,
      transport: group.transport,
      // A group's listen stream hears its members' list changes through their legacy links.
      legacyUpstream: group.era === undefined,
      // A group's listen stream reaches each member where the user's modern requests to it go (link-api.ts).
      ...(group.modernListen ? { modernListen: true } : {}),
      initParams: group.initParams,
      revocationCheckedAt: Date.now(),
      // Each member numbers its own requests to the client: the member in the id keeps them apart.
      requestPrefix: `toolport-${group.id.slice(0, 8)}-m${serviceId}`,
    });
    this.outgoing.replica = group.outgoing.replica;
  }

  override notify(message: JSONRPCNotification): void {
    if (message.method.endsWith('/list_changed')) this.listChanged(this.serviceId);
    this.group.notify(message);
  }

  /** A member's request tied to no call in flight goes on the group session's own stream. */
  override request(message: JSONRPCRequest, timeoutMs: number, signal?: AbortSignal): Promise<JSONRPCResponse | JSONRPCError> {
    return this.outgoing.send(
      message,
      (json) => {
        if (!this.group.stream?.open) return false;
        this.group.stream.message(json);
        return true;
      },
      timeoutMs,
      signal,
    );
  }
}

/**
 * The group face (`/group/{name}/mcp|sse`, issue 17): the proxy's transports, sessions, limits and
 * authentication serve it unchanged (routes.ts builds them with this in place of the Dispatcher);
 * this answers initialize itself, merges the members' lists under `{service}{separator}{name}`, and
 * hands each call to the proxy's Dispatcher on the member's session, so it is metered, limited and
 * overridden as the same call through /proxy. In discovery mode (decision 0033) it lists search_tools
 * and call_tool instead (group-discovery.ts): search ranks the merged list, call_tool is unwrapped
 * into the direct tools/call path below.
 */
export class GroupFace {
  private readonly groups = new Map<string, { at: number; value: GroupSpec | undefined }>();
  private readonly specs = new Map<number, { at: number; value: ServiceSpec | undefined }>();
  /** Last known list of each member and kind: what tools/list answers from when a member is slow or down. */
  private readonly lastKnown = new Map<string, Item[]>();
  private readonly members = new WeakMap<DownstreamSession, Map<number, MemberSession>>();
  private readonly standIns = new Map<number, GroupSpec>();
  /**
   * Merged lists per group, user and kind (`${groupId}:${userId}:${kind}`): tools/list on a group is
   * answered from here, not by a fan-out to every member. Only lists every member answered are kept.
   */
  private readonly lists = new Map<string, { at: number; items: Item[] }>();
  /** Counts the drops: a list whose fan-out saw one start after it began is not kept. */
  private generation = 0;
  /** Each user's personal switches as their last authentication read them (issue 14). */
  private readonly switchedOff = new Map<number, { at: number; value: ReadonlySet<number> }>();
  private listIds = 0;
  /** Members' resource templates, parsed once (null: not a template the matcher accepts). */
  private readonly templates = new Map<string, UriTemplate | null>();
  /** Discovery mode's ranker: one lexical index per merged tool list, fused with embeddings when set. */
  private readonly search: DiscoverySearch;

  constructor(
    private readonly deps: {
      directory: GroupDirectory;
      /**
       * Who may use each member: the service's own access list holds inside every group (decision 0040), asked
       * through the port /proxy asks. Without it (unit tests) every member is open.
       */
      policy?: Pick<ToolPolicy, 'mayUseService'>;
      /** A user's role, for that question (admins always may). */
      users: { byId(userId: number): Promise<{ role: number } | null> };
      catalog: Pick<ServiceCatalog, 'byId' | 'switchedOffBy'>;
      inner: Pick<Dispatcher, 'dispatch' | 'attach'>;
      /** The pool's release: a member session's link lets go of it when the group session ends. */
      release: (serviceId: number, session: DownstreamSession) => void;
      tools?: { forService(service: ServiceSpec): Promise<ToolOverrides> };
      events: ConfigEvents;
      logger: Logger;
      /** Several replicas: a client's answer to a request another replica sent (dispatcher.ts). */
      answers?: DispatchDeps['answers'];
      /** Semantic ranking for discovery search (decision 0046); without it search is lexical. */
      semantic?: SemanticRanker;
    },
  ) {
    this.search = new DiscoverySearch(deps.semantic);
    deps.events.on((e) => {
      if (e.type === 'service.changed' || e.type === 'service.removed') this.specs.delete(e.serviceId);
      if (e.type === 'access.changed') this.groups.clear();
      if (e.type === 'user.changed') {
        // A personal switch (or the user's variables) changed: their members and lists are read again.
        this.switchedOff.delete(e.userId);
        this.dropLists((key) => key.split(':')[1] === String(e.userId));
      } else if (e.type !== 'option.changed') {
        // Membership, a member's settings, overrides or access changed: every merged list may be stale.
        this.dropLists();
      }
    });
  }

  /** A group's settings changed: read again on the next request. */
  forget(): void {
    this.groups.clear();
    this.dropLists();
  }

  /** Drops the cached merged lists (those `which` picks, else all). */
  private dropLists(which?: (key: string) => boolean): void {
    this.generation += 1;
    if (!which) {
      this.lists.clear();
      return;
    }
    for (const key of [...this.lists.keys()]) if (which(key)) this.lists.delete(key);
  }

  /** How many merged lists are cached now (tests and the benchmark look). */
  get cachedLists(): number {
    return this.lists.size;
  }

  /** The caller's group as a stand-in service (what the proxy's authentication hands on), or the failure. */
  async stand(user: GatewayUser, name: string): Promise<ServiceSpec | ProxyFailure> {
    const group = await this.group(name);
    if (!group) return failures.unknownGroup(name);
    if (!(await this.deps.directory.mayUseGroup(user, group.id))) return failures.noAccess(name);
    this.standIns.set(group.id, group);
    // The switches as this request's authentication read them: fresh after every 'user.changed'.
    this.switchedOff.set(user.id, { at: Date.now(), value: user.switchedOff });
    return standInSpec(group);
  }

  /**
   * The stand-in of a group this replica has served (a legacy session's stream was opened here): what a
   * POST for that session forwarded by another replica, which checked the caller, is dispatched with.
   */
  standInOf(standInId: number): ServiceSpec | undefined {
    const group = this.standIns.get(-standInId);
    return group && standInSpec(group);
  }

  private async group(name: string): Promise<GroupSpec | undefined> {
    if (name.includes('\u0000')) return undefined;
    const hit = this.groups.get(name);
    if (hit && Date.now() - hit.at < CACHE_MS) return hit.value;
    const value = await this.deps.directory.byName(name);
    if (this.groups.size > 10_000) this.groups.clear();
    this.groups.set(name, { at: Date.now(), value });
    return value;
  }

  private async spec(serviceId: number): Promise<ServiceSpec | undefined> {
    const hit = this.specs.get(serviceId);
    if (hit && Date.now() - hit.at < CACHE_MS) return hit.value;
    const value = await this.deps.catalog.byId(serviceId);
    this.specs.set(serviceId, { at: Date.now(), value });
    return value;
  }

  /** The group a session belongs to, as its last request authenticated it. */
  private groupOf(stand: ServiceSpec): GroupSpec | undefined {
    return this.standIns.get(-stand.id);
  }

  private member(session: DownstreamSession, serviceId: number): MemberSession {
    let mine = this.members.get(session);
    if (!mine) {
      const created = new Map<number, MemberSession>();
      mine = created;
      this.members.set(session, created);
      session.onRemoved.push(() => {
        for (const m of created.values()) {
          m.closed = true;
          m.closedReason = session.closedReason;
          m.endRequests(session.closedReason);
          this.deps.release(m.serviceId, m);
        }
        created.clear();
      });
    }
    let m = mine.get(serviceId);
    if (!m) {
      m = new MemberSession(session, serviceId, () => this.dropLists());
      mine.set(serviceId, m);
    }
    return m;
  }

  /** The services a user switched off for themselves: as their last request authenticated, else read. */
  private async offFor(userId: number): Promise<ReadonlySet<number>> {
    const hit = this.switchedOff.get(userId);
    if (hit && Date.now() - hit.at < CACHE_MS) return hit.value;
    const value = await this.deps.catalog.switchedOffBy(userId);
    if (this.switchedOff.size > 10_000) this.switchedOff.clear();
    this.switchedOff.set(userId, { at: Date.now(), value });
    return value;
  }

  /**
   * Whether a member takes this user's calls now: the user may use the service (its access list, as on
   * /proxy: decision 0040), it is enabled, and the user did not switch it off for themselves (issue 14). A
   * member that does not is hidden from that user's lists and refused by name, in every group and both modes.
   */
  private async memberState(userId: number, serviceId: number, spec: ServiceSpec | undefined): Promise<MemberState> {
    if (!(await this.mayUse(userId, serviceId))) return 'no-access';
    if (spec?.enabled !== true) return 'disabled';
    return (await this.offFor(userId)).has(serviceId) ? 'switched-off' : 'on';
  }

  private async mayUse(userId: number, serviceId: number): Promise<boolean> {
    if (!this.deps.policy) return true;
    const user = await this.deps.users.byId(userId);
    return user !== null && (await this.deps.policy.mayUseService({ id: userId, role: user.role }, serviceId));
  }

  async initialize(session: DownstreamSession, stand: ServiceSpec, request: JSONRPCRequest, _locale: Locale = 'en') {
    const group = this.groupOf(stand);
    if (session.transport === 'legacy') {
      // Streamable HTTP negotiated before the session existed; the legacy transport's initialize comes as a message.
      const requested = (request.params as { protocolVersion?: unknown } | undefined)?.protocolVersion;
      session.protocolVersion =
        typeof requested === 'string' && SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : LATEST_PROTOCOL_VERSION;
    }
    const result: InitializeResult = {
      protocolVersion: session.protocolVersion,
      capabilities: {
        tools: { listChanged: true },
        prompts: { listChanged: true },
        resources: { listChanged: true, subscribe: true },
        logging: {},
      },
      serverInfo: { name: `toolport-group-${stand.name}`, title: group?.displayName || stand.name, version: '1.0.0' },
    };
    session.initParams = request.params as DownstreamSession['initParams'];
    return { json: JSON.stringify({ jsonrpc: '2.0', id: request.id, result }), ok: true };
  }

  /** A 2026-07-28 listen stream on the group: every enabled member's list changes reach it (modern.ts). */
  async attach(session: DownstreamSession, stand: ServiceSpec): Promise<void> {
    const group = this.groupOf(stand);
    if (!group) throw new Error(`Group not found: ${stand.name}`);
    for (const member of group.members) {
      const spec = await this.spec(member.serviceId);
      if ((await this.memberState(session.userId, member.serviceId, spec)) !== 'on' || !spec) continue;
      await this.deps.inner.attach(this.member(session, spec.id), spec).catch((err: unknown) => {
        this.deps.logger.debug({ err, group: group.name, service: spec.name }, 'group member not listening');
      });
    }
  }

  async dispatch(
    session: DownstreamSession,
    stand: ServiceSpec,
    messages: JSONRPCMessage[],
    target: ReplyTarget,
    scope: CallScope,
    bodyBytes: number,
  ): Promise<void> {
    session.touch();
    const group = this.groupOf(stand);
    if (!group) {
      for (const r of messages.filter(isRequest))
        target.response(rpcErrorJson(r.id, RpcCode.ServerError, `Group not found: ${stand.name}`));
      return;
    }
    // The client's answers to the members' server-to-client requests: the member that asked takes it.
    for (const answer of messages.filter(isResponse)) if (!this.takeAnswer(session, answer)) this.deps.answers?.elsewhere(session, answer);
    for (const n of messages.filter(isNotification)) await this.notification(session, group, n);
    const requests = messages.filter(isRequest);
    await Promise.all(
      requests.map((r) =>
        r.method === 'initialize'
          ? this.initialize(session, stand, r).then(({ json }) => target.response(json))
          : this.request(session, group, r, target, scope, requests.length === 1 ? bodyBytes : undefined),
      ),
    );
  }

  /** A client's answer to a member's server-to-client request: true when a member of this session asked it. */
  takeAnswer(session: DownstreamSession, answer: JSONRPCResponse | JSONRPCError): boolean {
    for (const m of this.members.get(session)?.values() ?? []) if (m.outgoing.answer(answer)) return true;
    return false;
  }

  /** Cancellations go to the member the request went to; initialized and the rest end here. */
  private async notification(session: DownstreamSession, group: GroupSpec, n: JSONRPCNotification): Promise<void> {
    if (n.method !== 'notifications/cancelled') return;
    const requestId = (n.params as { requestId?: RequestId } | undefined)?.requestId;
    for (const m of this.members.get(session)?.values() ?? []) {
      if (!m.sent.has(requestId as RequestId)) continue;
      const spec = await this.spec(m.serviceId);
      if (spec && group.members.some((x) => x.serviceId === spec.id)) await this.deps.inner.dispatch(m, spec, [n], NOWHERE, m.calls, 0);
    }
  }

  private async request(
    session: DownstreamSession,
    group: GroupSpec,
    request: JSONRPCRequest,
    target: ReplyTarget,
    scope: CallScope,
    bytes: number | undefined,
  ): Promise<void> {
    const answer = (result: unknown) => target.response(JSON.stringify({ jsonrpc: '2.0', id: request.id, result }));
    const fail = (code: number, message: string) => target.response(rpcErrorJson(request.id, code, message));
    if (request.method === 'ping' || request.method === 'logging/setLevel') return answer({});
    if (group.mode === 'discovery' && request.method === 'tools/list') return answer({ tools: discoveryTools(group.displayName) });
    const kind = LIST_METHODS[request.method];
    if (kind) return answer({ [kind]: await this.merged(session, group, kind, scope) });
    let params = (request.params ?? {}) as Record<string, unknown>;
    if (group.mode === 'discovery' && request.method === 'tools/call') {
      // search_tools answers here; call_tool becomes the tools/call of the tool it names, below.
      if (params.name === SEARCH_TOOLS) {
        const members = await this.serviceLines(session.userId, group);
        const asked = searchRequest(
          params.arguments,
          members.map((m) => m.name),
          target.locale,
        );
        if ('refused' in asked) return answer(asked.refused);
        const tools = (await this.merged(session, group, 'tools', scope)) as (Item & { name: string })[];
        const context = { ...asked, separator: group.separator, members, locale: target.locale ?? 'en' };
        // The answer comes serialised (group-discovery.ts: searchAnswerJson).
        const result = await this.search.answer(tools, context);
        return target.response(`{"jsonrpc":"2.0","id":${JSON.stringify(request.id)},"result":${result}}`);
      }
      if (params.name !== CALL_TOOL)
        return fail(RpcCode.InvalidParams, `Unknown tool: ${String(params.name)} (this group offers search_tools and call_tool)`);
      const unwrapped = unwrapCallTool(params, target.locale);
      if ('refused' in unwrapped) return answer(unwrapped.refused);
      params = unwrapped.params;
      request = { ...request, params };
    }
    if (request.method === 'tools/call' || request.method === 'prompts/get') {
      const name = typeof params.name === 'string' ? params.name : '';
      const routed = await this.byName(session.userId, group, name, request.method === 'tools/call' ? 'tools' : 'prompts');
      if ('refused' in routed) return fail(RpcCode.InvalidParams, routed.refused);
      return this.forward(session, routed.spec, { ...request, params: { ...params, name: routed.name } }, target, scope, bytes);
    }
    if (request.method === 'resources/read' || request.method === 'resources/subscribe' || request.method === 'resources/unsubscribe') {
      const uri = typeof params.uri === 'string' ? params.uri : '';
      const routed = await this.byUri(session, group, uri, scope);
      if ('refused' in routed) return fail(RpcCode.InvalidParams, routed.refused);
      return this.forward(session, routed.spec, request, target, scope, bytes);
    }
    return fail(RpcCode.MethodNotFound, `Method not found: ${request.method}`);
  }

  private forward(
    session: DownstreamSession,
    spec: ServiceSpec,
    request: JSONRPCRequest,
    target: ReplyTarget,
    scope: CallScope,
    bytes: number | undefined,
  ): Promise<void> {
    const m = this.member(session, spec.id);
    m.sent.add(request.id);
    const done = (json: string, status?: number) => {
      m.sent.delete(request.id);
      target.response(json, status);
    };
    return this.deps.inner.dispatch(
      m,
      spec,
      [request],
      {
        notification: (json) => target.notification(json),
        response: done,
        // A member's sampling, elicitation or roots request goes where the group call's answer goes.
        serverRequest: target.serverRequest?.bind(target),
        locale: target.locale,
        // The 2026-07-28 era answers a member's server-to-client request through the group's client (modern.ts).
        ...(target.ask ? { ask: target.ask.bind(target) } : {}),
      },
      scope.child(m),
      bytes ?? Buffer.byteLength(JSON.stringify(request)),
    );
  }

  /** The group's services this user may call, one line each (what search_tools lists when it found nothing good). */
  private async serviceLines(userId: number, group: GroupSpec): Promise<ServiceLine[]> {
    const lines: ServiceLine[] = [];
    for (const member of group.members) {
      const spec = await this.spec(member.serviceId);
      if (!spec || (await this.memberState(userId, member.serviceId, spec)) !== 'on') continue;
      lines.push({ name: spec.name, description: serviceLine(spec) });
    }
    return lines;
  }

  /** `{service}{separator}{name}` back to the member and its own (possibly aliased) name. */
  private async byName(
    userId: number,
    group: GroupSpec,
    name: string,
    kind: 'tools' | 'prompts',
  ): Promise<{ spec: ServiceSpec; name: string } | { refused: string }> {
    const at = name.indexOf(group.separator);
    const unknown = { refused: `Unknown ${kind === 'tools' ? 'tool' : 'prompt'}: ${name}` };
    if (at <= 0) return unknown;
    const serviceName = name.slice(0, at);
    const inner = name.slice(at + group.separator.length);
    for (const member of group.members) {
      const spec = await this.spec(member.serviceId);
      if (spec?.name !== serviceName) continue;
      const refused = refusal(await this.memberState(userId, spec.id, spec), serviceName);
      if (refused) return { refused };
      if (kind === 'tools' && member.tools && !member.tools.includes(await this.originalName(spec, inner))) return unknown;
      return { spec, name: inner };
    }
    return unknown;
  }

  /**
   * Why a tool name the user's merged list does not hold is refused: its member is one they may not use
   * (or is off for them), named as /proxy names it; undefined when no member of the group goes by that
   * prefix or the member takes their calls (the tool is then simply unknown). The OpenAPI face asks it
   * to answer 403 or 503 rather than 404 (openapi-face.ts).
   */
  async refusalOf(userId: number, stand: ServiceSpec, name: string): Promise<ProxyFailure | undefined> {
    const group = this.groupOf(stand);
    if (!group) return undefined;
    const at = name.indexOf(group.separator);
    if (at <= 0) return undefined;
    const serviceName = name.slice(0, at);
    for (const member of group.members) {
      const spec = await this.spec(member.serviceId);
      if (spec?.name !== serviceName) continue;
      const state = await this.memberState(userId, spec.id, spec);
      if (state === 'no-access') return failures.noAccess(serviceName);
      if (state === 'disabled') return failures.disabledService(serviceName);
      if (state === 'switched-off') return failures.switchedOffService(serviceName);
      return undefined;
    }
    return undefined;
  }

  private async originalName(spec: ServiceSpec, visible: string): Promise<string> {
    const overrides = await this.deps.tools?.forService(spec);
    const resolved = overrides?.resolveCall(visible);
    return resolved && 'name' in resolved ? resolved.name : visible;
  }

  /**
   * The member a resource URI goes to, or the refusal (docs/decisions/0051-as-direct.md). URIs are not
   * namespaced: a group lists its members' resources and templates as they are, in group order, and a URI
   * goes to the first member in that order whose `resources/list` named it, else to the first whose
   * resource template matches it (as an MCP server itself prefers its fixed resources to its templates).
   * Only the user's own lists are searched and only members that take the user's calls now are routed to
   * (decision 0040): a member they may not use (never listed for them) is passed over, the next one that
   * matches takes the URI, and a URI no such member covers is an unknown resource. One that only a member
   * listed to them before, and that they may no longer use, is refused in the words of a call by name.
   */
  private async byUri(
    session: DownstreamSession,
    group: GroupSpec,
    uri: string,
    scope: CallScope,
  ): Promise<{ spec: ServiceSpec } | { refused: string }> {
    const owners = () => {
      const found: number[] = [];
      for (const member of group.members) {
        const known = this.lastKnown.get(`${member.serviceId}:${session.userId}:resources`);
        if (known?.some((r) => r.uri === uri)) found.push(member.serviceId);
      }
      for (const member of group.members) {
        const known = this.lastKnown.get(`${member.serviceId}:${session.userId}:resourceTemplates`);
        if (known?.some((t) => this.templateMatches(t.uriTemplate, uri)) && !found.includes(member.serviceId)) found.push(member.serviceId);
      }
      return found;
    };
    let candidates = owners();
    if (candidates.length === 0) {
      // Not listed yet in this process: list once, then look again.
      await Promise.all([this.merged(session, group, 'resources', scope), this.merged(session, group, 'resourceTemplates', scope)]);
      candidates = owners();
    }
    let refused: string | undefined;
    for (const serviceId of candidates) {
      const spec = await this.spec(serviceId);
      if (!spec) continue;
      const why = refusal(await this.memberState(session.userId, serviceId, spec), spec.name);
      if (!why) return { spec };
      refused ??= why;
    }
    return { refused: refused ?? `Unknown resource: ${uri}` };
  }

  /**
   * Whether a member's listed resource template matches a URI (RFC 6570, as the MCP SDK's servers match). The
   * matcher is a regular expression that backtracks over adjacent expressions (`{a}{b}`): a URI longer than
   * MAX_TEMPLATE_URI is matched against no template, so a crafted one cannot hold the gateway's event loop.
   */
  private templateMatches(template: unknown, uri: string): boolean {
    if (typeof template !== 'string' || uri.length > MAX_TEMPLATE_URI) return false;
    let compiled = this.templates.get(template);
    if (compiled === undefined) {
      try {
        compiled = new UriTemplate(template);
      } catch {
        // A template the server should not have listed matches nothing.
        compiled = null;
      }
      if (this.templates.size >= MAX_CACHED_LISTS) this.templates.clear();
      this.templates.set(template, compiled);
    }
    try {
      return compiled?.match(uri) != null;
    } catch {
      // An over-long URI: the matcher refuses it, so no template matches.
      return false;
    }
  }

  /**
   * Every member's list of a kind, merged: from the cache when every member answered last time and
   * nothing changed since; else a fan-out, where a member slower than the bound counts with its last
   * known list (and the result is not cached, so the next list asks it again).
   */
  private async merged(session: DownstreamSession, group: GroupSpec, kind: Kind, scope: CallScope): Promise<Item[]> {
    const cacheKey = `${group.id}:${session.userId}:${kind}`;
    const hit = this.lists.get(cacheKey);
    if (hit && Date.now() - hit.at < LIST_CACHE_MS) {
      this.hearMembers(session, group);
      return hit.items;
    }
    const started = Date.now();
    const generation = this.generation;
    let complete = true;
    const lists = await Promise.all(
      group.members.map(async (member) => {
        const spec = await this.spec(member.serviceId);
        if ((await this.memberState(session.userId, member.serviceId, spec)) !== 'on' || !spec) return [];
        const key = `${spec.id}:${session.userId}:${kind}`;
        const fresh = this.list(session, spec, kind, scope).then(
          (items) => {
            this.lastKnown.set(key, items);
            return items;
          },
          (err: unknown) => {
            this.deps.logger.debug({ err, group: group.name, service: spec.name }, 'group member did not list');
            return undefined;
          },
        );
        let timer: NodeJS.Timeout | undefined;
        const first = !this.lastKnown.has(key);
        const bound = new Promise<undefined>((resolve) => {
          timer = setTimeout(() => resolve(undefined), first ? FIRST_MEMBER_LIST_BOUND_MS : MEMBER_LIST_BOUND_MS);
        });
        const answered = await Promise.race([fresh, bound]);
        clearTimeout(timer);
        if (!answered) complete = false;
        // Slower than the first bound: known as empty until it answers (its answer replaces this when it comes).
        if (!answered && first && !this.lastKnown.has(key)) this.lastKnown.set(key, []);
        return this.shape(group, member, spec, kind, answered ?? this.lastKnown.get(key) ?? []);
      }),
    );
    const items = lists.flat();
    // Kept only when complete and nothing dropped the cache meanwhile (a change during the fan-out wins).
    if (complete && generation === this.generation) {
      if (this.lists.size >= MAX_CACHED_LISTS) this.lists.clear();
      this.lists.set(cacheKey, { at: started, items });
    }
    return items;
  }

  /**
   * A session answered from the cache has asked no member itself: it is attached to each shared or per-user
   * member link now (in the background), so that it hears the members' list changes as a session that
   * listed them does. An isolated member gets the session's own process only when the session uses it.
   */
  private hearMembers(session: DownstreamSession, group: GroupSpec): void {
    const mine = this.members.get(session);
    for (const member of group.members) {
      if (mine?.has(member.serviceId)) continue;
      void (async () => {
        const spec = await this.spec(member.serviceId);
        if (!spec || spec.isolation === 'session' || (await this.memberState(session.userId, member.serviceId, spec)) !== 'on') return;
        if (session.closed || this.members.get(session)?.has(spec.id)) return;
        await this.deps.inner.attach(this.member(session, spec.id), spec);
      })().catch((err: unknown) => this.deps.logger.debug({ err, group: group.name }, 'group member not listening'));
    }
  }

  private async shape(
    group: GroupSpec,
    member: GroupSpec['members'][number],
    spec: ServiceSpec,
    kind: Kind,
    items: Item[],
  ): Promise<Item[]> {
    if (kind !== 'tools' && kind !== 'prompts') return items;
    const out: Item[] = [];
    for (const item of items) {
      if (typeof item.name !== 'string') continue;
      if (kind === 'tools' && member.tools && !member.tools.includes(await this.originalName(spec, item.name))) continue;
      out.push({ ...item, name: `${spec.name}${group.separator}${item.name}` });
    }
    return out;
  }

  /** One member's whole list of a kind, through the proxy's Dispatcher (overrides applied there). */
  private async list(session: DownstreamSession, spec: ServiceSpec, kind: Kind, scope: CallScope): Promise<Item[]> {
    const m = this.member(session, spec.id);
    const method = Object.entries(LIST_METHODS).find(([, k]) => k === kind)?.[0] as string;
    const items: Item[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const message = await new Promise<JSONRPCResponse | JSONRPCError>((resolve) => {
        this.listIds += 1;
        const request: JSONRPCRequest = {
          jsonrpc: '2.0',
          id: `toolport-group-list-${this.listIds}`,
          method,
          params: cursor ? { cursor } : {},
        };
        void this.deps.inner.dispatch(
          m,
          spec,
          [request],
          { notification() {}, response: (json) => resolve(JSON.parse(json) as JSONRPCResponse | JSONRPCError) },
          scope.child(m),
          0,
        );
      });
      if ('error' in message) throw new Error(message.error.message);
      const result = message.result as Record<string, unknown>;
      const found = result[kind];
      if (Array.isArray(found)) items.push(...(found as Item[]));
      cursor = typeof result.nextCursor === 'string' ? result.nextCursor : undefined;
      if (!cursor) break;
    }
    return items;
  }
}

/** Why a member refuses a user's call by name or URI, in /proxy's own words (rpc-errors.ts); undefined when it takes it. */
function refusal(state: MemberState, serviceName: string): string | undefined {
  if (state === 'no-access') return failures.noAccess(serviceName).message;
  if (state === 'disabled') return `Service ${serviceName} is disabled`;
  if (state === 'switched-off') return failures.switchedOffService(serviceName).message;
  return undefined;
}

/** What the proxy's transports and limits see of a group: a service of its own, under a negative id. */
function standInSpec(group: GroupSpec): ServiceSpec {
  return {
    id: groupStandInId(group.id),
    name: group.name,
    displayName: group.displayName,
    type: 'stdio',
    command: '',
    args: [],
    env: {},
    headers: {},
    secretEnvNames: [],
    installDir: '',
    enabled: true,
    isolation: 'shared',
    rpdLimit: 0,
    updatedAt: 0,
  };
}

const NOWHERE: ReplyTarget = { notification() {}, response() {} };
