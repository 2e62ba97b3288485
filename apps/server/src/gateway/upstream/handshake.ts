import {
  type ClientCapabilities,
  type InitializeRequest,
  type InitializeResult,
  type JSONRPCRequest,
  LATEST_PROTOCOL_VERSION,
  type ListToolsResult,
  type ServerCapabilities,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';
import { VERSION } from '../../version.js';
import type { LinkMode, Multiplexer } from './multiplexer.js';

/** The client's requested version when the SDK supports it, else the latest (the MCP specification's rule). */
export const negotiateVersion = (requested: string | undefined): string =>
  requested && SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : LATEST_PROTOCOL_VERSION;

/**
 * What a shared upstream is told its client can do: everything a client may relay (sampling,
 * elicitation in both modes, roots), so that servers which offer tools only to capable clients offer
 * them all. Each such request is then relayed to the client that caused it, or refused with a reason
 * (link.ts, serverRequest); `roots/list` on a link several users share is answered by the gateway itself,
 * with no roots (decision 0042). No `roots.listChanged`: one client's roots changing says nothing of the others'.
 */
export const SHARED_CLIENT_CAPABILITIES: ClientCapabilities = { sampling: {}, elicitation: { form: {}, url: {} }, roots: {} };

/**
 * What the gateway sends upstream as `initialize`. An isolated (per-session) upstream hears the
 * client's own parameters; a shared one the gateway's name and SHARED_CLIENT_CAPABILITIES.
 */
export function upstreamInitParams(mode: LinkMode, client: InitializeRequest['params'] | undefined): InitializeRequest['params'] {
  if (mode === 'session' && client) return { ...client, protocolVersion: negotiateVersion(client.protocolVersion) };
  return {
    protocolVersion: LATEST_PROTOCOL_VERSION,
    capabilities: SHARED_CLIENT_CAPABILITIES,
    clientInfo: { name: 'toolport-gateway', version: VERSION },
  };
}

/**
 * The initialize result a client of a shared upstream receives: the upstream's, with the version
 * negotiated for this client. Tasks are left out: their ids and `tasks/list` are the upstream's
 * and would show one client's tasks to every other.
 */
export function sharedInitializeResult(cached: InitializeResult, requestedVersion: string | undefined): InitializeResult {
  const { tasks: _tasks, ...capabilities } = cached.capabilities as ServerCapabilities & { tasks?: unknown };
  return { ...cached, protocolVersion: negotiateVersion(requestedVersion), capabilities };
}

/**
 * A client request as a tool server shared by several users hears it, or undefined when it must not reach
 * it. Its tasks are the process's, not one client's: `tasks/list` would show every user's, and `tasks/result`
 * another user's result (and the questions of their task). The clients were not told of tasks
 * (sharedInitializeResult), so `tasks/*` is refused and a task-augmented request goes up as a plain one, as
 * a server without tasks treats it (decision 0042).
 */
export function forSharedUpstream(request: JSONRPCRequest): JSONRPCRequest | undefined {
  if (request.method.startsWith('tasks/')) return undefined;
  if (request.params?.task === undefined) return request;
  const { task: _task, ...params } = request.params;
  return { ...request, params };
}

/** Upper bound on tools/list pages followed when counting tools. */
const MAX_TOOL_PAGES = 20;

/** Counts the upstream's tools, following tools/list pages. */
export async function countTools(mux: Multiplexer, timeoutMs: number, raw: boolean): Promise<number> {
  let count = 0;
  let cursor: string | undefined;
  for (let page = 0; page < MAX_TOOL_PAGES; page++) {
    const result = (await mux.internal('tools/list', cursor ? { cursor } : undefined, timeoutMs, raw)) as ListToolsResult;
    count += result.tools?.length ?? 0;
    cursor = result.nextCursor;
    if (!cursor) break;
  }
  return count;
}

/** Health details: "12 tools, 42 ms", or just the time when the tools could not be counted. */
export const describeRoundTrip = (toolCount: number | undefined, ms: number): string =>
  toolCount === undefined ? `${ms} ms` : `${toolCount} tools, ${ms} ms`;

/** Upper bound on a description taken from a server's own `initialize` result. */
export const ABOUT_MAX = 500;

/**
 * A description of a tool server in its own words (docs/decisions/0037): the first paragraph of its
 * `instructions`, else its `serverInfo` title (or name) and version. Undefined when it says nothing.
 */
export function describeServer(result: Pick<InitializeResult, 'instructions' | 'serverInfo'> | undefined): string | undefined {
  if (!result) return undefined;
  const paragraph = (result.instructions ?? '')
    .trim()
    .split(/\n\s*\n/)[0]
    ?.replace(/\s+/g, ' ')
    .trim();
  if (paragraph) return paragraph.length > ABOUT_MAX ? `${paragraph.slice(0, ABOUT_MAX - 1)}…` : paragraph;
  const info = result.serverInfo as { name?: string; title?: string; version?: string } | undefined;
  const name = (info?.title ?? '').trim() || (info?.name ?? '').trim();
  if (!name) return undefined;
  const version = (info?.version ?? '').trim();
  return (version ? `${name} ${version}` : name).slice(0, ABOUT_MAX);
}
