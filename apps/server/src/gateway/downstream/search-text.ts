import { stemEnglish } from './search-stem.js';
import { VOCABULARY } from './search-vocabulary.js';

/**
 * Text analysis of discovery search (issue 28; docs/decisions/0046 and 0052), the same for a tool's
 * text and a query: normalisation (Unicode width and compatibility forms, case, punctuation,
 * contractions, snake_case and camelCase), Porter2 stemming (search-stem.ts), stop words, CJK runs as
 * character bigrams, and the concepts of the built-in vocabulary (search-vocabulary.ts) as extra
 * terms `~concept`.
 */

const STOPWORDS = new Set(
  (
    'a an the of to in on for and or is are was were be been it its this that these those with by as at from into ' +
    'i me my you your we our can could will would should do does did how what which when where who please want ' +
    'some any all me us if then than so such there here get gets need needs like just also about one go make ' +
    'haven hasn isn aren don doesn didn won wouldn couldn shouldn wasn weren let lets'
  ).split(' '),
);

// Han (with extensions and compatibility ideographs), kana and hangul.
const CJK = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]/;
const CJK_RUNS = /([\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+)/g;

/** Stems already made: tool texts repeat their words, and a list is indexed again whenever it changes. */
const stems = new Map<string, string>();

/** The English stemmer (search-stem.ts: Porter2 with -ise folded into -ize), memoised. */
export function stem(word: string): string {
  let known = stems.get(word);
  if (known === undefined) {
    known = stemEnglish(word);
    if (stems.size >= 50_000) stems.clear();
    stems.set(word, known);
  }
  return known;
}

const BRANDS = new Set(
  VOCABULARY.flatMap(([en]) => en.split('|'))
    .map((w) => w.trim())
    .filter((w) => /^[a-z0-9]+$/.test(w)),
);

/** Text as pieces: English words (lowercased, stemmed, stop words kept and marked) and CJK runs. */
interface Piece {
  word: string;
  cjk: boolean;
  stop: boolean;
}

function pieces(text: string): Piece[] {
  const spaced = text
    .normalize('NFKC')
    // Contractions: "haven't" is "haven", "Alice's" is "Alice" (the rest says nothing a search can use).
    .replace(/([A-Za-z])['’](?:t|s|re|ll|ve|d|m)\b/g, '$1')
    // A brand the vocabulary knows stays one word (GitHub, not Git Hub), as tool names write it.
    .replace(/\b[A-Z][a-z]+[A-Z][A-Za-z]*\b/g, (w) => (BRANDS.has(w.toLowerCase()) ? w.toLowerCase() : w))
    // getFileInfo -> get File Info, HTMLParser -> HTML Parser
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .replace(CJK_RUNS, ' $1 ')
    .toLowerCase();
  const out: Piece[] = [];
  for (const raw of spaced.split(/[^\p{L}\p{N}]+/u)) {
    if (!raw) continue;
    if (CJK.test(raw)) out.push({ word: raw, cjk: true, stop: false });
    else out.push({ word: stem(raw), cjk: false, stop: STOPWORDS.has(raw) });
  }
  return out;
}

/** A CJK run as its character bigrams, or the character itself when the run is one character long. */
function bigrams(run: string): string[] {
  const chars = [...run];
  if (chars.length === 1) return [run];
  const out: string[] = [];
  for (let i = 0; i + 1 < chars.length; i++) out.push(`${chars[i]}${chars[i + 1]}`);
  return out;
}

/** Index terms of a text without concepts: English words normalised and stemmed, CJK runs as bigrams. */
export function tokenize(text: string): string[] {
  return pieces(text).flatMap((p) => (p.cjk ? bigrams(p.word) : p.stop ? [] : [p.word]));
}

// ---- The vocabulary, compiled once: English phrases as stemmed word sequences, Chinese words by length.

interface Compiled {
  /** Stemmed phrase (words joined by a space) -> concepts. */
  english: Map<string, string[]>;
  /** The beginnings of longer phrases ("how", "go"): where a match may go on past the word. */
  englishPrefixes: Set<string>;
  longestEnglish: number;
  chinese: Map<string, string[]>;
  longestChinese: number;
}

function compile(): Compiled {
  const c: Compiled = { english: new Map(), englishPrefixes: new Set(), longestEnglish: 1, chinese: new Map(), longestChinese: 1 };
  const add = (map: Map<string, string[]>, key: string, concept: string) => {
    const list = map.get(key) ?? [];
    if (!list.includes(concept)) list.push(concept);
    map.set(key, list);
  };
  for (const [en, zh] of VOCABULARY) {
    const phrases = en.split('|').map((p) => p.trim());
    const concept = `~${phrases[0]?.replace(/\s+/g, '_')}`;
    for (const phrase of phrases) {
      const words = pieces(phrase).map((p) => p.word);
      if (words.length === 0) continue;
      add(c.english, words.join(' '), concept);
      for (let n = 1; n < words.length; n++) c.englishPrefixes.add(words.slice(0, n).join(' '));
      c.longestEnglish = Math.max(c.longestEnglish, words.length);
    }
    for (const word of zh.split(/\s+/).filter(Boolean)) {
      // Latin words in the Chinese column (k8s, sql) are said by Chinese users as they are.
      if (!CJK.test(word))
        add(
          c.english,
          pieces(word)
            .map((p) => p.word)
            .join(' '),
          concept,
        );
      else {
        add(c.chinese, word, concept);
        c.longestChinese = Math.max(c.longestChinese, [...word].length);
      }
    }
  }
  return c;
}
const VOCAB = compile();

/** Phrases of the vocabulary in a run of words: the longest at each position wins, then the match moves past it. */
function phrases(words: readonly string[], minLength: number, found: (concepts: string[]) => void): void {
  for (let i = 0; i < words.length; ) {
    // The phrases starting here, built word by word; the longest one the vocabulary knows wins.
    let key = '';
    let best: string[] | undefined;
    let step = 1;
    for (let len = 1; len <= VOCAB.longestEnglish && i + len <= words.length; len++) {
      key = len === 1 ? (words[i] as string) : `${key} ${words[i + len - 1]}`;
      const hit = len >= minLength ? VOCAB.english.get(key) : undefined;
      if (hit) {
        best = hit;
        step = len;
      }
      if (!VOCAB.englishPrefixes.has(key)) break;
    }
    if (best) found(best);
    i += step;
  }
}

/**
 * Concepts said by a run of English words. Phrases match word by word ("how many", "go back"); a
 * second pass over the words without stop words finds the phrases a stop word interrupts
 * ("download a page", "save my work") that the first did not.
 */
function englishConcepts(run: readonly Piece[], out: string[]): void {
  const seen = new Set<string>();
  phrases(
    run.map((p) => p.word),
    1,
    (hit) => {
      out.push(...hit);
      for (const c of hit) seen.add(c);
    },
  );
  phrases(
    run.filter((p) => !p.stop).map((p) => p.word),
    2,
    (hit) => out.push(...hit.filter((c) => !seen.has(c))),
  );
}

/** Concepts said by a run of Chinese: forward maximum matching against the vocabulary's Chinese words. */
function chineseConcepts(run: string, out: string[]): void {
  const chars = [...run];
  for (let i = 0; i < chars.length; ) {
    let key = '';
    let best: string[] | undefined;
    let step = 1;
    for (let len = 1; len <= VOCAB.longestChinese && i + len <= chars.length; len++) {
      key += chars[i + len - 1];
      const hit = VOCAB.chinese.get(key);
      if (hit) {
        best = hit;
        step = len;
      }
    }
    if (best) out.push(...best);
    i += step;
  }
}

/** The vocabulary's concepts a text says, as terms `~concept` (repeated as often as said). */
export function concepts(text: string): string[] {
  return analyse(text).concepts;
}

/** A text's index terms (as tokenize) and concepts (as concepts), from one pass over its words. */
export function analyse(text: string): { terms: string[]; concepts: string[] } {
  const terms: string[] = [];
  const out: string[] = [];
  let run: Piece[] = [];
  for (const p of pieces(text)) {
    if (p.cjk) {
      terms.push(...bigrams(p.word));
      englishConcepts(run, out);
      run = [];
      chineseConcepts(p.word, out);
    } else {
      if (!p.stop) terms.push(p.word);
      run.push(p);
    }
  }
  englishConcepts(run, out);
  return { terms, concepts: out };
}
