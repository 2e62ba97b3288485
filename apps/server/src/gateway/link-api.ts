import type {
  InitializeRequest,
  InitializeResult,
  JSONRPCError,
  JSONRPCNotification,
  JSONRPCRequest,
  JSONRPCResponse,
} from '@modelcontextprotocol/sdk/types.js';
import type { HealthStatus, ServiceSpec } from './catalog.js';

/**
 * The contract between the downstream transports (gateway/downstream: streamable HTTP, legacy SSE,
 * sessions) and the upstream side (gateway/upstream: processes, remote clients, the multiplexer).
 * Downstream speaks in the client's own JSON-RPC ids; the link rewrites them (docs/architecture.md §4).
 */

/** One client session as the upstream side sees it. */
export interface SessionPeer {
  /** Stable for the session's life (derived from the signed session id), unique across users. */
  readonly id: string;
  readonly userId: number;
  /** Protocol version negotiated with this client. */
  readonly protocolVersion: string;
  /**
   * 'modern': one request of a 2026-07-28 client (stateless, its envelope in the request). The pool serves it
   * through the service's modern link when the upstream speaks that revision itself, else like any session.
   */
  readonly era?: 'modern';
  /**
   * A 2026-07-28 client's listen stream, or a group member's share of one: served by a legacy link (it has no
   * `era`) but placed as the same user's modern requests are, so on an isolated service it is on the one link
   * those requests share and hears the process they run on (its resource updates among them).
   */
  readonly modernListen?: boolean;
  /** Headers of the client's request that an upstream reached over HTTP in the 2026-07-28 revision hears too (`Mcp-Param-*`). */
  readonly forwardHeaders?: Record<string, string>;
  /**
   * Server-initiated messages not tied to one of this session's requests: list_changed fan-out,
   * resources/updated for its subscriptions, and log messages that are unambiguous. Delivered on the
   * session's standalone stream (GET on streamable HTTP, the SSE stream on the legacy transport);
   * dropped when the session has none open.
   */
  notify(message: JSONRPCNotification): void;
  /**
   * A server-to-client request (sampling, elicitation, roots/list, ping) relayed to this client on its
   * standalone stream (GET on streamable HTTP, the SSE stream on the legacy transport); resolves with
   * the client's answer (its id is ignored), rejects when it cannot be delivered or is not answered
   * within `timeoutMs`. Used when the request is tied to no request of the client's in flight.
   * Aborting `signal` withdraws it (the upstream cancelled it): the client is sent
   * `notifications/cancelled` under the id it knows, and the promise rejects.
   */
  request?(message: JSONRPCRequest, timeoutMs: number, signal?: AbortSignal): Promise<JSONRPCResponse | JSONRPCError>;
  /**
   * Why this client cannot take a server-to-client request (it did not declare the capability in its
   * initialize), or undefined when it can (downstream/client-requests.ts).
   */
  refuses?(message: JSONRPCRequest): string | undefined;
}

/** Where the messages that belong to one client request go, ids and progress tokens already restored. */
export interface RequestSink {
  /** A notification tied to the request: progress, or a log while it is the only request in flight. */
  notification(message: JSONRPCNotification): void;
  /** The final answer. Called exactly once per request (a timeout or upstream loss yields a JSON-RPC error). */
  response(message: JSONRPCResponse | JSONRPCError): void;
  /**
   * A server-to-client request caused by this client request, delivered where the request's own
   * answer travels (its POST's event stream, or the legacy SSE stream); resolves with the client's
   * answer. Absent for the gateway's own requests. `signal` as for `SessionPeer.request`; the request is
   * also withdrawn when the client request that caused it ends first (answered, cancelled, its client gone).
   */
  request?(message: JSONRPCRequest, timeoutMs: number, signal?: AbortSignal): Promise<JSONRPCResponse | JSONRPCError>;
}

export interface UpstreamLink {
  /** 'modern': requests go up as the client sent them, envelope and retry members included (upstream/modern-link.ts). */
  readonly era?: 'modern';
  /** Answers `initialize` locally from the upstream's cached result, with the negotiated version. */
  initialize(session: SessionPeer, params: InitializeRequest['params']): Promise<InitializeResult>;
  /**
   * Sends one client request upstream. Aborting `signal` (client went away) sends
   * notifications/cancelled upstream and answers nothing further.
   */
  request(session: SessionPeer, request: JSONRPCRequest, sink: RequestSink, signal?: AbortSignal): void;
  /** A client notification: cancelled (rewritten), initialized (absorbed), anything else per mode. */
  notify(session: SessionPeer, notification: JSONRPCNotification): void;
  /** The session ended: cancel its in-flight requests, drop its subscriptions. */
  detach(session: SessionPeer): void;
}

export type { HealthStatus } from './catalog.js';
export interface HealthResult {
  status: HealthStatus;
  details: string;
  toolCount?: number;
  /** The server's description of itself from `initialize` (handshake.ts, describeServer), when healthy. */
  about?: string;
  checkedAt: number;
}

export interface UpstreamPool {
  /**
   * The link that serves this session on this service, started on demand: one shared link per
   * service by default, one per user when the user has personal variable values, one per session
   * when the service is isolated.
   */
  acquire(service: ServiceSpec, session: SessionPeer): Promise<UpstreamLink>;
  /** The session ended on this replica: detach it and let per-session links be reaped. */
  release(serviceId: number, session: SessionPeer): void;
  /** A real MCP round trip (initialize + tools/list) now. */
  checkHealth(serviceId: number): Promise<HealthResult>;
  /**
   * Restarts this replica's links of the service (processes, connections; backoff forgotten), waits for the
   * shared one to come up (or fail), then checks its health like checkHealth.
   */
  reconnect(serviceId: number): Promise<HealthResult>;
  /** Stops every process and connection; no process survives. */
  shutdown(): Promise<void>;
}
