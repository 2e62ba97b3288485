/**
 * Groups benchmark (issue 17); not part of `npm test`. Run from the repository root:
 *
 *   npx tsx bench/groups.bench.ts
 *   BENCH_CALLS=500 BENCH_LISTS=100 BENCH_COLD_LISTS=50 npx tsx bench/groups.bench.ts
 *
 * In one process, on loopback, the real app (bench/bench-app.ts: buildApp on a fresh SQLite data
 * directory) with 20 stdio services running the test fixture server
 * (apps/server/test/fixtures/fixture-mcp-server.mjs: small, so twenty of them fit a shared machine), one
 * group of all twenty, and an SDK 1.x client over streamable HTTP. It measures:
 *
 * 1. `tools/list` on the group of 20 members, sequentially: cold (the group's list cache dropped before
 *    each list, as any change drops it: a fan-out to every member) and cached (answered from the cache);
 * 2. the same `tools/call` (the fixture's echo) through `/group/bench/mcp` and through
 *    `/proxy/member-0/mcp`, interleaved call by call in the same run: p50, p99 and their ratio.
 *
 * Prints a Markdown table for docs/performance.md.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startBenchApp } from './bench-app.js';

const CALLS = Number(process.env.BENCH_CALLS ?? 2000);
const LISTS = Number(process.env.BENCH_LISTS ?? 500);
const COLD_LISTS = Number(process.env.BENCH_COLD_LISTS ?? 100);
const MEMBERS = 20;
const fixture = new URL('../apps/server/test/fixtures/fixture-mcp-server.mjs', import.meta.url).pathname;

const bench = await startBenchApp({ prefix: 'toolport-bench-groups-' });
const { ctx } = bench;
const key = await bench.addUser('bench');
const ids: number[] = [];
for (let i = 0; i < MEMBERS; i += 1) ids.push(await bench.addStdioService(`member-${i}`, [fixture]));
const base = await bench.listen();
const now = Date.now();
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
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
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

// Cold: every list after a change (here a groups.changed event, which drops the cache as an edit would).
const cold: number[] = [];
for (let i = 0; i < COLD_LISTS; i += 1) {
  ctx.events.emit({ type: 'groups.changed' });
  cold.push(await timed(() => group.listTools()));
}
// Cached: nothing changes between lists.
await group.listTools();
const lists: number[] = [];
for (let i = 0; i < LISTS; i += 1) lists.push(await timed(() => group.listTools()));

const viaGroup: number[] = [];
const viaProxy: number[] = [];
for (let i = 0; i < CALLS; i += 1) {
  viaGroup.push(await timed(() => group.callTool({ name: 'member-0__echo', arguments: { text: `g${i}` } })));
  viaProxy.push(await timed(() => proxy.callTool({ name: 'echo', arguments: { text: `p${i}` } })));
}

const c = summary(cold);
const l = summary(lists);
const g = summary(viaGroup);
const p = summary(viaProxy);
const ms = (n: number) => n.toFixed(3);
console.log(`\n| measurement (${MEMBERS} members, ${first.tools.length} tools) | p50 ms | p99 ms |`);
console.log('| --- | ---: | ---: |');
console.log(`| tools/list on the group, cold: cache dropped before each (${COLD_LISTS} sequential) | ${ms(c.p50)} | ${ms(c.p99)} |`);
console.log(`| tools/list on the group, from the cache (${LISTS} sequential) | ${ms(l.p50)} | ${ms(l.p99)} |`);
console.log(`| tools/call through /group (${CALLS}, interleaved) | ${ms(g.p50)} | ${ms(g.p99)} |`);
console.log(`| tools/call through /proxy (${CALLS}, interleaved) | ${ms(p.p50)} | ${ms(p.p99)} |`);
console.log(`\ncold/cached tools/list at p50: ${(c.p50 / l.p50).toFixed(1)}x`);
console.log(`group/proxy ratio at p50: ${(g.p50 / p.p50).toFixed(3)}, at p99: ${(g.p99 / p.p99).toFixed(3)}`);

await group.close();
await proxy.close();
await bench.close();
