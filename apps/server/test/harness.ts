import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { type AppParts, type BuildOptions, type BuiltApp, buildApp } from '../src/app.js';
import { type Config, loadConfig } from '../src/config.js';
import { type Engine, openDatabase } from '../src/db/db.js';
import { createLogger } from '../src/infra/logger.js';

/** Both engines every API suite runs on. PostgreSQL is the one running on this machine. */
export const engines: Engine[] = ['sqlite', 'postgres'];

export const ADMIN_PASSWORD = 'root-password-for-tests';

/** The server that creates and drops per-test databases; override with TEST_PG_ADMIN_URL. */
export const pgAdminUrl = process.env.TEST_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** A fresh, empty PostgreSQL database for one test app; `drop` removes it. */
export async function createPgDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `tp_test_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  const admin = new pg.Client({ connectionString: pgAdminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(pgAdminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: pgAdminUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

export interface TestApp {
  engine: Engine;
  app: FastifyInstance;
  /** Every part the app was built from. */
  ctx: AppParts;
  routes: BuiltApp['routes'];
  config: Config;
  dataDir: string;
  /** Signs in and returns the access token (throws when sign-in fails). */
  login(username: string, password: string): Promise<string>;
  /** An access token of the super admin `root`. */
  rootToken(): Promise<string>;
  /** Creates a user through the admin API and returns its id and access token. */
  createUser(opts?: { username?: string; password?: string; role?: 1 | 10 }): Promise<{ id: number; username: string; token: string }>;
  close(): Promise<void>;
}

let counter = 0;

/**
 * The real app on a fresh database of the given engine, with a temp DATA_DIR. `build.gateway` shortens
 * the gateway's timings for a suite that waits for one (e.g. `{ tuning: { initializeTimeoutMs: 5_000 } }`).
 */
export async function createTestApp(
  engine: Engine,
  env: Record<string, string> = {},
  build: Pick<BuildOptions, 'gateway'> = {},
): Promise<TestApp> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'toolport-test-'));
  const pgDb = engine === 'postgres' ? await createPgDatabase() : undefined;
  const config = loadConfig({
    DATA_DIR: dataDir,
    ADMIN_PASSWORD,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    SECRET_KEY: 'test-secret-key-that-is-long-enough-0123456789',
    ...(pgDb ? { DATABASE_URL: pgDb.url } : {}),
    ...env,
  });
  const database = openDatabase(config);
  const logger = createLogger(config.logLevel);
  const built = await buildApp({ config, database, logger, print: () => undefined, gateway: build.gateway });
  await built.app.ready();

  const login = async (username: string, password: string) => {
    const res = await built.app.inject({ method: 'POST', url: '/api/auth/login', payload: { username, password } });
    if (res.statusCode !== 200) throw new Error(`login ${username} failed: ${res.statusCode} ${res.body}`);
    return res.json().data.access_token as string;
  };
  const rootToken = () => login('root', ADMIN_PASSWORD);

  return {
    engine,
    app: built.app,
    ctx: built.ctx,
    routes: built.routes,
    config,
    dataDir,
    login,
    rootToken,
    async createUser(opts = {}) {
      counter += 1;
      const username = opts.username ?? `user${counter}_${Math.random().toString(36).slice(2, 7)}`;
      const password = opts.password ?? 'password-1234';
      const res = await built.app.inject({
        method: 'POST',
        url: '/api/user',
        headers: { authorization: `Bearer ${await rootToken()}` },
        payload: { username, password, display_name: username, role: opts.role ?? 1 },
      });
      if (res.statusCode !== 200 && res.statusCode !== 201) throw new Error(`create user failed: ${res.statusCode} ${res.body}`);
      const token = await login(username, password);
      const self = await built.app.inject({ method: 'GET', url: '/api/user/self', headers: { authorization: `Bearer ${token}` } });
      return { id: self.json().data.id as number, username, token };
    },
    async close() {
      // The app's one close path (src/lifecycle.ts); the database is this harness's to close.
      await built.close();
      await database.db.destroy();
      await pgDb?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
