/**
 * The gateway of bench/tool-search.bench.ts, run as its own process (pinned to a core by the benchmark, like
 * gateway-target.ts): the real app on a fresh SQLite data directory, one user, three stdio members running
 * apps/server/test/fixtures/published-tools-server.mjs that publish the evaluation tools (all 309, then 154 and 72
 * of them again under other service names: 535 tools), one group of them in `all` mode (`all500`) and one in
 * `discovery` mode (`find500`). Talks to the benchmark over IPC: sends `{ready, url, keys}`; `changed` drops the
 * groups' merged lists as an edit of a group does (the next search lists the members again and builds the index)
 * and answers `changed`; `stop` closes the app.
 *
 * Run by tool-search.bench.ts as `node --import tsx bench/search-target.ts`; add `--cpu-prof` to profile it.
 */
import { startBenchApp } from './bench-app.js';

// BENCH_CATALOG: the fixture server of the tree that runs the benchmark (an older gateway's tree has no fixtures).
const catalog = process.env.BENCH_CATALOG ?? new URL('../apps/server/test/fixtures/published-tools-server.mjs', import.meta.url).pathname;
// The log level of production (LOG_LEVEL's default): what a request writes there is part of its cost.
const bench = await startBenchApp({ prefix: 'toolport-bench-search-', logLevel: 'info' });
const { ctx } = bench;
const key = await bench.addUser('bench');
const members = [
  await bench.addStdioService('alpha', [catalog]),
  await bench.addStdioService('beta', [catalog], { CATALOG_SERVERS: 'github,gitlab,slack,notion,playwright,linear,cloudflare' }),
  await bench.addStdioService('gamma', [catalog], { CATALOG_SERVERS: 'kubernetes,mongodb,docker,filesystem' }),
];
const url = await bench.listen(Number(process.env.PORT ?? 0));
const now = Date.now();
for (const [name, mode] of [
  ['all500', 'all'],
  ['find500', 'discovery'],
] as const) {
  const row = await ctx.db
    .insertInto('groups')
    .values({ name, display_name: name, description: '', mode, separator: '__', created_at: now, updated_at: now })
    .returning('id')
    .executeTakeFirstOrThrow();
  await ctx.db
    .insertInto('group_members')
    .values(members.map((service_id, position) => ({ group_id: row.id, service_id, position, tools_json: '' })))
    .execute();
}

process.on('message', (message: { type: string }) => {
  if (message.type === 'changed') {
    ctx.events.emit({ type: 'groups.changed' });
    process.send?.({ type: 'changed' });
  }
  if (message.type === 'stop') void bench.close().then(() => process.exit(0));
});
process.send?.({ type: 'ready', url, keys: [key] });
