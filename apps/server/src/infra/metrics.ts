import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { AppError } from '../http/errors.js';

/**
 * Prometheus metrics (docs/architecture.md §1 probes): served at `GET /metrics`. Each app has a registry
 * of its own, so several apps in one process (the tests) never share counts. Node's default
 * metrics describe the process, not an app: they are collected once per process, into a registry
 * every app's scrape appends.
 *
 * Labels stay bounded: service names (admins create them), the three counted JSON-RPC methods,
 * route patterns rather than URLs. No user ids, keys or paths.
 */

/** How a counted request ended, as the meter records it (docs/architecture.md §6). */
export type McpOutcome = 'ok' | 'error' | 'limited';
/** `modern`: the 2026-07-28 era's `subscriptions/listen` streams (its calls hold no session). */
export type DownstreamTransport = 'streamable' | 'legacy' | 'modern';
export type InstallKind = 'npm' | 'pypi' | 'remote';
/** The abuse limits (docs/operations.md, "Abuse limits") whose refusals are counted. */
export type AbuseLimit = 'calls_in_flight' | 'new_sessions' | 'proxy_auth_ip' | 'login_ip' | 'login_user' | 'slow_reader' | 'body_timeout';

/** The label of a request that matched no route (a 404): one value for every unknown URL. */
export const UNMATCHED_ROUTE = 'unmatched';

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

let processRegistry: Registry | undefined;

/** process_* and nodejs_* metrics, collected once per process however many apps it builds. */
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

/** Open sessions on this replica, read at scrape time from the session registry. */
export type SessionCounts = () => Record<DownstreamTransport, number>;

export class Metrics {
  readonly registry = new Registry();
  private sessionCounts: SessionCounts = () => ({ streamable: 0, legacy: 0, modern: 0 });

  private readonly mcpRequests = new Counter({
    name: 'toolport_mcp_requests_total',
    help: 'Counted MCP requests (tools/call, resources/read, prompts/get) by service, method and outcome (ok, error, limited).',
    labelNames: ['service', 'method', 'outcome'] as const,
    registers: [this.registry],
  });

  private readonly mcpErrors = new Counter({
    name: 'toolport_mcp_request_errors_total',
    help: 'Counted MCP requests that failed (a JSON-RPC error, a tool result flagged isError, or no upstream), by service and method.',
    labelNames: ['service', 'method'] as const,
    registers: [this.registry],
  });

  private readonly mcpLatency = new Histogram({
    name: 'toolport_mcp_request_duration_seconds',
    help: 'Time from receiving a counted MCP request to answering it (requests refused by the daily limit excluded), by service and method.',
    labelNames: ['service', 'method'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  private readonly processes = new Gauge({
    name: 'toolport_upstream_processes',
    help: 'Running upstream (stdio) processes of each service on this replica, health-check probes included.',
    labelNames: ['service'] as const,
    registers: [this.registry],
  });

  private readonly restarts = new Counter({
    name: 'toolport_upstream_restarts_total',
    help: 'Restarts of an upstream after its process exited or its connection was lost, by service.',
    labelNames: ['service'] as const,
    registers: [this.registry],
  });

  private readonly installRunning = new Gauge({
    name: 'toolport_install_tasks_running',
    help: 'Install tasks running on this replica.',
    registers: [this.registry],
  });

  private readonly installFinished = new Counter({
    name: 'toolport_install_tasks_total',
    help: 'Finished install tasks by package kind (npm, pypi, remote) and outcome (completed, failed).',
    labelNames: ['kind', 'outcome'] as const,
    registers: [this.registry],
  });

  private readonly leader = new Gauge({
    name: 'toolport_leader',
    help: '1 while this replica leads the cluster-wide periodic jobs (always 1 without Redis), else 0.',
    registers: [this.registry],
  });

  private readonly recordsDropped = new Counter({
    name: 'toolport_request_records_dropped_total',
    help: 'Request records (history, logs) dropped because more than the cap waited in the meter journal for the database (the oldest first); counts are never dropped.',
    registers: [this.registry],
  });

  private readonly abuseRefusals = new Counter({
    name: 'toolport_abuse_refusals_total',
    help: 'Requests refused or streams dropped by an abuse limit (calls_in_flight, new_sessions, proxy_auth_ip, login_ip, login_user, slow_reader, body_timeout).',
    labelNames: ['limit'] as const,
    registers: [this.registry],
  });

  private readonly httpRequests = new Counter({
    name: 'toolport_http_requests_total',
    help: 'HTTP requests by method, route pattern and status code.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });

  private readonly httpLatency = new Histogram({
    name: 'toolport_http_request_duration_seconds',
    help: 'HTTP request duration by method and route pattern (streams count until they end).',
    labelNames: ['method', 'route'] as const,
    buckets: HTTP_BUCKETS,
    registers: [this.registry],
  });

  constructor() {
    const counts = () => this.sessionCounts();
    new Gauge({
      name: 'toolport_downstream_sessions',
      help: 'Client sessions held on this replica by transport (streamable_http, sse, listen: 2026-07-28 subscriptions/listen streams).',
      labelNames: ['transport'] as const,
      registers: [this.registry],
      collect() {
        const now = counts();
        this.set({ transport: 'streamable_http' }, now.streamable);
        this.set({ transport: 'sse' }, now.legacy);
        this.set({ transport: 'listen' }, now.modern);
      },
    });
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** A counted request answered (or refused); `seconds` is left out for refusals. */
  mcpRequest(service: string, method: string, outcome: McpOutcome, seconds: number): void {
    this.mcpRequests.inc({ service, method, outcome });
    if (outcome === 'limited') return;
    if (outcome === 'error') this.mcpErrors.inc({ service, method });
    this.mcpLatency.observe({ service, method }, seconds);
  }

  processStarted(service: string): void {
    this.processes.inc({ service });
  }

  processExited(service: string): void {
    this.processes.dec({ service });
  }

  upstreamRestarted(service: string): void {
    this.restarts.inc({ service });
  }

  /** The gateway tells where its sessions are counted once it exists. */
  countSessions(counts: SessionCounts): void {
    this.sessionCounts = counts;
  }

  installStarted(): void {
    this.installRunning.inc();
  }

  installEnded(kind: InstallKind, outcome: 'completed' | 'failed'): void {
    this.installRunning.dec();
    this.installFinished.inc({ kind, outcome });
  }

  /** Leader election (infra/leader.ts). */
  leaderChanged(leading: boolean): void {
    this.leader.set(leading ? 1 : 0);
  }

  /** The meter dropped request records waiting for the database (modules/metering). */
  requestRecordsDropped(n: number): void {
    this.recordsDropped.inc(n);
  }

  /** An abuse limit refused a request or dropped a stream. */
  abuseRefused(limit: AbuseLimit): void {
    this.abuseRefusals.inc({ limit });
  }

  httpRequest(method: string, route: string, status: number, seconds: number): void {
    this.httpRequests.inc({ method, route, status: String(status) });
    this.httpLatency.observe({ method, route }, seconds);
  }

  /** The exposition text: the process's default metrics, then this app's. */
  async render(): Promise<string> {
    const [proc, app] = await Promise.all([processMetrics().metrics(), this.registry.metrics()]);
    return `${proc}${proc.endsWith('\n') ? '' : '\n'}${app}`;
  }
}

/** The part of Metrics the upstream side reports to. */
export type UpstreamMetrics = Pick<Metrics, 'processStarted' | 'processExited' | 'upstreamRestarted'>;

const digest = (value: string) => createHash('sha256').update(value).digest();

/** Constant-time comparison of a presented token with the configured one (hashed: equal lengths). */
export function tokenMatches(presented: string | undefined, expected: string): boolean {
  return timingSafeEqual(digest(presented ?? ''), digest(expected)) && presented !== undefined;
}

/** The route pattern of a request: never its URL, so the label set stays bounded. */
export const routeOf = (req: FastifyRequest): string => req.routeOptions.url ?? UNMATCHED_ROUTE;

/** Counts every HTTP request by method, route pattern and status, with its duration. */
export function instrumentHttp(app: FastifyInstance, metrics: Metrics): void {
  app.addHook('onResponse', async (req: FastifyRequest, reply: FastifyReply) => {
    metrics.httpRequest(req.method, routeOf(req), reply.statusCode, reply.elapsedTime / 1000);
  });
}

/**
 * `GET /metrics`: public unless METRICS_TOKEN is set, then `Authorization: Bearer <token>` is
 * required (401 otherwise). Not part of the API document.
 */
export function registerMetricsRoute(app: FastifyInstance, metrics: Metrics, token: string | undefined): void {
  app.get('/metrics', { config: { auth: 'public' }, schema: { hide: true } }, async (req, reply) => {
    if (token !== undefined) {
      const presented = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
      if (!tokenMatches(presented, token)) {
        const key = presented === undefined ? 'auth.token_missing' : 'auth.token_invalid';
        throw new AppError(401, key, undefined, { headers: { 'www-authenticate': 'Bearer realm="metrics"' } });
      }
    }
    const text = await metrics.render();
    return reply.header('cache-control', 'no-store').type(metrics.contentType).send(text);
  });
}
