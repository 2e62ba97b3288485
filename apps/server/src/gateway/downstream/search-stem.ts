/**
 * The English stemmer of discovery search (docs/decisions/0052): the Snowball "English" (Porter2)
 * algorithm, so that the forms of a word meet — plurals, -ing and -ed, and the derivations tool texts
 * and queries use for the same action or object (deletion/delete, configuration/configure,
 * management/manage, automatically/automatic) — plus British -ise spellings folded into -ize
 * (memorise/memorize). Pure and memoised by its caller (search-text.ts).
 */

const VOWEL = /[aeiouy]/;
const isVowel = (c: string | undefined) => c !== undefined && VOWEL.test(c);
const DOUBLES = new Set(['bb', 'dd', 'ff', 'gg', 'mm', 'nn', 'pp', 'rr', 'tt']);
const LI_ENDING = /[cdeghkmnrt]/;

/** Words the algorithm leaves as they are or maps by exception (Porter2's first list, and ours). */
const EXCEPTIONS: Record<string, string> = {
  skis: 'ski',
  skies: 'sky',
  dying: 'die',
  lying: 'lie',
  tying: 'tie',
  idly: 'idl',
  gently: 'gentl',
  ugly: 'ugli',
  early: 'earli',
  only: 'onli',
  singly: 'singl',
  sky: 'sky',
  news: 'news',
  howe: 'howe',
  atlas: 'atlas',
  cosmos: 'cosmos',
  bias: 'bias',
  andes: 'andes',
  // Names of products and words whose final s is not a plural.
  kubernetes: 'kubernetes',
  redis: 'redis',
  always: 'always',
  series: 'series',
  lens: 'lens',
  canvas: 'canvas',
};
const AFTER_1A = new Set(['inning', 'outing', 'canning', 'herring', 'earring', 'proceed', 'exceed', 'succeed']);

/** Where R1 starts: after the first non-vowel that follows a vowel (with Porter2's three special prefixes). */
function regionStart(w: string, from: number): number {
  for (let i = from + 1; i < w.length; i++) if (!isVowel(w[i]) && isVowel(w[i - 1])) return i + 1;
  return w.length;
}

/** A short syllable ending at i (inclusive). */
function shortSyllableEndingAt(w: string, i: number): boolean {
  if (i === 1) return isVowel(w[0]) && !isVowel(w[1]);
  return i >= 2 && !isVowel(w[i - 2]) && isVowel(w[i - 1]) && !isVowel(w[i]) && !/[wxY]/.test(w[i] as string);
}

export function porter2(word: string): string {
  if (word.length <= 2) return word;
  const exception = EXCEPTIONS[word];
  if (exception !== undefined) return exception;
  if (!/^[a-z']+$/.test(word)) return word;
  let w = word.replace(/^'/, '');
  // y as a consonant: at the start and after a vowel.
  w = w.replace(/^y/, 'Y').replace(/([aeiouy])y/g, '$1Y');
  const r1 = /^(gener|commun|arsen)/.test(w) ? (w.match(/^(gener|commun|arsen)/)?.[0].length ?? 0) : regionStart(w, 0);
  const r2 = regionStart(w, r1);
  const inR1 = (suffix: string) => w.length - suffix.length >= r1;
  const inR2 = (suffix: string) => w.length - suffix.length >= r2;
  const hasVowelBefore = (n: number) => /[aeiouy]/.test(w.slice(0, w.length - n));
  const isShort = () => r1 >= w.length && shortSyllableEndingAt(w, w.length - 1);

  // Step 0
  for (const s of ["'s'", "'s", "'"])
    if (w.endsWith(s)) {
      w = w.slice(0, -s.length);
      break;
    }
  // Step 1a
  if (w.endsWith('sses')) w = `${w.slice(0, -4)}ss`;
  else if (w.endsWith('ied') || w.endsWith('ies')) w = w.length > 4 ? `${w.slice(0, -3)}i` : `${w.slice(0, -3)}ie`;
  else if (w.endsWith('us') || w.endsWith('ss')) {
    // unchanged
  } else if (w.endsWith('s') && /[aeiouy]/.test(w.slice(0, -2))) w = w.slice(0, -1);
  if (AFTER_1A.has(w)) return w;
  // Step 1b
  const eed = ['eedly', 'eed'].find((s) => w.endsWith(s));
  if (eed) {
    if (inR1(eed)) w = `${w.slice(0, -eed.length)}ee`;
  } else {
    const ed = ['ingly', 'edly', 'ing', 'ed'].find((s) => w.endsWith(s));
    if (ed && hasVowelBefore(ed.length)) {
      w = w.slice(0, -ed.length);
      if (/(at|bl|iz)$/.test(w)) w = `${w}e`;
      else if (DOUBLES.has(w.slice(-2))) w = w.slice(0, -1);
      else if (isShort()) w = `${w}e`;
    }
  }
  // Step 1c
  if (w.length > 2 && /[yY]$/.test(w) && !isVowel(w[w.length - 2])) w = `${w.slice(0, -1)}i`;
  // Step 2
  const step2: [string, string][] = [
    ['ization', 'ize'],
    ['ational', 'ate'],
    ['fulness', 'ful'],
    ['ousness', 'ous'],
    ['iveness', 'ive'],
    ['tional', 'tion'],
    ['biliti', 'ble'],
    ['lessli', 'less'],
    ['entli', 'ent'],
    ['ation', 'ate'],
    ['alism', 'al'],
    ['aliti', 'al'],
    ['ousli', 'ous'],
    ['iviti', 'ive'],
    ['fulli', 'ful'],
    ['enci', 'ence'],
    ['anci', 'ance'],
    ['abli', 'able'],
    ['izer', 'ize'],
    ['ator', 'ate'],
    ['alli', 'al'],
    ['bli', 'ble'],
    ['ogi', 'og'],
    ['li', ''],
  ];
  for (const [s, r] of step2) {
    if (!w.endsWith(s)) continue;
    if (inR1(s)) {
      if (s === 'ogi') {
        if (w[w.length - 4] === 'l') w = `${w.slice(0, -3)}og`;
      } else if (s === 'li') {
        if (LI_ENDING.test(w[w.length - 3] ?? '')) w = w.slice(0, -2);
      } else w = w.slice(0, -s.length) + r;
    }
    break;
  }
  // Step 3
  const step3: [string, string][] = [
    ['ational', 'ate'],
    ['tional', 'tion'],
    ['alize', 'al'],
    ['icate', 'ic'],
    ['iciti', 'ic'],
    ['ative', ''],
    ['ical', 'ic'],
    ['ness', ''],
    ['ful', ''],
  ];
  for (const [s, r] of step3) {
    if (!w.endsWith(s)) continue;
    if (inR1(s) && (s !== 'ative' || inR2(s))) w = w.slice(0, -s.length) + r;
    break;
  }
  // Step 4
  const step4 = [
    'ement',
    'ance',
    'ence',
    'able',
    'ible',
    'ment',
    'ant',
    'ent',
    'ism',
    'ate',
    'iti',
    'ous',
    'ive',
    'ize',
    'ion',
    'al',
    'er',
    'ic',
  ];
  for (const s of step4) {
    if (!w.endsWith(s)) continue;
    if (inR2(s)) {
      if (s === 'ion') {
        if (/[st]/.test(w[w.length - 4] ?? '')) w = w.slice(0, -3);
      } else w = w.slice(0, -s.length);
    }
    break;
  }
  // Step 5
  if (w.endsWith('e') && (inR2('e') || (inR1('e') && !shortSyllableEndingAt(w, w.length - 2)))) w = w.slice(0, -1);
  else if (w.endsWith('ll') && inR2('l')) w = w.slice(0, -1);
  return w.replace(/Y/g, 'y');
}

/** British -ise/-isation spellings as American ones before stemming (memorise → memorize), except words whose -ise is no -ize. */
const BRITISH = /^([a-z]{3,})is(e|es|ed|ing|ation|ations|er|ers)$/;
const NOT_IZE = new Set(
  (
    'adv rev prom exerc surpr enterpr ra otherw prec conc prem comprom franch expert no cru pra dev superv telev improv ' +
    'merchand parad dem chast compr ar treat pract prec sunr upr d w r cl'
  ).split(' '),
);

/** Stems of one word's forms that Porter2 leaves apart (create/creation, notify/notification, analyse/analysis). */
const SAME_STEM: Record<string, string> = {
  creation: 'creat',
  notifi: 'notif',
  analyz: 'analys',
  analysi: 'analys',
  queu: 'queue',
  repli: 'repli',
  deploy: 'deploy',
  remov: 'remov',
};

export function stemEnglish(word: string): string {
  const m = BRITISH.exec(word);
  const stemmed = porter2(m && !NOT_IZE.has(m[1] as string) ? `${m[1]}iz${m[2]}` : word);
  return SAME_STEM[stemmed] ?? stemmed;
}
