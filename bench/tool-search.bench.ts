/**
 * The discovery ranker (issue 17, item 2; decision 0033); not part of `npm test`. Run from the repository root:
 *
 *   npx tsx bench/tool-search.bench.ts
 *
 * In one process, no network: the real MCP tools of apps/server/test/fixtures/tool-search (60) and the
 * same list repeated under 20 service names (1,200 tools, a large discovery group). It measures building
 * the index (what a changed tool list costs once), a search with the index cached (what each
 * `search_tools` call costs), and recall@5 / MRR on the fixture's queries. Prints a Markdown table.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ToolIndex } from '../apps/server/src/gateway/downstream/tool-search.js';

const dir = path.join(import.meta.dirname, '../apps/server/test/fixtures/tool-search');
type T = { server: string; name: string; description: string; inputSchema: unknown };
const tools = (JSON.parse(readFileSync(path.join(dir, 'tools.json'), 'utf8')) as { tools: T[] }).tools;
const queries = (JSON.parse(readFileSync(path.join(dir, 'queries.json'), 'utf8')) as { queries: { query: string; expected: string[] }[] })
  .queries;

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] ?? 0;
const ms = (x: number) => `${x.toFixed(3)} ms`;

function run(label: string, copies: number, quality: boolean) {
  const list = Array.from({ length: copies }, (_, c) => tools.map((t) => ({ ...t, name: `${t.server}${c || ''}__${t.name}` }))).flat();
  const builds: number[] = [];
  let index = new ToolIndex(list);
  for (let i = 0; i < 30; i++) {
    const start = performance.now();
    index = new ToolIndex(list);
    builds.push(performance.now() - start);
  }
  const searches: number[] = [];
  for (let round = 0; round < 20; round++)
    for (const q of queries) {
      const start = performance.now();
      index.search(q.query, 5);
      searches.push(performance.now() - start);
    }
  let recall = 0;
  let rr = 0;
  for (const q of queries) {
    const ranked = index.search(q.query, 20).map((h) => h.tool.name);
    recall += q.expected.filter((e) => ranked.slice(0, 5).includes(e)).length / q.expected.length;
    const first = ranked.findIndex((n) => q.expected.includes(n));
    rr += first >= 0 ? 1 / (first + 1) : 0;
  }
  // Twenty copies tie with each other, so their ranking says nothing of quality: only the fixture's is shown.
  const figures = quality ? `${(recall / queries.length).toFixed(3)} | ${(rr / queries.length).toFixed(3)}` : '— | —';
  console.log(`| ${label} | ${list.length} | ${ms(pct(builds, 50))} | ${ms(pct(searches, 50))} | ${ms(pct(searches, 99))} | ${figures} |`);
}

console.log('| List | Tools | Index build p50 | Search p50 | Search p99 | recall@5 | MRR |');
console.log('|---|---|---|---|---|---|---|');
run('fixture', 1, true);
run('fixture x20', 20, false);
