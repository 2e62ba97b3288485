import { createHash } from 'node:crypto';
import { analyse } from './search-text.js';

export { stem, tokenize } from './search-text.js';

/**
 * The ranker behind a discovery group's `search_tools` (issues 17 and 28; docs/decisions/0033 and
 * 0046): a BM25F-style lexical ranker of our own, with no dependency and no outside service. Pure: it
 * knows tools only as `{name, description, inputSchema}` and nothing of sessions or groups.
 *
 * - Four fields with their own weights: the tool's own name, its description, its parameters' names
 *   and descriptions, and its service (the name's prefix before the separator, with the service's
 *   own words when given). A term's frequencies are length-normalised per field, weighted and summed
 *   before BM25's saturation (BM25F), so a word in the name counts more than deep in a description.
 * - Text analysis (search-text.ts): normalisation, Porter2 stemming (search-stem.ts), CJK bigrams,
 *   and the concepts of the built-in bilingual vocabulary (search-vocabulary.ts) as extra terms, so a
 *   query in other words or in Chinese meets an English description. The very word of the query
 *   counts twice (itself and its concept), so the tool that says what the query says still comes first.
 * - Postings per term hold each tool's field-weighted frequency, computed once per list: a search
 *   reads only the tools that share a term with the query (or a kin word: docs/decisions/0052).
 */

/** What the ranker reads of a tool; every other field is carried through untouched. */
export interface SearchableTool {
  name: string;
  description?: unknown;
  inputSchema?: unknown;
}

export interface ToolHit<T> {
  tool: T;
  score: number;
  /**
   * The share of the query's words and concepts this tool matched (CJK bigrams count only when the
   * query has nothing else): a low share on the best hit means nothing matched well.
   */
  coverage: number;
}

/** How the names are namespaced, and what each service says of itself (its display name and description). */
export interface IndexOptions {
  separator?: string;
  services?: ReadonlyMap<string, string>;
}

/** Field weights and BM25 parameters, tuned on the evaluation set (docs/performance.md, "Discovery search"). */
export const FIELD_WEIGHTS = { name: 3, description: 1, params: 0.5, service: 1 } as const;
/** A concept of the vocabulary counts a little more than a word (decision 0052): the very word of the query counts about twice. */
export const CONCEPT_WEIGHT = 1.1;
/** Saturation of a concept's weight by how often the query says it (BM25's k3). */
const QUERY_K = 1.5;
const K1 = 1.2;
/** A query word no tool says meets the words sharing its first PREFIX letters, each at KIN_WEIGHT. */
const PREFIX = 5;
const KIN_WEIGHT = 0.5;
const B = { name: 0.3, description: 0.75, params: 0.75, service: 0.3 } as const;
type Field = keyof typeof FIELD_WEIGHTS;
const FIELDS: readonly Field[] = ['name', 'description', 'params', 'service'];
const CJK_TERM = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]/;

/** A tool's parameters as text: each property's name and description, one level of nesting deep. */
function paramsText(schema: unknown, depth = 0): string {
  if (!schema || typeof schema !== 'object' || depth > 2) return '';
  const s = schema as { properties?: unknown; items?: unknown; description?: unknown };
  const parts: string[] = [];
  if (depth > 0 && typeof s.description === 'string') parts.push(s.description);
  if (s.properties && typeof s.properties === 'object') {
    for (const [name, prop] of Object.entries(s.properties as Record<string, unknown>)) {
      parts.push(name, paramsText(prop, depth + 1));
    }
  }
  if (s.items) parts.push(paramsText(s.items, depth + 1));
  return parts.filter(Boolean).join(' ');
}

/** The four fields of a tool as text. */
function fieldsOf(tool: SearchableTool, options: IndexOptions): Record<Field, string> {
  const at = options.separator ? tool.name.indexOf(options.separator) : -1;
  const service = at > 0 ? tool.name.slice(0, at) : '';
  return {
    name: at > 0 ? tool.name.slice(at + (options.separator?.length ?? 0)) : tool.name,
    description: typeof tool.description === 'string' ? tool.description : '',
    params: paramsText(tool.inputSchema),
    service: service && `${service} ${options.services?.get(service) ?? ''}`,
  };
}

/** An index of one tool list; built once per list (see ToolIndexCache) and searched many times. */
export class ToolIndex<T extends SearchableTool> {
  /** term -> [tool index, field-weighted length-normalised frequency] */
  private readonly postings = new Map<string, [number, number][]>();
  /** The first PREFIX letters of the list's English words -> those words: where a word the list never says finds its kin. */
  private readonly kin = new Map<string, string[]>();

  constructor(
    readonly tools: readonly T[],
    options: IndexOptions = {},
  ) {
    const perTool = tools.map((tool) => {
      const text = fieldsOf(tool, options);
      const terms = {} as Record<Field, string[]>;
      const extra = {} as Record<Field, string[]>;
      for (const f of FIELDS) ({ terms: terms[f], concepts: extra[f] } = analyse(text[f]));
      return { terms, extra };
    });
    const n = Math.max(1, tools.length);
    const avg = {} as Record<Field, number>;
    for (const f of FIELDS) avg[f] = Math.max(1, perTool.reduce((s, d) => s + d.terms[f].length, 0) / n);
    perTool.forEach((doc, i) => {
      const weighted = new Map<string, number>();
      for (const f of FIELDS) {
        // Only the text's own words make a field long: the concepts it also says do not.
        const norm = FIELD_WEIGHTS[f] / (1 - B[f] + (B[f] * doc.terms[f].length) / avg[f]);
        for (const t of [...doc.terms[f], ...doc.extra[f]]) weighted.set(t, (weighted.get(t) ?? 0) + norm);
      }
      for (const [t, w] of weighted) {
        let list = this.postings.get(t);
        if (!list) {
          list = [];
          this.postings.set(t, list);
          if (t.length >= PREFIX && /^[a-z]/.test(t)) {
            const kin = this.kin.get(t.slice(0, PREFIX)) ?? [];
            kin.push(t);
            this.kin.set(t.slice(0, PREFIX), kin);
          }
        }
        list.push([i, w]);
      }
    });
  }

  /** The best matching tools (of those `only` keeps), best first; tools that match no query term are left out. */
  search(query: string, limit = 5, only?: (tool: T) => boolean): ToolHit<T>[] {
    if (limit < 1) return [];
    const weights = new Map<string, number>();
    const asked = analyse(query);
    for (const t of asked.terms) weights.set(t, 1);
    // A concept several words of the query say ("coffee shops nearby") counts more, saturating.
    const said = new Map<string, number>();
    for (const c of asked.concepts) said.set(c, (said.get(c) ?? 0) + 1);
    for (const [c, times] of said) weights.set(c, (CONCEPT_WEIGHT * times * (QUERY_K + 1)) / (QUERY_K + times));
    const counted = [...weights.keys()].filter((t) => !CJK_TERM.test(t));
    const units = new Set(counted.length > 0 ? counted : weights.keys());
    // A word no tool says ("memorised", "configs") stands for the list's words that begin as it does, at less
    // weight; they do not count in the coverage.
    for (const t of asked.terms) {
      if (this.postings.has(t) || t.length < PREFIX) continue;
      for (const other of this.kin.get(t.slice(0, PREFIX)) ?? []) if (!weights.has(other)) weights.set(other, KIN_WEIGHT);
    }
    const n = this.tools.length;
    // Per tool: its score and how many of the query's units it matched, in arrays the index keeps (a search is
    // synchronous: nothing else uses them meanwhile); `touched` lists the tools with a score, to read and reset.
    const { score, matched, seen } = this.scratch();
    const touched: number[] = [];
    for (const [term, weight] of weights) {
      const list = this.postings.get(term);
      if (!list) continue;
      const idf = Math.log(1 + (n - list.length + 0.5) / (list.length + 0.5));
      const unit = units.has(term) ? 1 : 0;
      const scale = weight * idf;
      for (const [i, w] of list) {
        if (seen[i] === 0) {
          seen[i] = 1;
          touched.push(i);
        }
        score[i] = (score[i] as number) + (scale * w * (K1 + 1)) / (K1 + w);
        matched[i] = (matched[i] as number) + unit;
      }
    }
    // The best `limit` of them, best first; equal scores keep the list's order.
    const best: number[] = [];
    const before = (a: number, b: number) => (score[a] as number) > (score[b] as number) || (score[a] === score[b] && a < b);
    for (const i of touched) {
      if (only && !only(this.tools[i] as T)) continue;
      if (best.length === limit && !before(i, best[limit - 1] as number)) continue;
      let at = best.length < limit ? best.length : limit - 1;
      while (at > 0 && before(i, best[at - 1] as number)) {
        best[at] = best[at - 1] as number;
        at -= 1;
      }
      best[at] = i;
    }
    const hits = best.map((i) => ({
      tool: this.tools[i] as T,
      score: score[i] as number,
      coverage: (matched[i] as number) / Math.max(1, units.size),
    }));
    for (const i of touched) {
      score[i] = 0;
      matched[i] = 0;
      seen[i] = 0;
    }
    return hits;
  }

  private arrays?: { score: Float64Array; matched: Uint32Array; seen: Uint8Array };

  private scratch() {
    const n = this.tools.length;
    this.arrays ??= { score: new Float64Array(n), matched: new Uint32Array(n), seen: new Uint8Array(n) };
    return this.arrays;
  }
}

/**
 * Indexes by list: the same list (by identity, as a cached merged list is handed out again) reuses
 * its index; a new list with the same content (by a SHA-1 of names, descriptions, schemas and the
 * options) does too, and its hits are the earlier list's equal tools. Holds at most `max` lists,
 * dropping the oldest.
 */
export class ToolIndexCache<T extends SearchableTool> {
  private readonly byList = new WeakMap<readonly T[], { options: string; index: ToolIndex<T> }>();
  private readonly byPrint = new Map<string, ToolIndex<T>>();
  /** How many indexes were built: what the tests read to see the cache work. */
  builds = 0;

  constructor(private readonly max = 256) {}

  get(tools: readonly T[], options: IndexOptions = {}): ToolIndex<T> {
    const said = optionsPrint(options);
    const same = this.byList.get(tools);
    if (same?.options === said) return same.index;
    const print = `${said}\u0002${fingerprint(tools)}`;
    let index = this.byPrint.get(print);
    if (!index) {
      index = new ToolIndex(tools, options);
      this.builds += 1;
      if (this.byPrint.size >= this.max) this.byPrint.delete(this.byPrint.keys().next().value as string);
      this.byPrint.set(print, index);
    }
    this.byList.set(tools, { options: said, index });
    return index;
  }
}

const optionsPrint = (o: IndexOptions): string =>
  JSON.stringify([o.separator ?? '', [...(o.services ?? new Map())].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))]);

/** A SHA-1 of the tools' names, descriptions and schemas: what a list's index depends on. */
export function fingerprint(tools: readonly SearchableTool[]): string {
  const hash = createHash('sha1');
  for (const t of tools) {
    hash.update(t.name);
    hash.update('\u0000');
    hash.update(typeof t.description === 'string' ? t.description : '');
    hash.update('\u0000');
    hash.update(JSON.stringify(t.inputSchema ?? null) ?? '');
    hash.update('\u0001');
  }
  return `${tools.length}:${hash.digest('base64')}`;
}
