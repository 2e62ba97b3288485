import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import path from 'node:path';
import { OidcProviderList, type OidcProviderSettings } from '@toolport/contract';
import { z } from 'zod';

/** Reverse proxies on this host or a private network (a compose network, a Kubernetes pod network). */
const DEFAULT_TRUST_PROXY = 'loopback,linklocal,uniquelocal';
const PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** TRUST_PROXY as Fastify takes it, or undefined when it is not one of the accepted forms. */
export function parseTrustProxy(value: string): boolean | number | string[] | undefined {
  const v = value.trim().toLowerCase();
  if (v === 'true') return true;
  if (v === 'false') return false;
  if (/^\d{1,2}$/.test(v)) return Number(v);
  const entries = v.split(',').map((e) => e.trim());
  const valid = (entry: string) => {
    if (PROXY_NAMES.has(entry)) return true;
    const [address, bits, ...rest] = entry.split('/');
    const family = isIP(address ?? '');
    if (family === 0 || rest.length > 0) return false;
    if (bits === undefined) return true;
    const n = /^\d{1,3}$/.test(bits) ? Number(bits) : -1;
    return n >= 0 && n <= (family === 4 ? 32 : 128);
  };
  return entries.length > 0 && entries.every(valid) ? entries : undefined;
}

/**
 * The runtime contract of docs/architecture.md §1, read from the environment once. A bad value stops the
 * process at start with a message naming the variable, never later with a stack trace.
 */
const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const urlOf = (protocols: string[]) =>
  z
    .string()
    .trim()
    .refine(
      (v) => {
        try {
          return protocols.includes(new URL(v).protocol);
        } catch {
          return false;
        }
      },
      `must be a URL starting with ${protocols.map((p) => `${p}//`).join(' or ')}`,
    );

const httpUrl = urlOf(['http:', 'https:']);

/** Comma- or space-separated entries of a list variable. */
const listOf = (v: string): string[] => v.split(/[\s,]+/).filter((e) => e !== '');
const HOST_NAME = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/i;
/** `scheme://host[:port]` exactly: what a browser sends as Origin. */
function isOrigin(v: string): boolean {
  try {
    const url = new URL(v);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === v.replace(/\/$/, '').toLowerCase();
  } catch {
    return false;
  }
}

const EnvSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().trim().min(1).default('0.0.0.0'),
  DATA_DIR: z.string().trim().min(1).default('./data'),
  DATABASE_URL: urlOf(['postgres:', 'postgresql:']).optional(),
  REDIS_URL: urlOf(['redis:', 'rediss:']).optional(),
  REDIS_PREFIX: z.string().trim().min(1).max(100).default('toolport:'),
  SECRET_KEY: z.string().min(32, 'must be at least 32 characters').optional(),
  ADMIN_PASSWORD: z.string().min(8, 'must be at least 8 characters').max(128).optional(),
  LOG_LEVEL: z.enum(logLevels).default('info'),
  /** Unset: readable coloured lines when standard output is a terminal, JSON lines otherwise. */
  LOG_FORMAT: z.enum(['json', 'pretty']).optional(),
  NPM_REGISTRY_URL: httpUrl.optional(),
  NPM_DOWNLOADS_URL: httpUrl.default('https://api.npmjs.org'),
  PYPI_INDEX_URL: httpUrl.default('https://pypi.org/simple'),
  PYPI_JSON_URL: httpUrl.default('https://pypi.org/pypi'),
  MCP_REGISTRY_URL: httpUrl.default('https://registry.modelcontextprotocol.io'),
  GITHUB_TOKEN: z.string().optional(),
  GITHUB_BASE_URL: httpUrl.default('https://github.com'),
  GITHUB_API_URL: httpUrl.default('https://api.github.com'),
  GOOGLE_AUTH_URL: httpUrl.default('https://accounts.google.com/o/oauth2/v2/auth'),
  GOOGLE_TOKEN_URL: httpUrl.default('https://oauth2.googleapis.com/token'),
  GOOGLE_USERINFO_URL: httpUrl.default('https://openidconnect.googleapis.com/v1/userinfo'),
  /** OpenID Connect sign-in providers as a JSON array (decision 0048), beside those set in Preferences. */
  OIDC_PROVIDERS: z
    .string()
    .default('')
    .transform((v, ctx) => {
      if (v.trim() === '') return [];
      let json: unknown;
      try {
        json = JSON.parse(v);
      } catch {
        ctx.addIssue({ code: 'custom', message: 'must be a JSON array of providers' });
        return z.NEVER;
      }
      const parsed = OidcProviderList.safeParse(json);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        ctx.addIssue({
          code: 'custom',
          message: `${issue?.path.length ? `[${issue.path.join('.')}] ` : ''}${issue?.message ?? 'invalid'}`,
        });
        return z.NEVER;
      }
      return parsed.data;
    }),
  METRICS_TOKEN: z.string().optional(),
  OTEL_EXPORTER_OTLP_ENDPOINT: httpUrl.optional(),
  OTEL_SERVICE_NAME: z.string().trim().min(1).max(200).default('toolport'),
  WEB_DIST_DIR: z.string().optional(),
  SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).max(600_000).default(10_000),
  /** For benchmarks only: `deferred` writes counts once a second as before decision 0021 (not crash-durable). */
  METER_COUNT_WRITES: z.enum(['durable', 'deferred']).default('durable'),
  // Abuse limits (docs/operations.md, "Abuse limits").
  PROXY_MAX_CALLS_IN_FLIGHT: z.coerce.number().int().min(1).max(100_000).default(32),
  PROXY_MAX_SESSIONS_PER_USER: z.coerce.number().int().min(1).max(100_000).default(100),
  PROXY_NEW_SESSIONS_PER_MINUTE: z.coerce.number().int().min(1).max(100_000).default(120),
  PROXY_NEW_SESSIONS_BURST: z.coerce.number().int().min(0).max(100_000).default(240),
  PROXY_CALL_QUEUE_MS: z.coerce.number().int().min(0).max(600_000).default(15_000),
  PROXY_CALL_QUEUE_LENGTH: z.coerce.number().int().min(1).max(100_000).default(1000),
  PROXY_AUTH_FAILURES_PER_MINUTE: z.coerce.number().int().min(1).max(100_000).default(30),
  PROXY_STREAM_BUFFER_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(1_073_741_824)
    .default(4 * 1024 * 1024),
  HTTP_HEADERS_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(20_000),
  HTTP_REQUEST_TIMEOUT_MS: z.coerce.number().int().min(200).max(3_600_000).default(60_000),
  // Who may reach the MCP endpoints by name and from a browser (gateway/downstream/origin-policy.ts).
  ALLOWED_HOSTS: z
    .string()
    .default('')
    .refine((v) => listOf(v).every((h) => HOST_NAME.test(h)), 'must be host names (no scheme or port) separated by commas'),
  ALLOWED_ORIGINS: z
    .string()
    .default('')
    .refine(
      (v) => listOf(v).every((o) => isOrigin(o)),
      'must be origins such as https://app.example.com (scheme, host and optional port, nothing else) separated by commas',
    ),
  // Outbound fetches that MCP clients and other non-admins cause (decision 0041): private addresses refused unless allowed.
  ALLOW_PRIVATE_NETWORK_CLIENT_FETCHES: z.enum(['true', 'false']).default('false'),
  OAUTH_CLIENT_FETCH_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(5000),
  STDIO_MAX_RSS_MB: z.coerce.number().int().min(0).max(1_048_576).default(1024),
  TRUST_PROXY: z
    .string()
    .trim()
    .default(DEFAULT_TRUST_PROXY)
    .refine(
      (v) => parseTrustProxy(v) !== undefined,
      'must be true, false, a number of proxy hops, or a comma-separated list of addresses, CIDR ranges, loopback, linklocal or uniquelocal',
    ),
});

export type Config = {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | undefined;
  redisUrl: string | undefined;
  /** Prefix of every Redis key and channel: replicas of one deployment share it, other deployments differ. */
  redisPrefix: string;
  secretKey: string | undefined;
  adminPassword: string | undefined;
  logLevel: (typeof logLevels)[number];
  /** LOG_FORMAT, or undefined: pretty on a terminal, JSON elsewhere (infra/logger.ts). */
  logFormat: 'json' | 'pretty' | undefined;
  registries: {
    npm: string | undefined;
    npmDownloads: string;
    pypiIndex: string;
    pypiJson: string;
    mcpRegistry: string;
    githubToken: string | undefined;
  };
  oauth: {
    githubBaseUrl: string;
    githubApiUrl: string;
    googleAuthUrl: string;
    googleTokenUrl: string;
    googleUserinfoUrl: string;
  };
  /** OIDC_PROVIDERS: providers the environment configures; the console shows them but cannot change them. */
  oidcProviders: OidcProviderSettings[];
  metricsToken: string | undefined;
  /** OpenTelemetry tracing: off unless an OTLP endpoint is given (infra/tracing.ts). */
  tracing: { otlpEndpoint: string | undefined; serviceName: string };
  webDistDir: string | undefined;
  /** How long SIGTERM/SIGINT wait for proxied calls in flight before ending them (server.ts). */
  shutdownGraceMs: number;
  /**
   * METER_COUNT_WRITES: `durable` (default) writes each event-loop turn's counts before the calls go upstream;
   * `deferred` only with the once-a-second flush, as before, so that a benchmark can compare both in one run.
   */
  meterCountWrites: 'durable' | 'deferred';
  /** Abuse limits of the proxy and the HTTP server (docs/operations.md, "Abuse limits"). */
  abuse: AbuseLimits;
  /** Host names and browser origins the MCP endpoints accept besides the defaults (origin-policy.ts). */
  proxyAccess: { allowedHosts: string[]; allowedOrigins: string[] };
  /**
   * Fetches a caller who is not an admin can cause (Client ID Metadata Documents): whether they may reach
   * private addresses, and how long one may take; every failure is answered no sooner (decision 0041).
   */
  clientFetches: { allowPrivateNetwork: boolean; timeoutMs: number };
  /** Resident memory a stdio tool server's process group may use before it is stopped and restarted; 0 = no limit. */
  stdioMaxRssMb: number;
  /**
   * Which peers' X-Forwarded-For / -Proto are believed (Fastify's trustProxy): the client address the
   * login limits and logs use. Trusting everyone would let any client pick its own address.
   */
  trustProxy: boolean | number | string[];
};

export interface AbuseLimits {
  /** Counted calls one user may have waiting on one service, on one replica. */
  callsInFlight: number;
  /** Sessions one user may hold on one replica; the one idle longest is dropped beyond it. */
  sessionsPerUser: number;
  /** Sessions one user may open per minute, all replicas together (REDIS_URL). */
  newSessionsPerMinute: number;
  /** Sessions one user may open beyond that rate, refilled over ten minutes (bursts of per-invocation clients). */
  newSessionsBurst: number;
  /** How long a counted call over callsInFlight waits for a slot before it is refused; 0: refused at once. */
  callQueueMs: number;
  /** Calls one user may have waiting on one service, on one replica. */
  callQueueLength: number;
  /** Refused proxy authentications (401, 403, 404) per client address per minute before it is answered 429. */
  authFailuresPerMinute: number;
  /** Bytes an event stream may hold unsent for a client that does not read before it is dropped. */
  streamBufferBytes: number;
  /** Time a client has to send its request headers. */
  headersTimeoutMs: number;
  /** Time a client has to send its whole request; a proxy body must arrive within half of it. */
  requestTimeoutMs: number;
}

/** A start refused for a reason the operator fixes outside Toolport: told in one line, without a stack. */
export class StartRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StartRefused';
  }
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Empty strings count as unset, as most shells and compose files write them. */
function clean(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && v !== '') out[k] = v;
  return out;
}

/** Variables whose values must not reach a terminal or a log, even when they are wrong. */
const secretVariables = new Set(['SECRET_KEY', 'ADMIN_PASSWORD', 'GITHUB_TOKEN', 'METRICS_TOKEN']);

/** How a refused value is shown: secrets not at all, URLs without their credentials. */
function shown(name: string, value: string | undefined): string {
  if (secretVariables.has(name)) return '';
  return ` (got ${JSON.stringify((value ?? '').replace(/\/\/[^/@\s]*@/, '//***@'))})`;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = EnvSchema.safeParse(clean(env));
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((i) => {
        const name = String(i.path[0]);
        return `${name}: ${i.message}${shown(name, env[name])}`;
      }),
    );
  }
  const e = parsed.data;
  // The headers, then the body within half the request time, always end before Node's request timeout.
  if (e.HTTP_HEADERS_TIMEOUT_MS * 2 > e.HTTP_REQUEST_TIMEOUT_MS) {
    throw new ConfigError([
      `HTTP_HEADERS_TIMEOUT_MS: must be at most half of HTTP_REQUEST_TIMEOUT_MS (${e.HTTP_REQUEST_TIMEOUT_MS}) (got "${e.HTTP_HEADERS_TIMEOUT_MS}")`,
    ]);
  }
  return {
    port: e.PORT,
    host: e.HOST,
    dataDir: path.resolve(e.DATA_DIR),
    databaseUrl: e.DATABASE_URL,
    redisUrl: e.REDIS_URL,
    redisPrefix: e.REDIS_PREFIX,
    secretKey: e.SECRET_KEY,
    adminPassword: e.ADMIN_PASSWORD,
    logLevel: e.LOG_LEVEL,
    logFormat: e.LOG_FORMAT,
    registries: {
      npm: e.NPM_REGISTRY_URL,
      npmDownloads: e.NPM_DOWNLOADS_URL,
      pypiIndex: e.PYPI_INDEX_URL,
      pypiJson: e.PYPI_JSON_URL,
      mcpRegistry: e.MCP_REGISTRY_URL,
      githubToken: e.GITHUB_TOKEN,
    },
    oauth: {
      githubBaseUrl: e.GITHUB_BASE_URL,
      githubApiUrl: e.GITHUB_API_URL,
      googleAuthUrl: e.GOOGLE_AUTH_URL,
      googleTokenUrl: e.GOOGLE_TOKEN_URL,
      googleUserinfoUrl: e.GOOGLE_USERINFO_URL,
    },
    oidcProviders: e.OIDC_PROVIDERS,
    metricsToken: e.METRICS_TOKEN,
    tracing: { otlpEndpoint: e.OTEL_EXPORTER_OTLP_ENDPOINT, serviceName: e.OTEL_SERVICE_NAME },
    webDistDir: e.WEB_DIST_DIR,
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    meterCountWrites: e.METER_COUNT_WRITES,
    abuse: {
      callsInFlight: e.PROXY_MAX_CALLS_IN_FLIGHT,
      sessionsPerUser: e.PROXY_MAX_SESSIONS_PER_USER,
      newSessionsPerMinute: e.PROXY_NEW_SESSIONS_PER_MINUTE,
      newSessionsBurst: e.PROXY_NEW_SESSIONS_BURST,
      callQueueMs: e.PROXY_CALL_QUEUE_MS,
      callQueueLength: e.PROXY_CALL_QUEUE_LENGTH,
      authFailuresPerMinute: e.PROXY_AUTH_FAILURES_PER_MINUTE,
      streamBufferBytes: e.PROXY_STREAM_BUFFER_BYTES,
      headersTimeoutMs: e.HTTP_HEADERS_TIMEOUT_MS,
      requestTimeoutMs: e.HTTP_REQUEST_TIMEOUT_MS,
    },
    proxyAccess: {
      allowedHosts: listOf(e.ALLOWED_HOSTS).map((h) => h.toLowerCase()),
      allowedOrigins: listOf(e.ALLOWED_ORIGINS).map((o) => o.replace(/\/$/, '').toLowerCase()),
    },
    clientFetches: { allowPrivateNetwork: e.ALLOW_PRIVATE_NETWORK_CLIENT_FETCHES === 'true', timeoutMs: e.OAUTH_CLIENT_FETCH_TIMEOUT_MS },
    stdioMaxRssMb: e.STDIO_MAX_RSS_MB,
    trustProxy: parseTrustProxy(e.TRUST_PROXY) ?? false,
  };
}

/** Creates DATA_DIR when missing and proves it is writable, so a bad mount fails at start. */
export function prepareDataDir(dataDir: string): void {
  try {
    mkdirSync(dataDir, { recursive: true });
    const probe = path.join(dataDir, `.write-probe-${process.pid}`);
    writeFileSync(probe, '');
    rmSync(probe);
  } catch (err) {
    const reason = err instanceof Error && 'code' in err ? String((err as NodeJS.ErrnoException).code) : String(err);
    throw new ConfigError([`DATA_DIR: ${dataDir} is not a writable directory (${reason})`]);
  }
}
