/**
 * The gateway's own work for one `search_tools` answer, before and after (issue 28); not part of `npm test`. From the
 * repository root:
 *
 *   BENCH_BEFORE=<commit> npx tsx bench/search-answer.bench.ts
 *
 * In process, no network: the evaluation set (apps/server/test/fixtures/tool-search-eval, 309 tools, 162 queries)
 * searched by this tree's DiscoverySearch (group-discovery.ts) and by the one at <commit> (its apps/server/src
 * extracted by bench/targets.ts: beforeTree), each answer serialised as the group face sends it (the JSON-RPC
 * result). First every answer is checked to be the same bytes on both sides; then CPU time per answer
 * (process.cpuUsage, not the wall clock, so that a loaded machine moves it less), the two sides taking turns
 * over BENCH_ROUNDS rounds: the median and spread of the rounds.
 */
import path from 'node:path';
import { DiscoverySearch } from '../apps/server/src/gateway/downstream/group-discovery.js';
import { evalQueries, evalTools, namespaced } from '../apps/server/test/tool-search-eval.js';
import { beforeTree } from './targets.js';

const BEFORE = process.env.BENCH_BEFORE;
if (!BEFORE) throw new Error('BENCH_BEFORE=<commit> names the gateway to compare with');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 12);
const REPEAT = 5;

const tree = path.dirname(path.dirname(beforeTree(BEFORE, 'answer')));
const old = (await import(path.join(tree, 'apps/server/src/gateway/downstream/group-discovery.ts'))) as {
  DiscoverySearch: new () => { answer(tools: unknown[], ctx: unknown): Promise<unknown> };
};

const list = namespaced(evalTools);
const members = [...new Set(list.map((t) => t.name.split('__')[0] as string))].map((name) => ({ name, description: `The ${name} server` }));
const ctx = (query: string) => ({ query, limit: 5, separator: '__', members, locale: 'en' as const });
const after = new DiscoverySearch();
const before = new old.DiscoverySearch();
// As group-face.ts sends it: the result's JSON (an older tree answered an object, serialised there).
const answer = {
  before: async (q: string) => {
    const result = await before.answer(list, ctx(q));
    return typeof result === 'string' ? result : JSON.stringify(result);
  },
  after: (q: string) => after.answer(list, ctx(q)),
};

let same = 0;
for (const q of evalQueries) if ((await answer.before(q.query)) === (await answer.after(q.query))) same += 1;
if (same !== evalQueries.length) throw new Error(`only ${same} of ${evalQueries.length} answers are the same bytes`);

const times: Record<'before' | 'after', number[]> = { before: [], after: [] };
for (let round = 0; round < ROUNDS; round++)
  for (const side of round % 2 === 0 ? (['before', 'after'] as const) : (['after', 'before'] as const)) {
    const started = process.cpuUsage();
    for (let r = 0; r < REPEAT; r++) for (const q of evalQueries) await answer[side](q.query);
    const used = process.cpuUsage(started);
    times[side].push((used.user + used.system) / (REPEAT * evalQueries.length));
  }
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1] as number;
const us = (x: number) => `${x.toFixed(1)} µs`;
console.log(`All ${same} answers the same bytes on both sides. CPU per answer, median of ${ROUNDS} rounds (spread):\n`);
console.log('| Side | CPU per answer | rounds |\n|---|---|---|');
for (const side of ['before', 'after'] as const)
  console.log(
    `| ${side === 'before' ? `before (${BEFORE})` : 'after (this tree)'} | ${us(median(times[side]))} | ${us(Math.min(...times[side]))}–${us(Math.max(...times[side]))} |`,
  );
console.log(`\nafter / before: **${(median(times.after) / median(times.before)).toFixed(3)}**`);
