/**
 * Groups benchmark (issue 17); not part of `npm test`. Run from the repository root:
 *
 *   npx tsx bench/groups.bench.ts
 *   BENCH_CALLS=500 npx tsx bench/groups.bench.ts
 *
 * In one process, on loopback, the real app (buildApp on a fresh SQLite data directory) with 20 stdio
 * services running the test fixture server (apps/server/test/fixtures/fixture-mcp-server.mjs: small,
 * so twenty of them fit a shared machine), one group of all twenty, and an SDK 1.x client over
 * streamable HTTP. It measures:
 *
 * 1. `tools/list` on the group of 20 members, sequentially: p50 and p99;
 * 2. the same `tools/call` (the fixture's echo) through `/group/bench/mcp` and through
 *    `/proxy/member-0/mcp`, interleaved call by call in the same run: p50, p99 and their ratio.
 *
 * Prints a Markdown table for docs/performance.md.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Role, UserStatus } from '@toolport/contract';
import { buildApp } from '../apps/server/src/app.js';
import { loadConfig } from '../apps/server/src/config.js';
import { openDatabase } from '../apps/server/src/db/db.js';
import { createLogger } from '../apps/server/src/infra/logger.js';
import { issueApiKey } from '../apps/server/src/modules/users/api-keys.js';

const CALLS = Number(process.env.BENCH_CALLS ?? 2000);
const LISTS = Number(process.env.BENCH_LISTS ?? 500);
const MEMBERS = 20;
const fixture = new URL('../apps/server/test/fixtures/fixture-mcp-server.mjs', import.meta.url).pathname;

const dataDir = mkdtempSync(path.join(tmpdir(), 'toolport-bench-groups-'));
const config = loadConfig({
  DATA_DIR: dataDir,
  ADMIN_PASSWORD: 'bench-admin-password',
  SECRET_KEY: 'bench-secret-key-that-is-long-enough-0123456789',
  LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
});
const database = openDatabase(config);
const { app, ctx } = await buildApp({ config, database, logger: createLogger(config.logLevel), print: () => undefined });
await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address();
if (!address || typeof address === 'string') throw new Error('not listening');
const base = `http://127.0.0.1:${address.port}`;

const now = Date.now();
const key = issueApiKey(ctx.secrets);
await ctx.usersRepo.insert({
  username: 'bench',
  display_name: 'bench',
  email: '',
  password_hash: null,
  role: Role.User,
  status: UserStatus.Enabled,
  api_key_hash: key.hash,
  api_key_enc: key.encrypted,
  created_at: now,
  updated_at: now,
});
const ids: number[] = [];
for (let i = 0; i < MEMBERS; i += 1) {
  const row = await ctx.db
    .insertInto('services')
    .values({
      name: `member-${i}`,
      display_name: `member-${i}`,
      description: '',
      type: 'stdio',
      source: 'custom',
      package_name: '',
      package_manager: '',
      version: '',
      command: process.execPath,
      args_json: JSON.stringify([fixture]),
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
  ids.push(row.id);
  ctx.events.emit({ type: 'service.changed', serviceId: row.id });
}
const groupRow = await ctx.db
  .insertInto('groups')
  .values({ name: 'bench', display_name: 'bench', description: '', mode: 'all', separator: '__', created_at: now, updated_at: now })
  .returning('id')
  .executeTakeFirstOrThrow();
await ctx.db
  .insertInto('group_members')
  .values(ids.map((service_id, position) => ({ group_id: groupRow.id, service_id, position, tools_json: '' })))
  .execute();

const connect = async (url: string) => {
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${key.plain}` } } }),
  );
  return client;
};
const group = await connect(`${base}/group/bench/mcp`);
const proxy = await connect(`${base}/proxy/member-0/mcp`);

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
const summary = (times: number[]) => {
  const sorted = [...times].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
};
const timed = async (work: () => Promise<unknown>) => {
  const started = performance.now();
  await work();
  return performance.now() - started;
};

// Warm-up: every member started and listed once.
const first = await group.listTools();
if (first.tools.length < MEMBERS) throw new Error(`expected tools of ${MEMBERS} members, got ${first.tools.length}`);
for (let i = 0; i < 200; i += 1) {
  await group.callTool({ name: 'member-0__echo', arguments: { text: 'warm' } });
  await proxy.callTool({ name: 'echo', arguments: { text: 'warm' } });
}

const lists: number[] = [];
for (let i = 0; i < LISTS; i += 1) lists.push(await timed(() => group.listTools()));

const viaGroup: number[] = [];
const viaProxy: number[] = [];
for (let i = 0; i < CALLS; i += 1) {
  viaGroup.push(await timed(() => group.callTool({ name: 'member-0__echo', arguments: { text: `g${i}` } })));
  viaProxy.push(await timed(() => proxy.callTool({ name: 'echo', arguments: { text: `p${i}` } })));
}

const l = summary(lists);
const g = summary(viaGroup);
const p = summary(viaProxy);
const ms = (n: number) => n.toFixed(3);
console.log(`\n| measurement (${MEMBERS} members, ${first.tools.length} tools) | p50 ms | p99 ms |`);
console.log('| --- | ---: | ---: |');
console.log(`| tools/list on the group (${LISTS} sequential) | ${ms(l.p50)} | ${ms(l.p99)} |`);
console.log(`| tools/call through /group (${CALLS}, interleaved) | ${ms(g.p50)} | ${ms(g.p99)} |`);
console.log(`| tools/call through /proxy (${CALLS}, interleaved) | ${ms(p.p50)} | ${ms(p.p99)} |`);
console.log(`\ngroup/proxy ratio at p50: ${(g.p50 / p.p50).toFixed(3)}, at p99: ${(g.p99 / p.p99).toFixed(3)}`);

await group.close();
await proxy.close();
await app.close();
await database.db.destroy();
rmSync(dataDir, { recursive: true, force: true });
