import { describe, expect, it } from 'vitest';
import { ToolIndex } from '../src/gateway/downstream/tool-search.js';
import {
  blindQueries,
  bm25Baseline,
  type EvalQuery,
  evalQueries,
  evalTools,
  type Figures,
  measure,
  namespaced,
  type QueryKind,
  sharedWords,
} from './tool-search-eval.js';

const KINDS: QueryKind[] = ['plain', 'paraphrase', 'chinese'];
const isChinese = (q: string) => /[\u4e00-\u9fff]/.test(q);

/**
 * The discovery evaluation set of issue 28 (decision 0046; figures in docs/performance.md): its
 * make-up, the paraphrases' mechanical check, and floors per subset a little below what was measured.
 */
describe('the discovery evaluation set', () => {
  it('holds at least 300 real tools of at least 20 servers, each with its source, and 150 queries, a third of each kind', () => {
    expect(evalTools.length).toBeGreaterThanOrEqual(300);
    expect(new Set(evalTools.map((t) => t.server)).size).toBeGreaterThanOrEqual(20);
    for (const t of evalTools) expect(t.source, t.name).toMatch(/^(npm \S+@\d\S*|github \S+\/\S+ \S+)/);
    expect(evalQueries.length).toBeGreaterThanOrEqual(150);
    for (const kind of KINDS) expect(evalQueries.filter((q) => q.kind === kind).length).toBeGreaterThanOrEqual(50);
    const names = new Set(namespaced(evalTools).map((t) => t.name));
    expect(names.size).toBe(evalTools.length);
    for (const q of evalQueries) {
      expect(q.expected.length, q.id).toBeGreaterThan(0);
      for (const e of q.expected) expect(names.has(e), `${q.id}: ${e}`).toBe(true);
      expect(isChinese(q.query), q.id).toBe(q.kind === 'chinese');
    }
    expect(new Set(evalQueries.map((q) => q.id)).size).toBe(evalQueries.length);
  });

  it('has a blind held-out set of at least 90 queries, a third of each kind, on the same tools, none a query of the main set', () => {
    expect(blindQueries.length).toBeGreaterThanOrEqual(90);
    for (const kind of KINDS) expect(blindQueries.filter((q) => q.kind === kind).length).toBeGreaterThanOrEqual(30);
    const names = new Set(namespaced(evalTools).map((t) => t.name));
    const main = new Set(evalQueries.map((q) => q.query.toLowerCase()));
    for (const q of blindQueries) {
      expect(q.expected.length, q.id).toBeGreaterThan(0);
      for (const e of q.expected) expect(names.has(e), `${q.id}: ${e}`).toBe(true);
      expect(isChinese(q.query), q.id).toBe(q.kind === 'chinese');
      expect(main.has(q.query.toLowerCase()), q.id).toBe(false);
      if (q.kind === 'paraphrase') expect(sharedWords(q, evalTools), `${q.id} ${q.query}`).toEqual([]);
    }
    expect(new Set([...evalQueries, ...blindQueries].map((q) => q.id)).size).toBe(evalQueries.length + blindQueries.length);
  });

  it('has paraphrases that share no content word with their expected tools’ names and descriptions', () => {
    for (const q of evalQueries.filter((x) => x.kind === 'paraphrase')) expect(sharedWords(q, evalTools), `${q.id} ${q.query}`).toEqual([]);
    // The check can fail: a plain query naming its tool shares its words.
    const plain = evalQueries.find((q) => q.id === 'p01');
    expect(plain && sharedWords(plain, evalTools)).toEqual(expect.arrayContaining(['creat', 'pull']));
  });

  it('keeps recall@1, recall@5 and MRR per subset above their floors, beside a plain BM25', () => {
    const list = namespaced(evalTools);
    const index = new ToolIndex(list, { separator: '__' });
    const ours = (q: string) => index.search(q, 20).map((h) => h.tool.name);
    const baseline = bm25Baseline(list);
    const figures = {} as Record<QueryKind, Figures>;
    const rows: string[] = [];
    for (const kind of KINDS) {
      const subset = evalQueries.filter((q) => q.kind === kind);
      const f = measure(ours, subset);
      const b = measure(baseline, subset);
      figures[kind] = f;
      rows.push(
        `${kind} (${f.n}): recall@1 ${f.recall1.toFixed(3)}, recall@5 ${f.recall5.toFixed(3)}, MRR ${f.mrr.toFixed(3)}; ` +
          `BM25 ${b.recall1.toFixed(3)} / ${b.recall5.toFixed(3)} / ${b.mrr.toFixed(3)}\n    misses: ${f.misses.join('\n    ') || 'none'}`,
      );
    }
    console.log(`discovery evaluation set:\n  ${rows.join('\n  ')}`);
    // Measured (docs/performance.md, decision 0052): plain 0.943 / 1.000 / 0.967, paraphrase 0.434 / 0.896 / 0.605,
    // Chinese 0.821 / 1.000 / 0.896 (recall@1 / recall@5 / MRR). The issue asks recall@5 ≥ 0.95, 0.8, 0.8.
    const floors: Record<QueryKind, [number, number, number]> = {
      plain: [0.9, 0.98, 0.93],
      paraphrase: [0.42, 0.88, 0.58],
      chinese: [0.8, 0.98, 0.87],
    };
    // The blind held-out set: reported, never tuned on, so no floors (docs/performance.md has its figures).
    const blind: string[] = [];
    for (const kind of KINDS) {
      const subset: EvalQuery[] = blindQueries.filter((q) => q.kind === kind);
      const f = measure(ours, subset);
      const b = measure(baseline, subset);
      blind.push(
        `${kind} (${f.n}): recall@1 ${f.recall1.toFixed(3)}, recall@5 ${f.recall5.toFixed(3)}, MRR ${f.mrr.toFixed(3)}; ` +
          `BM25 ${b.recall1.toFixed(3)} / ${b.recall5.toFixed(3)} / ${b.mrr.toFixed(3)}\n    misses: ${f.misses.join('\n    ') || 'none'}`,
      );
    }
    console.log(`blind held-out set:\n  ${blind.join('\n  ')}`);
    for (const kind of KINDS) {
      const [r1, r5, mrr] = floors[kind];
      expect(figures[kind].recall1, `${kind} recall@1`).toBeGreaterThanOrEqual(r1);
      expect(figures[kind].recall5, `${kind} recall@5`).toBeGreaterThanOrEqual(r5);
      expect(figures[kind].mrr, `${kind} MRR`).toBeGreaterThanOrEqual(mrr);
    }
  });
});
