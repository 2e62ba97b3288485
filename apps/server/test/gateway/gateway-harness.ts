import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Role, UserStatus } from '@toolport/contract';
import type { FastifyInstance } from 'fastify';
import type { AppParts } from '../../src/app.js';
import { buildApp } from '../../src/app.js';
import { type Config, loadConfig } from '../../src/config.js';
import { type DbHandle, type Engine, openDatabase } from '../../src/db/db.js';
import type { GatewayOptions } from '../../src/gateway/index.js';
import { signAccessToken } from '../../src/http/access-tokens.js';
import { createLogger } from '../../src/infra/logger.js';
import { issueApiKey } from '../../src/modules/users/api-keys.js';
import { ADMIN_PASSWORD, createPgDatabase } from '../harness.js';
import { serviceRow } from '../kits/service-row.js';

const require = createRequire(import.meta.url);

/** server-everything's launcher, run with this Node: `node <entry> stdio|sse|streamableHttp`. */
export const everythingEntry = path.join(
  path.dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')),
  'dist/index.js',
);

/**
 * The real app listening on 127.0.0.1 (any free port), for real MCP clients. `restart` closes it and
 * builds it again on the same database, data directory and port, as an operator restart would.
 */
export interface LiveGateway {
  engine: Engine;
  url: string;
  app: FastifyInstance;
  ctx: AppParts;
  config: Config;
  restart(): Promise<void>;
  close(): Promise<void>;
}

/** A step of a close that hangs says so on stderr every 20 s, with what is still running (a hook time-out alone does not). */
async function watched<T>(what: string, step: Promise<T>, detail: () => string): Promise<T> {
  const timer = setInterval(() => process.stderr.write(`[gateway-harness] ${what} is still running: ${detail()}\n`), 20_000);
  timer.unref();
  try {
    return await step;
  } finally {
    clearInterval(timer);
  }
}

export async function startGateway(engine: Engine, env: Record<string, string> = {}, gateway?: GatewayOptions): Promise<LiveGateway> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'toolport-gw-'));
  const pgDb = engine === 'postgres' ? await createPgDatabase() : undefined;
  const config = loadConfig({
    DATA_DIR: dataDir,
    ADMIN_PASSWORD,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    SECRET_KEY: 'test-secret-key-that-is-long-enough-0123456789',
    ...(pgDb ? { DATABASE_URL: pgDb.url } : {}),
    ...env,
  });
  let port = 0;
  let database: DbHandle;
  const boot = async () => {
    database = openDatabase(config);
    const built = await buildApp({ config, database, logger: createLogger(config.logLevel), print: () => undefined, gateway });
    await built.app.listen({ host: '127.0.0.1', port });
    const address = built.app.server.address();
    if (!address || typeof address === 'string') throw new Error('gateway did not listen on a TCP port');
    port = address.port;
    return built;
  };
  const stop = async (app: FastifyInstance) => {
    await watched('the app’s close', app.close(), () => `closing part: ${built.closingPart() ?? 'none (Fastify itself)'}`);
    await watched('the database pool’s end', database.db.destroy(), () => engine);
  };

  let built = await boot();
  const live: LiveGateway = {
    engine,
    url: `http://127.0.0.1:${port}`,
    app: built.app,
    ctx: built.ctx,
    config,
    async restart() {
      await stop(live.app);
      built = await boot();
      live.app = built.app;
      live.ctx = built.ctx;
    },
    async close() {
      await stop(live.app);
      if (pgDb) await watched('the test database’s drop', pgDb.drop(), () => pgDb.url);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return live;
}

/** A user with an API key, inserted directly so these suites depend on the gateway only. */
export async function addUser(ctx: AppParts, name: string): Promise<{ id: number; key: string }> {
  const key = issueApiKey(ctx.secrets);
  const now = Date.now();
  const row = await ctx.usersRepo.insert({
    username: name,
    display_name: name,
    email: '',
    password_hash: null,
    role: Role.User,
    status: UserStatus.Enabled,
    api_key_hash: key.hash,
    api_key_enc: key.encrypted,
    created_at: now,
    updated_at: now,
  });
  return { id: row.id, key: key.plain };
}

/** A user with a console access token beside the API key; `role` other than a user's is set first (an admin, say). */
export async function addUserWithToken(
  ctx: AppParts,
  name: string,
  role: number = Role.User,
): Promise<{ id: number; key: string; token: string }> {
  const user = await addUser(ctx, name);
  if (role !== Role.User) await ctx.usersRepo.update(user.id, { role });
  const row = await ctx.usersRepo.byId(user.id);
  return { ...user, token: await signAccessToken(ctx.secrets.jwtKey, { userId: user.id, authVersion: row?.auth_version ?? 0 }) };
}

/** One call of the console API over HTTP with a bearer token: the status and the parsed body. */
export async function apiCall(
  base: string,
  token: string,
  method: string,
  url: string,
  body?: unknown,
  headers: Record<string, string> = {},
  // biome-ignore lint/suspicious/noExplicitAny: the assertions check the answers' fields themselves
): Promise<{ status: number; body: { success?: boolean; data?: any; message?: string } }> {
  const res = await fetch(`${base}/api${url}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as { success?: boolean; data?: unknown; message?: string } };
}

export async function setUserEnabled(ctx: AppParts, userId: number, enabled: boolean): Promise<void> {
  await ctx.usersRepo.update(userId, { status: enabled ? UserStatus.Enabled : UserStatus.Disabled, updated_at: Date.now() });
  ctx.events.emit({ type: 'user.changed', userId });
}

export interface ServiceInput {
  name: string;
  type?: 'stdio' | 'sse' | 'streamableHttp';
  /** stdio: the executable; remote: the URL. */
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  headers?: Record<string, string>;
  rpdLimit?: number;
  enabled?: boolean;
}

/** A service row as the admin API would store it (secrets encrypted), announced to the gateway. */
export async function addService(ctx: AppParts, input: ServiceInput): Promise<number> {
  const row = await ctx.db
    .insertInto('services')
    .values(
      serviceRow({
        name: input.name,
        display_name: input.name,
        type: input.type ?? 'stdio',
        command: input.command ?? process.execPath,
        args_json: JSON.stringify(input.args ?? [everythingEntry, 'stdio']),
        env_enc: ctx.secrets.encryptJson(input.env ?? {}),
        headers_enc: ctx.secrets.encryptJson(input.headers ?? {}),
        enabled: input.enabled === false ? 0 : 1,
        rpd_limit: input.rpdLimit ?? 0,
      }),
    )
    .returning('id')
    .executeTakeFirstOrThrow();
  ctx.events.emit({ type: 'service.changed', serviceId: row.id });
  return row.id;
}

export async function setServiceEnabled(ctx: AppParts, serviceId: number, enabled: boolean): Promise<void> {
  await ctx.db
    .updateTable('services')
    .set({ enabled: enabled ? 1 : 0, updated_at: Date.now() })
    .where('id', '=', serviceId)
    .execute();
  ctx.events.emit({ type: 'service.changed', serviceId });
}

/**
 * Live (not zombie) processes whose command line contains `marker` and that descend from this test
 * process, read from /proc: the upstream processes the gateway started.
 */
export function liveChildren(marker: string): number[] {
  const parentOf = new Map<number, number>();
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Fields after the parenthesised command: state, ppid, …
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      parentOf.set(Number(entry), Number(ppid));
      if (state === 'Z') continue;
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker)) found.push(Number(entry));
    } catch {
      // The process ended while /proc was read.
    }
  }
  const descends = (pid: number): boolean => {
    for (let p = parentOf.get(pid); p !== undefined && p > 1; p = parentOf.get(p)) if (p === process.pid) return true;
    return false;
  };
  return found.filter(descends);
}
