/**
 * Discovery search (issues 17 and 28; decisions 0033 and 0046); not part of `npm test`. Run from the repository root:
 *
 *   npx tsx bench/tool-search.bench.ts
 *   BENCH_ROUNDS=8 BENCH_BLOCK=25 npx tsx bench/tool-search.bench.ts
 *   BENCH_BEFORE=<commit> npx tsx bench/tool-search.bench.ts   # this tree's gateway against the one at <commit>
 *
 * 1. In process, no network: the evaluation set (apps/server/test/fixtures/tool-search-eval, 309 real tools,
 *    162 queries) — index build, search p50/p99, and recall@1 / recall@5 / MRR per subset beside a plain BM25.
 * 2. Through the real gateway on loopback, run as its own process (bench/search-target.ts, pinned to one core, this
 *    process to the other, as gateway.bench.ts does): three stdio members running
 *    apps/server/test/fixtures/published-tools-server.mjs that publish the evaluation tools (all 309, then 154 and 72 of
 *    them again under other service names: 535 tools), one group of them in `all` mode and one in `discovery`
 *    mode. Two clients ask each: an SDK 1.x client over streamable HTTP (what an agent runs) and a wire client
 *    (node:http with keep-alive, JSON.parse of the answer: the gateway's own cost with little of a client's).
 *    Three kinds of request, all answered from the group's cached merged list as in steady use: `tools/list` on the
 *    `all` group, `search_tools` (the evaluation queries in turn) and `ping` on the discovery group. After a warm-up,
 *    BENCH_ROUNDS rounds; each round runs BENCH_BLOCKS blocks of BENCH_BLOCK requests of each kind and client, the
 *    kinds' order rotating from block to block, so that the machine's load meets all three alike, and one pass
 *    that alternates the kinds call by call. p50 per kind over all blocks, the search/list ratio, and its spread
 *    over the rounds. With BENCH_BEFORE the gateway at that commit (bench/targets.ts: beforeTree) runs beside this
 *    tree's, the two taking turns round by round (ABBA), so that one run gives before and after. Last, `search_tools`
 *    right after a change of the group (its first search lists the members again and builds the index).
 *    Prints Markdown tables for docs/performance.md.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { loadavg } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
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
import { beforeTree, type GatewayTarget, pinSelf, startGateway } from './targets.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const BLOCKS = Number(process.env.BENCH_BLOCKS ?? 4);
const BLOCK = Number(process.env.BENCH_BLOCK ?? 25);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 50);
const COLD = Number(process.env.BENCH_COLD ?? 30);
const BEFORE = process.env.BENCH_BEFORE ?? '';
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
const here = path.dirname(fileURLToPath(import.meta.url));
const catalog = new URL('../apps/server/test/fixtures/published-tools-server.mjs', import.meta.url).pathname;
const load = () =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(' ');
const loadAtStart = load();
pinSelf();

/** CPU time (user + system) of the gateway's own process so far, in ms (/proc: clock ticks of 10 ms). */
const cpuMs = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
};

type Kind = 'list' | 'search' | 'ping';
const KINDS: readonly Kind[] = ['list', 'search', 'ping'];
type Via = 'sdk' | 'wire';
const query = (i: number) => evalQueries[i % evalQueries.length]?.query ?? '';
const searchArgs = (i: number) => ({ name: 'search_tools', arguments: { query: query(i) } });

/** The wire client: one keep-alive socket, one session per endpoint, each answer parsed and checked. */
async function wireSession(agent: http.Agent, endpoint: string, key: string) {
  const url = new URL(endpoint);
  const post = (headers: Record<string, string>, body: string) =>
    new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
      const req = http.request(
        url,
        { method: 'POST', agent, headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  const base = { accept: 'application/json, text/event-stream', 'content-type': 'application/json', authorization: `Bearer ${key}` };
  const version = '2025-06-18';
  const init = await post(
    base,
    JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
    }),
  );
  const session = init.headers['mcp-session-id'];
  if (init.status !== 200 || typeof session !== 'string') throw new Error(`initialize failed: ${init.status} ${init.body.slice(0, 200)}`);
  const headers = { ...base, 'mcp-session-id': session, 'mcp-protocol-version': version };
  await post(headers, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
  let id = 1;
  return async (method: string, params?: unknown) => {
    const mine = id++;
    const reply = await post(headers, JSON.stringify({ jsonrpc: '2.0', id: mine, method, ...(params ? { params } : {}) }));
    const message = JSON.parse(reply.body) as { id?: number; result?: Record<string, unknown> };
    if (reply.status !== 200 || message.id !== mine || !message.result)
      throw new Error(`${method} failed: ${reply.status} ${reply.body.slice(0, 200)}`);
    return message.result;
  };
}

interface Side {
  name: string;
  /** How many tools the `all` group lists. */
  size: number;
  target: GatewayTarget;
  run: Record<Via, Record<Kind, (i: number) => Promise<unknown>>>;
  /** Per round, per client and kind: the times of the blocks; and of the pass that alternates call by call. */
  rounds: { blocks: Record<Via, Record<Kind, number[]>>; alternating: Record<Kind, number[]> }[];
  /** The gateway's CPU time spent in each kind's blocks (ms) and how many requests they held. */
  cpu: Record<Kind, { ms: number; requests: number }>;
  cold: number[];
  close(): Promise<void>;
}

async function openSide(name: string, script: string): Promise<Side> {
  const target = await startGateway(script, { BENCH_CATALOG: catalog });
  const key = target.keys[0] as string;
  const connect = async (url: string) => {
    const client = new Client({ name: 'bench', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
    return client;
  };
  const all = await connect(`${target.url}/group/all500/mcp`);
  const find = await connect(`${target.url}/group/find500/mcp`);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const wireAll = await wireSession(agent, `${target.url}/group/all500/mcp`, key);
  const wireFind = await wireSession(agent, `${target.url}/group/find500/mcp`, key);
  const size = (await all.listTools()).tools.length;
  const listed = (n: number) => {
    if (n !== size) throw new Error(`tools/list answered ${n} tools, not ${size}`);
  };
  const found = (result: Record<string, unknown>) => {
    const tools = (result.structuredContent as { tools?: unknown[] } | undefined)?.tools;
    if (result.isError || !Array.isArray(tools)) throw new Error(`search_tools failed: ${JSON.stringify(result).slice(0, 200)}`);
  };
  return {
    name,
    size,
    target,
    run: {
      sdk: {
        list: async () => listed((await all.listTools()).tools.length),
        search: async (i) => found(await find.callTool(searchArgs(i))),
        ping: () => find.ping(),
      },
      wire: {
        list: async () => listed(((await wireAll('tools/list')).tools as unknown[]).length),
        search: async (i) => found(await wireFind('tools/call', searchArgs(i))),
        ping: () => wireFind('ping'),
      },
    },
    rounds: [],
    cpu: { list: { ms: 0, requests: 0 }, search: { ms: 0, requests: 0 }, ping: { ms: 0, requests: 0 } },
    cold: [],
    async close() {
      await all.close();
      await find.close();
      agent.destroy();
      await target.stop();
    },
  };
}

const sides: Side[] = [];
if (BEFORE) sides.push(await openSide(`before (${BEFORE})`, beforeTree(BEFORE, 'search', 'search-target.ts')));
sides.push(await openSide(BEFORE ? 'after (this tree)' : 'this tree', path.join(here, 'search-target.ts')));
const size = sides[0]?.size ?? 0;

let serial = 0;
for (const side of sides)
  for (const via of ['sdk', 'wire'] as const)
    for (const kind of KINDS) for (let i = 0; i < WARMUP; i++) await side.run[via][kind](serial++);

for (let round = 0; round < ROUNDS; round++) {
  // ABBA: each side goes first in every other round.
  const order = round % 2 === 0 ? sides : [...sides].reverse();
  for (const side of order) {
    const empty = () => ({ list: [] as number[], search: [] as number[], ping: [] as number[] });
    const figures = { blocks: { sdk: empty(), wire: empty() }, alternating: empty() };
    for (let b = 0; b < BLOCKS; b++) {
      const kinds = [...KINDS.slice(b % 3), ...KINDS.slice(0, b % 3)];
      for (const via of ['sdk', 'wire'] as const)
        for (const kind of kinds) {
          const cpuBefore = cpuMs(side.target.pid);
          for (let i = 0; i < BLOCK; i++) figures.blocks[via][kind].push(await timed(() => side.run[via][kind](serial++)));
          side.cpu[kind].ms += cpuMs(side.target.pid) - cpuBefore;
          side.cpu[kind].requests += BLOCK;
        }
    }
    for (let i = 0; i < BLOCK * BLOCKS; i++)
      for (const kind of KINDS) figures.alternating[kind].push(await timed(() => side.run.sdk[kind](serial++)));
    side.rounds.push(figures);
    const p = (via: Via, k: Kind) => percentile(figures.blocks[via][k], 50);
    process.stderr.write(
      `round ${round} ${side.name}: sdk list ${ms(p('sdk', 'list'))} search ${ms(p('sdk', 'search'))} ping ${ms(p('sdk', 'ping'))}` +
        ` (${(p('sdk', 'search') / p('sdk', 'list')).toFixed(3)}); wire list ${ms(p('wire', 'list'))} search ${ms(p('wire', 'search'))} ping ${ms(p('wire', 'ping'))}\n`,
    );
  }
}
// After a change of the group (an edit drops its merged lists): the first search lists the members again and builds the index.
for (let i = 0; i < COLD; i++)
  for (const side of i % 2 === 0 ? sides : [...sides].reverse()) {
    await side.target.ask('changed');
    side.cold.push(await timed(() => side.run.sdk.search(serial++)));
  }

const pooled = (side: Side, pick: (r: Side['rounds'][number]) => number[]) => side.rounds.flatMap(pick);
const spread = (xs: number[], digits = 3) => `${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)}`;
console.log(
  `\nThrough the gateway: ${size} tools; ${ROUNDS} rounds of ${BLOCKS} blocks of ${BLOCK} requests of each kind and client${BEFORE ? ', the two gateways taking turns' : ''}; load average ${loadAtStart} at the start, ${load()} at the end.\n`,
);
console.log(
  '| Gateway | Client | tools/list p50 | search_tools p50 | ping p50 | search / list | per round | search − ping |\n|---|---|---|---|---|---|---|---|',
);
for (const side of sides)
  for (const via of ['sdk', 'wire'] as const) {
    const p = (k: Kind) =>
      percentile(
        pooled(side, (r) => r.blocks[via][k]),
        50,
      );
    const perRound = side.rounds.map((r) => percentile(r.blocks[via].search, 50) / percentile(r.blocks[via].list, 50));
    console.log(
      `| ${side.name} | ${via} | ${ms(p('list'))} | ${ms(p('search'))} | ${ms(p('ping'))} | **${(p('search') / p('list')).toFixed(3)}** | ${spread(perRound)} | ${ms(p('search') - p('ping'))} |`,
    );
  }
console.log(
  '\n| Gateway | its CPU per request (blocks, both clients): tools/list | search_tools | ping | search / list |\n|---|---|---|---|---|',
);
for (const side of sides) {
  const per = (k: Kind) => side.cpu[k].ms / side.cpu[k].requests;
  console.log(
    `| ${side.name} | ${ms(per('list'))} | ${ms(per('search'))} | ${ms(per('ping'))} | ${(per('search') / per('list')).toFixed(3)} |`,
  );
}
console.log(
  '\n| Gateway | SDK client, kinds alternating call by call | tools/list p50 | search_tools p50 | ping p50 | search / list | per round |\n|---|---|---|---|---|---|---|',
);
for (const side of sides) {
  const p = (k: Kind) =>
    percentile(
      pooled(side, (r) => r.alternating[k]),
      50,
    );
  const perRound = side.rounds.map((r) => percentile(r.alternating.search, 50) / percentile(r.alternating.list, 50));
  console.log(
    `| ${side.name} | | ${ms(p('list'))} | ${ms(p('search'))} | ${ms(p('ping'))} | ${(p('search') / p('list')).toFixed(3)} | ${spread(perRound)} |`,
  );
}
console.log(
  '\n| Gateway | p99 (SDK, blocks): tools/list | search_tools | ping | search right after a change of the group: p50 | p99 |\n|---|---|---|---|---|---|',
);
for (const side of sides) {
  const p99 = (k: Kind) =>
    ms(
      percentile(
        pooled(side, (r) => r.blocks.sdk[k]),
        99,
      ),
    );
  console.log(
    `| ${side.name} | ${p99('list')} | ${p99('search')} | ${p99('ping')} | ${ms(percentile(side.cold, 50))} | ${ms(percentile(side.cold, 99))} |`,
  );
}
if (sides.length === 2) {
  const [before, after] = sides as [Side, Side];
  console.log('\n| after / before, p50 | tools/list | search_tools | ping |\n|---|---|---|---|');
  for (const via of ['sdk', 'wire'] as const) {
    const r = (k: Kind) =>
      (
        percentile(
          pooled(after, (x) => x.blocks[via][k]),
          50,
        ) /
        percentile(
          pooled(before, (x) => x.blocks[via][k]),
          50,
        )
      ).toFixed(3);
    console.log(`| ${via} | ${r('list')} | ${r('search')} | ${r('ping')} |`);
  }
  const cpu = (k: Kind) => (after.cpu[k].ms / after.cpu[k].requests / (before.cpu[k].ms / before.cpu[k].requests)).toFixed(3);
  console.log(`| gateway CPU per request | ${cpu('list')} | ${cpu('search')} | ${cpu('ping')} |`);
}

for (const side of sides) await side.close();
process.exit(0);
