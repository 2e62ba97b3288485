/**
 * Discovery search (issues 17 and 28; decisions 0033 and 0046); not part of `npm test`. Run from the repository root:
 *
 *   npx tsx bench/tool-search.bench.ts
 *   BENCH_SEARCHES=1000 npx tsx bench/tool-search.bench.ts
 *
 * 1. In process, no network: the evaluation set (apps/server/test/fixtures/tool-search-eval, 309 real tools,
 *    162 queries) — index build, search p50/p99, and recall@1 / recall@5 / MRR per subset beside a plain BM25.
 * 2. Through the real gateway on loopback (bench/bench-app.ts): three stdio members running
 *    apps/server/test/fixtures/published-tools-server.mjs that publish the evaluation tools (all 309, then 154 and 72 of
 *    them again under other service names: 535 tools), one group of them in `all` mode and one in `discovery`
 *    mode, an SDK 1.x client over streamable HTTP. In one run, interleaved: `tools/list` on the `all` group and
 *    `search_tools` (the evaluation queries in turn) on the discovery group, both answered from the group's
 *    cached merged list, as in steady use; then `search_tools` right after a change of the group (its first
 *    search builds the index). Prints Markdown tables for docs/performance.md.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolIndex } from '../apps/server/src/gateway/downstream/tool-search.js';
import {
  blindQueries,
  bm25Baseline,
  evalQueries,
  evalTools,
  measure,
  namespaced,
  type QueryKind,
} from '../apps/server/test/tool-search-eval.js';
import { startBenchApp } from './bench-app.js';

const SEARCHES = Number(process.env.BENCH_SEARCHES ?? 500);
const COLD = Number(process.env.BENCH_COLD ?? 30);
const percentile = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] ?? 0;
const ms = (x: number) => `${x.toFixed(3)} ms`;
const timed = async (work: () => unknown) => {
  const started = performance.now();
  await work();
  return performance.now() - started;
};

// ---- 1. In process
const list = namespaced(evalTools);
const builds: number[] = [];
let index = new ToolIndex(list, { separator: '__' });
for (let i = 0; i < 30; i++) builds.push(await timed(() => (index = new ToolIndex(list, { separator: '__' }))));
const searches: number[] = [];
for (let round = 0; round < 10; round++) for (const q of evalQueries) searches.push(await timed(() => index.search(q.query, 5)));
console.log(`| In process | Tools | Index build p50 | Search p50 | Search p99 |\n|---|---|---|---|---|`);
console.log(
  `| evaluation set | ${list.length} | ${ms(percentile(builds, 50))} | ${ms(percentile(searches, 50))} | ${ms(percentile(searches, 99))} |\n`,
);

const ours = (q: string) => index.search(q, 20).map((h) => h.tool.name);
const baseline = bm25Baseline(list);
console.log('| Queries | recall@1 | recall@5 | MRR | BM25 recall@1 | BM25 recall@5 | BM25 MRR |\n|---|---|---|---|---|---|---|');
for (const kind of ['plain', 'paraphrase', 'chinese', 'all'] as (QueryKind | 'all')[]) {
  const subset = kind === 'all' ? evalQueries : evalQueries.filter((q) => q.kind === kind);
  const a = measure(ours, subset);
  const b = measure(baseline, subset);
  const f = (x: number) => x.toFixed(3);
  console.log(`| ${kind} (${a.n}) | ${f(a.recall1)} | ${f(a.recall5)} | ${f(a.mrr)} | ${f(b.recall1)} | ${f(b.recall5)} | ${f(b.mrr)} |`);
}
// The blind held-out set (decision 0052): reported, never tuned on.
console.log('\n| Blind held-out | recall@1 | recall@5 | MRR | BM25 recall@1 | BM25 recall@5 | BM25 MRR |\n|---|---|---|---|---|---|---|');
for (const kind of ['plain', 'paraphrase', 'chinese', 'all'] as (QueryKind | 'all')[]) {
  const subset = kind === 'all' ? blindQueries : blindQueries.filter((q) => q.kind === kind);
  const a = measure(ours, subset);
  const b = measure(baseline, subset);
  const f = (x: number) => x.toFixed(3);
  console.log(`| ${kind} (${a.n}) | ${f(a.recall1)} | ${f(a.recall5)} | ${f(a.mrr)} | ${f(b.recall1)} | ${f(b.recall5)} | ${f(b.mrr)} |`);
}

// ---- 2. Through the gateway
const catalog = new URL('../apps/server/test/fixtures/published-tools-server.mjs', import.meta.url).pathname;
const bench = await startBenchApp({ prefix: 'toolport-bench-search-' });
const { ctx } = bench;
const key = await bench.addUser('bench');
const members = [
  await bench.addStdioService('alpha', [catalog]),
  await bench.addStdioService('beta', [catalog], { CATALOG_SERVERS: 'github,gitlab,slack,notion,playwright,linear,cloudflare' }),
  await bench.addStdioService('gamma', [catalog], { CATALOG_SERVERS: 'kubernetes,mongodb,docker,filesystem' }),
];
const base = await bench.listen();
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
const connect = async (url: string) => {
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  return client;
};
const all = await connect(`${base}/group/all500/mcp`);
const find = await connect(`${base}/group/find500/mcp`);
const size = (await all.listTools()).tools.length;
const search = (i: number) => find.callTool({ name: 'search_tools', arguments: { query: evalQueries[i % evalQueries.length]?.query } });
await search(0);

const lists: number[] = [];
const found: number[] = [];
const pings: number[] = [];
for (let i = 0; i < SEARCHES; i++) {
  lists.push(await timed(() => all.listTools()));
  found.push(await timed(() => search(i)));
  pings.push(await timed(() => find.ping()));
}
// The same, one after the other: a block of searches, then a block of lists (the client and the gateway share
// this process, so the garbage of a 535-tool list lands in the interleaved search that follows it).
const foundAlone: number[] = [];
for (let i = 0; i < SEARCHES; i++) foundAlone.push(await timed(() => search(i)));
const listsAlone: number[] = [];
for (let i = 0; i < SEARCHES; i++) listsAlone.push(await timed(() => all.listTools()));
// After a change of the group (an edit drops its merged lists): the first search lists the members again and builds the index.
const cold: number[] = [];
for (let i = 0; i < COLD; i++) {
  ctx.events.emit({ type: 'groups.changed' });
  cold.push(await timed(() => search(i)));
}
const l50 = percentile(lists, 50);
const s50 = percentile(found, 50);
console.log(`\n| Through the gateway (${size} tools, ${SEARCHES} each, interleaved) | p50 | p99 |\n|---|---|---|`);
console.log(`| tools/list, \`all\` group | ${ms(l50)} | ${ms(percentile(lists, 99))} |`);
console.log(`| search_tools, discovery group | ${ms(s50)} | ${ms(percentile(found, 99))} |`);
console.log(`| tools/list, \`all\` group, in a block of its own | ${ms(percentile(listsAlone, 50))} | ${ms(percentile(listsAlone, 99))} |`);
console.log(
  `| search_tools, discovery group, in a block of its own | ${ms(percentile(foundAlone, 50))} | ${ms(percentile(foundAlone, 99))} |`,
);
console.log(`| ping, discovery group (the floor of a request) | ${ms(percentile(pings, 50))} | ${ms(percentile(pings, 99))} |`);
console.log(`| search_tools right after a change of the group (${COLD}) | ${ms(percentile(cold, 50))} | ${ms(percentile(cold, 99))} |`);
console.log(
  `\nsearch_tools / tools/list at p50: interleaved ${(s50 / l50).toFixed(3)}, in blocks ${(percentile(foundAlone, 50) / percentile(listsAlone, 50)).toFixed(3)}`,
);

await all.close();
await find.close();
await bench.close();
