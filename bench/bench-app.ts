/**
 * The real app as the benchmarks run it (shared by gateway-target.ts and groups.bench.ts): buildApp on a
 * fresh SQLite data directory, users with API keys and stdio services inserted straight into the
 * database (no install step) by the gateway suites' addUser and addService
 * (apps/server/test/gateway/gateway-harness.ts), listening on loopback.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type AppParts, buildApp } from '../apps/server/src/app.js';
import { loadConfig } from '../apps/server/src/config.js';
import { openDatabase } from '../apps/server/src/db/db.js';
import { createLogger } from '../apps/server/src/infra/logger.js';
import { addService, addUser } from '../apps/server/test/gateway/gateway-harness.js';

export interface BenchApp {
  app: Awaited<ReturnType<typeof buildApp>>['app'];
  ctx: AppParts;
  /** Adds a role-1 user and returns their API key. */
  addUser(username: string): Promise<string>;
  /** Adds an enabled, shared stdio service running `node args…` (with `env`) and announces it; returns its id. */
  addStdioService(name: string, args: string[], env?: Record<string, string>): Promise<number>;
  /** Listens on loopback (PORT or any free port) and returns the base URL. */
  listen(port?: number): Promise<string>;
  close(): Promise<void>;
}

export async function startBenchApp(opts: { prefix: string; logLevel?: string }): Promise<BenchApp> {
  const dataDir = mkdtempSync(path.join(tmpdir(), opts.prefix));
  const config = loadConfig({
    DATA_DIR: dataDir,
    ADMIN_PASSWORD: 'bench-admin-password',
    SECRET_KEY: 'bench-secret-key-that-is-long-enough-0123456789',
    LOG_LEVEL: process.env.LOG_LEVEL ?? opts.logLevel ?? 'warn',
    // metering.bench.ts runs the deferred count writes beside the durable ones (the default).
    ...(process.env.METER_COUNT_WRITES ? { METER_COUNT_WRITES: process.env.METER_COUNT_WRITES } : {}),
  });
  const database = openDatabase(config);
  const { app, ctx } = await buildApp({ config, database, logger: createLogger(config.logLevel), print: () => undefined });
  return {
    app,
    ctx,
    addUser: async (username) => (await addUser(ctx, username)).key,
    addStdioService: (name, args, env) => addService(ctx, { name, command: process.execPath, args, ...(env ? { env } : {}) }),
    async listen(port = 0) {
      await app.listen({ host: '127.0.0.1', port });
      const address = app.server.address();
      if (!address || typeof address === 'string') throw new Error('not listening');
      return `http://127.0.0.1:${address.port}`;
    },
    async close() {
      await app.close();
      await database.db.destroy();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
