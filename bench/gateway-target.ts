/**
 * The gateway under test, run as its own process (pinned to a core by the benchmark): the real
 * app on a fresh SQLite data directory with twenty users and server-everything installed as a stdio
 * service. Talks to the benchmark over IPC: sends `{ready, url, keys}`, answers `memory` requests
 * with the process memory after a full garbage collection.
 *
 * Run by gateway.bench.ts as `node --expose-gc --import tsx bench/gateway-target.ts`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Role, UserStatus } from '@toolport/contract';
import { buildApp } from '../apps/server/src/app.js';
import { loadConfig } from '../apps/server/src/config.js';
import { openDatabase } from '../apps/server/src/db/db.js';
import { createLogger } from '../apps/server/src/infra/logger.js';
import { issueApiKey } from '../apps/server/src/modules/users/api-keys.js';

const require = createRequire(import.meta.url);
const everything = path.join(path.dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')), 'dist/index.js');

const dataDir = mkdtempSync(path.join(tmpdir(), 'toolport-bench-'));
const config = loadConfig({
  DATA_DIR: dataDir,
  ADMIN_PASSWORD: 'bench-admin-password',
  SECRET_KEY: 'bench-secret-key-that-is-long-enough-0123456789',
  LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
  // metering.bench.ts runs the deferred count writes beside the durable ones (the default).
  ...(process.env.METER_COUNT_WRITES ? { METER_COUNT_WRITES: process.env.METER_COUNT_WRITES } : {}),
});
const database = openDatabase(config);
const { app, ctx } = await buildApp({ config, database, logger: createLogger(config.logLevel), print: () => undefined });

// Several users: one user may hold at most 100 sessions per replica, and the idle-session step opens 1,000.
const keys: string[] = [];
const now = Date.now();
for (let i = 0; i < 20; i += 1) {
  const key = issueApiKey(ctx.secrets);
  keys.push(key.plain);
  await ctx.usersRepo.insert({
    username: `bench${i}`,
    display_name: `bench${i}`,
    email: '',
    password_hash: null,
    role: Role.User,
    status: UserStatus.Enabled,
    api_key_hash: key.hash,
    api_key_enc: key.encrypted,
    created_at: now,
    updated_at: now,
  });
}
const service = await ctx.db
  .insertInto('services')
  .values({
    name: 'everything',
    display_name: 'everything',
    description: '',
    type: 'stdio',
    source: 'custom',
    package_name: '',
    package_manager: '',
    version: '',
    command: process.execPath,
    args_json: JSON.stringify([everything, 'stdio']),
    env_enc: ctx.secrets.encryptJson({}),
    headers_enc: ctx.secrets.encryptJson({}),
    env_schema_json: '[]',
    install_dir: '',
    enabled: 1,
    isolation: 'shared',
    rpd_limit: 0,
    health_status: 'unknown',
    health_details: '',
    last_health_check: null,
    tool_count: 0,
    created_at: now,
    updated_at: now,
  })
  .returning('id')
  .executeTakeFirstOrThrow();
ctx.events.emit({ type: 'service.changed', serviceId: service.id });

await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) });
const address = app.server.address();
const port = typeof address === 'object' && address ? address.port : 0;

// BENCH_CREDENTIALS=oauth: each user signs in through the OAuth server (bench/oauth.bench.ts), and the
// benchmark gets their access tokens instead of their API keys.
if (process.env.BENCH_CREDENTIALS === 'oauth') {
  const { oauthTokens } = await import('./oauth-tokens.js');
  const tokens = await oauthTokens(app, ctx, `http://127.0.0.1:${port}`, 'everything');
  keys.splice(0, keys.length, ...tokens);
}

const gc = (globalThis as { gc?: () => void }).gc;
/** Memory after garbage collection has settled: several full collections, a pause between them. */
async function settledMemory() {
  for (let i = 0; i < 3; i += 1) {
    gc?.();
    await new Promise((r) => setTimeout(r, 200));
  }
  const m = process.memoryUsage();
  return { type: 'memory', rss: m.rss, heapUsed: m.heapUsed, external: m.external, sessions: ctx.gateway.sessions.size };
}

process.on('message', (message: { type: string }) => {
  if (message.type === 'memory') void settledMemory().then((m) => process.send?.(m));
  if (message.type === 'stop') {
    void app.close().then(async () => {
      await database.db.destroy();
      rmSync(dataDir, { recursive: true, force: true });
      process.exit(0);
    });
  }
});
process.send?.({ type: 'ready', url: `http://127.0.0.1:${port}`, keys });
