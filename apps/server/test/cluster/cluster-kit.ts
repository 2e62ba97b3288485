import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createClient } from 'redis';
import { type CliRun, ensureBuiltCli, exitOf, freePort, runCli, waitUntilReady } from '../built-cli.js';
import { createPgDatabase } from '../harness.js';

/**
 * Several replicas of the built server (`node dist/main.js start`, what operators run) on one fresh
 * PostgreSQL database and one Redis under a prefix of their own, with the same SECRET_KEY, each with
 * its own DATA_DIR and loopback port, behind a round-robin balancer (`Balancer`). Used by the cluster
 * suite and by bench/cluster.bench.ts.
 */

export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
export const CLUSTER_ADMIN_PASSWORD = 'cluster-admin-password';
const SECRET_KEY = 'cluster-test-secret-key-0123456789abcdef';

export interface Replica {
  /** A, B, C, … */
  name: string;
  index: number;
  port: number;
  url: string;
  dataDir: string;
  run: CliRun;
  /** False once killed or stopped. */
  alive: boolean;
}

export interface ClusterOptions {
  replicas?: number;
  /** Without Redis: one replica of the in-process kind (the bench's baseline). */
  redis?: boolean;
  /** Extra environment for every replica. */
  env?: Record<string, string>;
}

export interface ApiReply<T = unknown> {
  status: number;
  body: { success: boolean; message?: string; data?: T };
}

export interface Cluster {
  replicas: Replica[];
  balancer: Balancer;
  /** The balancer's address: what clients use. */
  url: string;
  databaseUrl: string;
  redisPrefix: string | undefined;
  /** An API call to one replica (or through the balancer without `on`); returns status and JSON body. */
  api<T = unknown>(method: string, url: string, opts?: { on?: Replica; token?: string; body?: unknown }): Promise<ApiReply<T>>;
  /** The same, failing unless it answers 2xx; returns `data`. */
  call<T = unknown>(method: string, url: string, opts?: { on?: Replica; token?: string; body?: unknown }): Promise<T>;
  /** An access token of `root` (signed with the shared SECRET_KEY: good on every replica). */
  rootToken(): Promise<string>;
  /** One SQL query on the shared database. */
  query<R extends Record<string, unknown>>(text: string, values?: unknown[]): Promise<R[]>;
  /** SIGKILL to one replica, and to the upstream processes it leaves behind. */
  kill(replica: Replica): Promise<void>;
  close(): Promise<void>;
}

/** Starts the built server `count` times; the first alone (it migrates and creates root), then the rest together. */
export async function startCluster(opts: ClusterOptions = {}): Promise<Cluster> {
  await ensureBuiltCli();
  const count = opts.replicas ?? 3;
  const useRedis = opts.redis ?? true;
  const database = await createPgDatabase();
  const redisPrefix = useRedis ? `toolport-cluster:${process.pid}:${Math.random().toString(36).slice(2, 10)}:` : undefined;
  const root = mkdtempSync(path.join(tmpdir(), 'toolport-cluster-'));
  const shared: Record<string, string> = {
    DATABASE_URL: database.url,
    ADMIN_PASSWORD: CLUSTER_ADMIN_PASSWORD,
    SECRET_KEY,
    HOST: '127.0.0.1',
    SHUTDOWN_GRACE_MS: '3000',
    ...(redisPrefix ? { REDIS_URL, REDIS_PREFIX: redisPrefix } : {}),
    ...opts.env,
  };
  const replicas: Replica[] = [];
  const startOne = async (index: number): Promise<Replica> => {
    const name = String.fromCharCode(65 + index);
    const dataDir = path.join(root, name);
    const port = await freePort();
    const env = { ...shared, DATA_DIR: dataDir, PORT: String(port) };
    const run = runCli(['start'], env);
    const replica: Replica = { name, index, port, url: `http://127.0.0.1:${port}`, dataDir, run, alive: true };
    replicas[index] = replica;
    await waitUntilReady(run, port);
    return replica;
  };
  const pool = new pg.Pool({ connectionString: database.url, max: 2 });
  // The database is dropped WITH (FORCE) at the end: a connection still closing then is ended by the server (57P01),
  // which must not surface as an uncaught error in the test run.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  let balancer: Balancer | undefined;
  const close = async () => {
    await balancer?.close();
    await Promise.all(
      replicas.map(async (r) => {
        if (!r?.alive) return;
        r.alive = false;
        r.run.child.kill('SIGTERM');
        await exitOf(r.run).catch(() => r.run.child.kill('SIGKILL'));
      }),
    );
    for (const r of replicas) if (r) killUpstreams(r);
    await pool.end();
    await database.drop();
    if (redisPrefix) await dropRedisKeys(redisPrefix);
    rmSync(root, { recursive: true, force: true });
  };
  try {
    await startOne(0);
    await Promise.all(Array.from({ length: count - 1 }, (_, i) => startOne(i + 1)));
    balancer = await Balancer.start(replicas);
  } catch (err) {
    await close().catch(() => undefined);
    throw err;
  }

  const api = async <T>(method: string, url: string, o: { on?: Replica; token?: string; body?: unknown } = {}): Promise<ApiReply<T>> => {
    const base = o.on?.url ?? (balancer as Balancer).url;
    const res = await fetch(`${base}${url}`, {
      method,
      headers: {
        ...(o.token ? { authorization: `Bearer ${o.token}` } : {}),
        ...(o.body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(o.body !== undefined ? { body: JSON.stringify(o.body) } : {}),
    });
    return { status: res.status, body: (await res.json()) as ApiReply<T>['body'] };
  };
  const call = async <T>(method: string, url: string, o: { on?: Replica; token?: string; body?: unknown } = {}): Promise<T> => {
    const reply = await api<T>(method, url, o);
    if (reply.status >= 300) throw new Error(`${method} ${url}: ${reply.status} ${reply.body.message}`);
    return reply.body.data as T;
  };
  return {
    replicas,
    balancer,
    url: balancer.url,
    databaseUrl: database.url,
    redisPrefix,
    api,
    call,
    rootToken: async () =>
      (await call<{ access_token: string }>('POST', '/api/auth/login', { body: { username: 'root', password: CLUSTER_ADMIN_PASSWORD } }))
        .access_token,
    query: async (text, values) => (await pool.query(text, values)).rows,
    async kill(replica) {
      replica.alive = false;
      replica.run.child.kill('SIGKILL');
      await replica.run.exited;
      // Killed, the server could not stop what it started: an operator's supervisor would, with the container.
      killUpstreams(replica);
    },
    close,
  };
}

/** Live (not zombie) processes whose working directory is `dir` or below it. */
export function processesIn(dir: string): number[] {
  const real = realpathSync(dir);
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2)[0] === 'Z') continue;
      const cwd = readlinkSync(`/proc/${entry}/cwd`);
      if (cwd === real || cwd.startsWith(`${real}/`)) found.push(Number(entry));
    } catch {
      // Ended while /proc was read, or not ours to read.
    }
  }
  return found;
}

/** The upstream processes one replica runs for a service: their working directory is DATA_DIR/services/<id>. */
export function upstreamsOf(replica: Replica, serviceId: number): number[] {
  const dir = path.join(replica.dataDir, 'services', String(serviceId));
  try {
    return processesIn(dir);
  } catch {
    return [];
  }
}

function killUpstreams(replica: Replica): void {
  let pids: number[] = [];
  try {
    pids = processesIn(replica.dataDir);
  } catch {
    return;
  }
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
}

/** Removes every key under `prefix` from the shared Redis. */
export async function dropRedisKeys(prefix: string): Promise<void> {
  const client = createClient({ url: REDIS_URL });
  await client.connect();
  try {
    const keys = await client.keys(`${prefix}*`);
    if (keys.length > 0) await client.del(keys);
  } finally {
    await client.close();
  }
}

/** Hop-by-hop headers (RFC 9110 §7.6.1): each side of the balancer has its own connection. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer']);

function endToEnd(headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  const out: http.OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value;
  return out;
}

export interface Forwarded {
  replica: number;
  method: string;
  path: string;
  sessionId: string | undefined;
}

/**
 * A round-robin HTTP load balancer: every request goes to the next replica in turn (no stickiness of
 * any kind), bodies are streamed both ways as they come (SSE works), and a replica that refuses the
 * connection is skipped — the request, not sent yet, goes to the next one. A request that was sent
 * to a replica that then died is answered 502, as a real balancer would; clients retry.
 */
export class Balancer {
  /** Requests each replica answered (index by replica). */
  readonly served: number[];
  /** Requests sent on to the next replica because one refused the connection. */
  skipped = 0;
  /** Every request forwarded, in order; `track` off keeps only the counts (the bench). */
  readonly log: Forwarded[] = [];
  track = true;
  private next = 0;
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly replicas: Replica[],
    private readonly server: http.Server,
  ) {
    this.served = replicas.map(() => 0);
  }

  static async start(replicas: Replica[]): Promise<Balancer> {
    const server = http.createServer();
    const balancer = new Balancer(replicas, server);
    server.on('request', (req, res) => balancer.forward(req, res, 0));
    server.on('connection', (socket) => {
      socket.setNoDelay(true);
      balancer.sockets.add(socket);
      socket.on('close', () => balancer.sockets.delete(socket));
    });
    // A client streaming for minutes (legacy SSE) must not be cut by the server's own timeouts.
    server.requestTimeout = 0;
    server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return balancer;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Requests each replica answered since `before` (a copy of `served` taken earlier). */
  since(before: number[]): number[] {
    return this.served.map((n, i) => n - (before[i] ?? 0));
  }

  private forward(req: http.IncomingMessage, res: http.ServerResponse, attempt: number): void {
    const index = this.next % this.replicas.length;
    this.next += 1;
    const target = this.replicas[index] as Replica;
    const upstream = http.request({
      host: '127.0.0.1',
      port: target.port,
      method: req.method,
      path: req.url,
      headers: endToEnd(req.headers),
      agent: this.agent,
    });
    let sent = false;
    const send = () => {
      sent = true;
      req.pipe(upstream);
    };
    // The body is read only once the connection is up, so a refused connection leaves it for the next replica.
    // Small writes go out at once both ways (no Nagle delay against the peer's delayed ACK).
    upstream.setNoDelay(true);
    upstream.once('socket', (socket) => {
      if (socket.connecting) socket.once('connect', send);
      else send();
    });
    upstream.on('response', (answer) => {
      this.served[index] = (this.served[index] ?? 0) + 1;
      if (this.track) {
        const session = req.headers['mcp-session-id'];
        this.log.push({
          replica: index,
          method: req.method ?? '',
          path: req.url ?? '',
          sessionId: typeof session === 'string' ? session : undefined,
        });
      }
      res.writeHead(answer.statusCode ?? 502, endToEnd(answer.headers));
      // An event stream's client must see the headers before the first event; other answers go out in one write.
      if (String(answer.headers['content-type'] ?? '').startsWith('text/event-stream')) res.flushHeaders();
      answer.pipe(res);
      answer.on('error', () => res.destroy());
    });
    upstream.on('error', (err: NodeJS.ErrnoException) => {
      if (!sent && err.code === 'ECONNREFUSED' && attempt + 1 < this.replicas.length) {
        this.skipped += 1;
        this.forward(req, res, attempt + 1);
        return;
      }
      if (!res.headersSent) {
        res.writeHead(502, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ success: false, message: `replica ${target.name}: ${err.code ?? err.message}` }));
      } else {
        res.destroy();
      }
    });
    // The client went away (a closed event stream): so does the request to the replica.
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.agent.destroy();
  }
}

/** The nginx configuration shipped for compose.cluster.yaml. */
export const SHIPPED_NGINX_CONF = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../../../../deploy/nginx-cluster.conf');

export interface Nginx {
  url: string;
  /** The shipped configuration as it was run: upstream servers and listen address rewritten, nothing else. */
  site: string;
  stop(): Promise<void>;
}

/**
 * Debian's nginx in front of the replicas with the configuration operators get (deploy/nginx-cluster.conf):
 * only the compose names are replaced by the replicas' loopback ports and the listen address by a free one,
 * so the test proves the shipped settings (buffering, timeouts, retries) with real MCP clients.
 */
export async function startNginx(replicas: Replica[]): Promise<Nginx> {
  const binary = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => existsSync(p));
  if (!binary) throw new Error('nginx is missing: install it with `apt-get install -y nginx-light` (.ci/run does)');
  const shipped = readFileSync(SHIPPED_NGINX_CONF, 'utf8');
  const servers = shipped.match(/^\s*server toolport-\d+:3000[^;]*;$/gm) ?? [];
  if (servers.length !== 3) throw new Error(`expected three upstream servers in ${SHIPPED_NGINX_CONF}, found ${servers.length}`);
  const port = await freePort();
  const upstreams = replicas.map((r) => `  server 127.0.0.1:${r.port} max_fails=1 fail_timeout=5s;`).join('\n');
  const site = shipped.replace(servers.join('\n'), upstreams).replace(/^(\s*)listen 80;$/m, `$1listen 127.0.0.1:${port};`);
  if (!site.includes(`listen 127.0.0.1:${port};`) || !site.includes(`127.0.0.1:${replicas[0]?.port}`)) {
    throw new Error('could not adapt the shipped nginx configuration');
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'toolport-nginx-'));
  // Workers may run as another user: their temporary directories must be theirs too.
  chmodSync(dir, 0o777);
  writeFileSync(path.join(dir, 'site.conf'), site);
  writeFileSync(
    path.join(dir, 'nginx.conf'),
    [
      'worker_processes 1;',
      `pid ${dir}/nginx.pid;`,
      `error_log ${dir}/error.log warn;`,
      'events { worker_connections 512; }',
      'http {',
      '  access_log off;',
      `  client_body_temp_path ${dir}/body;`,
      `  proxy_temp_path ${dir}/proxy;`,
      `  fastcgi_temp_path ${dir}/fastcgi;`,
      `  uwsgi_temp_path ${dir}/uwsgi;`,
      `  scgi_temp_path ${dir}/scgi;`,
      `  include ${dir}/site.conf;`,
      '}',
      '',
    ].join('\n'),
  );
  const child = spawn(binary, ['-p', dir, '-c', path.join(dir, 'nginx.conf'), '-g', 'daemon off;'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nginx exited at start: ${stderr}`);
    const up = await fetch(`${url}/api/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    if (Date.now() > deadline) throw new Error(`nginx did not answer within 10 s: ${stderr}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    site,
    async stop() {
      // SIGTERM: a fast stop (SIGQUIT would wait for the clients' open event streams to end).
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
