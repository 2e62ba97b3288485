import type { JSONRPCError, JSONRPCResponse } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { DatabaseGate } from '../db/availability.js';
import type { Db } from '../db/db.js';
import type { Locale } from '../i18n/index.js';
import type { ConfigEvents } from '../infra/events.js';
import type { Leadership } from '../infra/leader.js';
import type { Metrics } from '../infra/metrics.js';
import type { FetchLike } from '../infra/outbound.js';
import type { RedisHub } from '../infra/redis.js';
import type { Secrets } from '../infra/secrets.js';
import type { Tracing } from '../infra/tracing.js';
import type { AccessTokenPort } from './access-tokens.js';
import type { ServiceCatalog } from './catalog.js';
import type { SemanticRanker } from './downstream/hybrid-search.js';
import type { SessionLimits } from './downstream/session-registry.js';
import type { HealthResult } from './link-api.js';
import type { Meter } from './meter.js';
import type { GroupDirectory, ListedTool, ToolPolicy } from './tool-policy.js';
import type { MemoryWatch } from './upstream/memory-watch.js';
import type { LocalPackages } from './upstream/pool-deps.js';
import type { OptionsReader, ServiceLogWriter, UpstreamTuning } from './upstream/types.js';
import type { UpstreamAuthorization } from './upstream-auth.js';

/** The MCP data plane as the rest of the server sees it: its options, start and stop, and what the console asks. */
export interface Gateway extends GatewayObservation {
  /** The session limits and upstream timings it runs with (production's defaults, or what a test shortened). */
  readonly options: { limits: SessionLimits; tuning: Partial<UpstreamTuning> };
  /** Connects the parts that listen elsewhere (Redis channels) and reacts to configuration events from here on. */
  start(): Promise<void>;
  /**
   * Lets the proxied calls in flight finish (at most `graceMs`), then ends every session and stream and stops
   * every upstream process and connection. Once: a second call returns the first one's promise.
   */
  stop(graceMs?: number): Promise<void>;
  checkHealth(serviceId: number): Promise<HealthResult>;
  /**
   * A round trip through the link `userId` would use on /proxy (tools/list, timed), recorded nowhere: the check of a
   * user's own connection to a per-user OAuth service, whose row is checked without a user.
   */
  checkHealthAs(serviceId: number, userId: number): Promise<HealthResult>;
  /** Restarts the service's links on this replica and checks its health (the console's Reconnect). */
  reconnect(serviceId: number): Promise<HealthResult>;
  /**
   * The service's tools as its upstream lists them now (no overrides applied), fetched through the
   * link `userId` would use on /proxy (shared, per-user or isolated): the console's Tools tab.
   */
  upstreamTools(serviceId: number, userId: number): Promise<ListedTool[]>;
  /**
   * One tools/call as the user, through the proxy's own Dispatcher (overrides, in-flight cap, daily
   * limit, metering, the user's link): the console's Try it. Resolves with the JSON-RPC answer.
   */
  callTool(
    serviceId: number,
    userId: number,
    name: string,
    args: Record<string, unknown>,
    locale?: Locale,
  ): Promise<JSONRPCResponse | JSONRPCError>;
  /** Adds the /proxy/*, /group/* and /openapi/* routes and the hook that tracks proxied calls for the drain to `app`. */
  mount(app: FastifyInstance): Promise<void>;
}

/**
 * The gateway's live state as tests, benchmarks and the metrics read it: snapshots and read-only views, never
 * the session registry or the link pool themselves (gateway/observation.ts).
 */
export interface GatewayObservation {
  /** How many sessions this replica holds, in all and by transport. */
  stats(): { sessions: number; byTransport: Record<SessionView['transport'], number> };
  /** One session by its id, while the registry holds it: a live view that still answers once the session ended. */
  session(id: string): SessionView | undefined;
  /** The sessions of one user on this replica. */
  sessionsOf(userId: number): SessionView[];
  /** The links of a service on this replica, of both protocol eras, as they are now. */
  links(serviceId: number): LinkView[];
  /** Runs the idle sweep of sessions now, as if the time were `at` (the registry also runs it every `sweepMs`). */
  sweepNow(at?: number): void;
}

export interface SessionView {
  readonly id: string;
  readonly userId: number;
  readonly transport: 'streamable' | 'legacy' | 'modern';
  /** Requests of the session waiting for their answer. */
  readonly inflight: number;
  /** Server-to-client requests sent to the client and not answered yet. */
  readonly outgoing: number;
  readonly closed: boolean;
  /** Why the session ended, once closed. */
  readonly closedReason: string;
  /** Whether its GET (streamable) or SSE (legacy) stream is open (once ended: the last stream the view saw). */
  readonly streamOpen: boolean;
  /** The most bytes its stream held unread by the client at once. */
  readonly streamPeakBuffered: number;
}

export interface LinkView {
  era: '2025-11-25' | '2026-07-28';
  state: 'stopped' | 'starting' | 'ready' | 'backoff' | 'closed';
  inFlight: number;
  /** Client sessions attached to it. */
  attached: number;
}

/**
 * Who a user is now, as far as the gateway cares: sessions of a disabled or deleted user are ended, and
 * the role decides whether the access lists apply to them (admins always may).
 */
export interface UserStatusLookup {
  byId(userId: number): Promise<{ status: number; role: number } | null>;
}

/**
 * Everything the gateway is built from, and all it may touch outside gateway/. The ports (catalog,
 * meter, options, principals, packages, …) are declared in gateway/; the modules implement them.
 */
export interface GatewayDeps {
  config: Pick<Config, 'dataDir' | 'registries' | 'abuse' | 'proxyAccess'>;
  /** The revoked streamable sessions' table (downstream/revocations.ts). */
  db: Db;
  catalog: ServiceCatalog;
  meter: Meter;
  options: OptionsReader;
  principals: UserStatusLookup;
  events: ConfigEvents;
  serviceLog: ServiceLogWriter;
  secrets: Secrets;
  logger: Logger;
  metrics: Metrics;
  tracing: Tracing;
  leader: Pick<Leadership, 'runs'>;
  /** Remote services and OpenAPI base URLs are fetched through this (the core's `remote.fetch`, infra/outbound.ts). */
  remoteFetch: FetchLike;
  /** The resident-memory cap of stdio processes (upstream/memory-watch.ts); none without it. */
  memory?: MemoryWatch;
  /** The Redis all replicas share, when REDIS_URL is set. */
  redis?: RedisHub;
  /** Bounds the reads of the call path; while the database is away they answer from memory (decision 0043). */
  gate?: DatabaseGate;
  /** Several replicas: installs a service's package into this replica's DATA_DIR before it starts here. */
  packages?: LocalPackages;
  /** OAuth connections of remote services: the token each remote link sends (gateway/upstream-auth.ts). */
  authorization?: UpstreamAuthorization;
  /** OAuth access tokens (modules/authorization-server); without it only API keys are accepted. */
  accessTokens?: AccessTokenPort;
  /** Tool overrides and access (issue 17); without it no overrides apply and every service is open. */
  tools?: ToolPolicy;
  /** Groups (issue 17): without it, `/group/…` answers 404 for every name. */
  groups?: GroupDirectory;
  /** Semantic ranking of discovery search (modules/embeddings, decision 0046); without it search is lexical. */
  semantic?: SemanticRanker;
}

export interface GatewayOptions {
  /** Session limits (tests shorten them). */
  limits?: SessionLimits;
  /** Upstream timings over their production defaults (tests shorten them, e.g. the initialize timeout). */
  tuning?: Partial<UpstreamTuning>;
}
