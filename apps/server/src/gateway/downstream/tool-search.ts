import { createHash } from 'node:crypto';

/**
 * The ranker behind a discovery group's `search_tools` (issue 17, item 2; docs/decisions/0033): a
 * BM25F-style lexical ranker of our own, with no dependency and no outside service. Pure: it knows
 * tools only as `{name, description, inputSchema}` and nothing of sessions or groups.
 *
 * - Three fields with their own weights: the tool's name, its description, and its parameters'
 *   names and descriptions. A term's frequencies in the fields are length-normalised per field,
 *   weighted and summed before BM25's saturation (BM25F), so a word in the name counts more than
 *   the same word deep in a long description.
 * - English: names split on `_`, `-`, `.` and camelCase; lowercase; a small stopword list; a light
 *   stemmer (plurals, -ing, -ed, a final -e) so "files", "filing" and "file" meet.
 * - Chinese (and the other CJK scripts): each run of CJK characters becomes its character bigrams,
 *   or the character itself when the run is one character long, so "查询余票" meets "余票信息".
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
}

/** Field weights and BM25 parameters, chosen by hand; test/fixtures/tool-search measures them (docs/performance.md). */
export const FIELD_WEIGHTS = { name: 3, description: 1, params: 0.5 } as const;
const K1 = 1.2;
const B = { name: 0.3, description: 0.75, params: 0.75 } as const;
type Field = keyof typeof FIELD_WEIGHTS;
const FIELDS: readonly Field[] = ['name', 'description', 'params'];

const STOPWORDS = new Set(
  (
    'a an the of to in on for and or is are was were be been it its this that these those with by as at from into ' +
    'i me my you your we our can could will would should do does did how what which when where who please want ' +
    'some any all me us if then than so such there here get gets'
  ).split(' '),
);

// Han (with extensions and compatibility ideographs), kana and hangul.
const CJK = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]/;
const CJK_RUNS = /([\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+)/g;

/** A light English stemmer: enough to make plurals and -ing/-ed forms meet their base word. */
export function stem(word: string): string {
  let w = word;
  if (w.length > 4 && w.endsWith('ies')) w = `${w.slice(0, -3)}y`;
  else if (w.length > 4 && /(?:ss|x|ch|sh|z)es$/.test(w)) w = w.slice(0, -2);
  else if (w.length > 3 && w.endsWith('s') && !/(?:ss|us|is)$/.test(w)) w = w.slice(0, -1);
  if (w.length > 5 && w.endsWith('ing')) w = w.slice(0, -3);
  else if (w.length > 4 && w.endsWith('ed')) w = w.slice(0, -2);
  // committ -> commit, runn -> run (but not "all", "ss" endings of "process").
  if (w.length > 3 && /([b-df-hj-np-rtv-z])\1$/.test(w) && !/(?:ll|ss|zz|ff)$/.test(w)) w = w.slice(0, -1);
  if (w.length > 3 && w.endsWith('e')) w = w.slice(0, -1);
  return w;
}

/** Text to index terms: English words normalised and stemmed, CJK runs as character bigrams. */
export function tokenize(text: string): string[] {
  const spaced = text
    // getFileInfo -> get File Info, HTMLParser -> HTML Parser
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .replace(CJK_RUNS, ' $1 ')
    .toLowerCase();
  const out: string[] = [];
  for (const piece of spaced.split(/[^\p{L}\p{N}]+/u)) {
    if (!piece) continue;
    if (CJK.test(piece)) {
      const chars = [...piece];
      if (chars.length === 1) out.push(piece);
      for (let i = 0; i + 1 < chars.length; i++) out.push(`${chars[i]}${chars[i + 1]}`);
      continue;
    }
    if (STOPWORDS.has(piece)) continue;
    out.push(stem(piece));
  }
  return out;
}

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

interface Doc {
  /** Term frequencies per field. */
  tf: Record<Field, Map<string, number>>;
  len: Record<Field, number>;
}

function counts(terms: string[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const t of terms) m.set(t, (m.get(t) ?? 0) + 1);
  return m;
}

/** An index of one tool list; built once per list (see ToolIndexCache) and searched many times. */
export class ToolIndex<T extends SearchableTool> {
  private readonly docs: Doc[];
  private readonly df = new Map<string, number>();
  private readonly avg: Record<Field, number>;

  constructor(readonly tools: readonly T[]) {
    this.docs = tools.map((tool) => {
      const text: Record<Field, string> = {
        name: tool.name,
        description: typeof tool.description === 'string' ? tool.description : '',
        params: paramsText(tool.inputSchema),
      };
      const tf = {} as Doc['tf'];
      const len = {} as Doc['len'];
      const seen = new Set<string>();
      for (const f of FIELDS) {
        const terms = tokenize(text[f]);
        tf[f] = counts(terms);
        len[f] = terms.length;
        for (const t of terms) seen.add(t);
      }
      for (const t of seen) this.df.set(t, (this.df.get(t) ?? 0) + 1);
      return { tf, len };
    });
    const n = Math.max(1, this.docs.length);
    this.avg = {
      name: Math.max(1, this.docs.reduce((s, d) => s + d.len.name, 0) / n),
      description: Math.max(1, this.docs.reduce((s, d) => s + d.len.description, 0) / n),
      params: Math.max(1, this.docs.reduce((s, d) => s + d.len.params, 0) / n),
    };
  }

  /** The best matching tools, best first; tools that match no query term are left out. */
  search(query: string, limit = 5): ToolHit<T>[] {
    const terms = [...new Set(tokenize(query))];
    if (terms.length === 0 || limit < 1) return [];
    const n = this.docs.length;
    const idf = new Map(terms.map((t) => [t, Math.log(1 + (n - (this.df.get(t) ?? 0) + 0.5) / ((this.df.get(t) ?? 0) + 0.5))]));
    const hits: ToolHit<T>[] = [];
    this.docs.forEach((doc, i) => {
      let score = 0;
      for (const t of terms) {
        let weighted = 0;
        for (const f of FIELDS) {
          const freq = doc.tf[f].get(t);
          if (!freq) continue;
          weighted += (FIELD_WEIGHTS[f] * freq) / (1 - B[f] + (B[f] * doc.len[f]) / this.avg[f]);
        }
        if (weighted > 0) score += ((idf.get(t) ?? 0) * weighted * (K1 + 1)) / (K1 + weighted);
      }
      if (score > 0) hits.push({ tool: this.tools[i] as T, score });
    });
    // Stable: equal scores keep the list's order.
    return hits.sort((a, b) => b.score - a.score).slice(0, limit);
  }
}

/**
 * Indexes by list: the same list (by identity, as a cached merged list is handed out again) reuses
 * its index; a new list with the same content (by a SHA-1 of names, descriptions and schemas) does
 * too, and its hits are the earlier list's equal tools. Holds at most `max` lists, dropping the oldest.
 */
export class ToolIndexCache<T extends SearchableTool> {
  private readonly byList = new WeakMap<readonly T[], ToolIndex<T>>();
  private readonly byPrint = new Map<string, ToolIndex<T>>();
  /** How many indexes were built: what the tests read to see the cache work. */
  builds = 0;

  constructor(private readonly max = 256) {}

  get(tools: readonly T[]): ToolIndex<T> {
    const same = this.byList.get(tools);
    if (same) return same;
    const print = fingerprint(tools);
    let index = this.byPrint.get(print);
    if (!index) {
      index = new ToolIndex(tools);
      this.builds += 1;
      if (this.byPrint.size >= this.max) this.byPrint.delete(this.byPrint.keys().next().value as string);
      this.byPrint.set(print, index);
    }
    this.byList.set(tools, index);
    return index;
  }
}

function fingerprint(tools: readonly SearchableTool[]): string {
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
