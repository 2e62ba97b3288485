import fc from 'fast-check';

/**
 * Generators of hostile input shared by the fuzz suites (api.fuzz.test.ts, proxy.fuzz.test.ts), and
 * the run settings: FUZZ_RUNS multiplies the work (docs/security.md, "Fuzzing"), FUZZ_SEED replays a
 * failure. fast-check prints the seed and the counterexample path of every failure.
 */

/** Runs per property: `base` by default (the whole fuzz suite stays within about a minute). */
export function runs(base: number): number {
  const wanted = Number(process.env.FUZZ_RUNS);
  return Number.isFinite(wanted) && wanted > 0 ? Math.max(1, Math.round(wanted)) : base;
}

/** Fixed by default so `npm test` is repeatable; FUZZ_SEED overrides it, a long run without one picks its own. */
export const SEED: number | undefined = process.env.FUZZ_SEED
  ? Number(process.env.FUZZ_SEED)
  : process.env.FUZZ_RUNS
    ? undefined
    : 20261121;

/**
 * The per-test time limit, a guard against a hang only: a long one when FUZZ_RUNS asks for a long hunt, else 2 minutes.
 * The default runs are CPU-bound: beside the browser tests on 2 cores (scripts/test.mjs) one took 28.6 s of the
 * config's 30 s.
 */
export const TEST_TIMEOUT: number = process.env.FUZZ_RUNS ? 24 * 3600_000 : 120_000;

export const fuzzOptions = (numRuns: number) => ({ numRuns, seed: SEED, endOnFailure: true }) as const;

/** JSON text written as is: numbers JSON.stringify cannot produce, deep nesting, broken fragments. */
export class Raw {
  constructor(readonly text: string) {}
}

/** A JSON object kept as key/value pairs: `__proto__` and duplicate keys reach the wire as written. */
export class Obj {
  constructor(readonly pairs: [string, unknown][]) {}
}

export function toJsonText(value: unknown): string {
  if (value instanceof Raw) return value.text;
  if (value instanceof Obj) return `{${value.pairs.map(([k, v]) => `${JSON.stringify(k)}:${toJsonText(v)}`).join(',')}}`;
  if (Array.isArray(value)) return `[${value.map(toJsonText).join(',')}]`;
  if (value !== null && typeof value === 'object') return toJsonText(new Obj(Object.entries(value)));
  return JSON.stringify(value) ?? 'null';
}

export const DEPTH = 10_000;
const deepArrays = new Raw(`${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}`);
const deepObjects = new Raw(`${'{"a":'.repeat(DEPTH)}1${'}'.repeat(DEPTH)}`);
const deepMixed = new Raw(`${'[{"a":'.repeat(DEPTH / 2)}null${'}]'.repeat(DEPTH / 2)}`);
export const deepNesting = fc.constantFrom(deepArrays, deepObjects, deepMixed);

export const MEGABYTE = 1024 * 1024;
const hugeAscii = 'x'.repeat(MEGABYTE);
const hugeCjk = '中'.repeat(MEGABYTE / 3);
const hugeEmoji = '😀'.repeat(MEGABYTE / 4);
export const hugeString = fc.constantFrom(hugeAscii, hugeCjk, hugeEmoji);

/** Strings that break naive code: lone surrogates, direction overrides, NUL, emoji, lookalike numbers. */
export const nastyStrings = [
  '',
  ' ',
  '\uD800',
  '\uDFFFtail',
  'a\uD83D',
  '\u202Eevil\u202C',
  '\u200F\u05D0\u05D1',
  'مرحبا',
  '\u0000',
  'a\u0000b',
  '\r\n\t',
  '😀👩‍👩‍👧‍👦',
  '中文名称',
  'NaN',
  'Infinity',
  '-Infinity',
  '1e309',
  '-1e309',
  '-0',
  '-1',
  '0',
  '1.5',
  '0x1F',
  '1_000',
  '١٢٣',
  '１２３',
  ' 42 ',
  '42abc',
  '+1',
  '.5',
  '9'.repeat(40),
  '-9223372036854775809',
  '2147483648',
  'true',
  'null',
  'undefined',
  '[object Object]',
  '__proto__',
  'constructor',
  'toString',
  "' OR 1=1 --",
  '"; DROP TABLE users; --',
  '../../../etc/passwd',
  '%00',
  '%zz',
  `\${jndi:ldap://x}`,
  '<script>alert(1)</script>',
  '{{7*7}}',
] as const;

const oddUnit = fc.constantFrom('\uD800', '\uDC00', '\u202E', '\u0000', '😀', 'a', 'é', '中', '\u200B', '"', '\\', '\n');
export const weirdString = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...nastyStrings) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: oddUnit, maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }) },
);

/** Number tokens as written in JSON text (1e309 parses to Infinity; -0 and 1e-400 to zeros). */
const numberTokens = [
  '1e309',
  '-1e309',
  '-0',
  '1e-400',
  '0',
  '-1',
  '1.5',
  '2147483647',
  '2147483648',
  '-2147483649',
  '4294967296',
  '9007199254740993',
  '9223372036854775808',
  '123456789012345678901234567890',
  '1E2',
  '0.0000001',
] as const;
export const weirdNumber = fc.oneof(
  fc.constantFrom(...numberTokens).map((t) => new Raw(t)),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
  fc.constantFrom(-0, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, Number.MAX_VALUE, Number.MIN_VALUE),
);

const key = fc.oneof(
  fc.constantFrom('__proto__', 'constructor', 'prototype', 'id', '', '\u0000', '\uD800', 'a.b', '$where'),
  fc.string({ maxLength: 12 }),
);

/** Any JSON value with hostile leaves. */
export const hostileJson: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    weirdString,
    weirdNumber,
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.array(fc.tuple(key, tie('value')), { maxLength: 4 }).map((pairs) => new Obj(pairs)),
  ),
})).value;

/** A field's wrong value: any hostile JSON, sometimes huge or nested 10k deep. */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 12, arbitrary: hostileJson },
  { weight: 1, arbitrary: deepNesting },
  { weight: 1, arbitrary: hugeString },
);

/** JSON text made invalid in a way parsers trip over. */
export const malformedJsonText = (valid: fc.Arbitrary<string>): fc.Arbitrary<string> =>
  fc.oneof(
    fc.tuple(valid, fc.nat()).map(([t, n]) => t.slice(0, t.length > 1 ? n % (t.length - 1) : 0)),
    valid.map((t) => `${t},`),
    valid.map((t) => `${t}}`),
    valid.map((t) => `\uFEFF${t}`),
    valid.map((t) => t.replaceAll('"', "'")),
    valid.map((t) => `/* c */${t}`),
    fc.constantFrom(
      '{',
      '[',
      '"',
      '{"a":}',
      '{"a" 1}',
      '[1,]',
      'NaN',
      'undefined',
      "{'a':1}",
      '{"a":1}{"b":2}',
      'nul',
      '\u0000',
      '{"\uD800":1',
      ' ',
    ),
  );

/** A query string value, from plain to hostile, as the client would encode it. */
export const queryValue = fc.oneof(
  { weight: 2, arbitrary: weirdString },
  { weight: 1, arbitrary: fc.constantFrom(...numberTokens) },
  { weight: 1, arbitrary: fc.integer().map(String) },
);

/** Percent-escapes that do not decode to valid UTF-8, or decode to things routers dislike. */
export const rawEscapes = fc.constantFrom('%', '%z', '%zz', '%ED%A0%80', '%C0%AF', '%00', '%FF%FE', '%2e%2e%2f', '%25', '%E4%B8');

/** encodeURIComponent that survives lone surrogates (the URL then carries U+FFFD's bytes). */
export const encode = (s: string): string =>
  encodeURIComponent(s.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD'));

/** Checks a reply body for what must never reach a client: stack frames and server file paths. */
export function leaksInternals(body: string): string | undefined {
  const patterns = [
    /\n\s+at\s/,
    /Maximum call stack/,
    /Cannot read properties of/,
    /is not a function/,
    /\bat [\w$.<>]+ \((?:file:|\/)/,
    /\/work\/main/,
    /apps\/server\/src/,
    /node_modules\//,
    /file:\/\//,
  ];
  for (const p of patterns) {
    const at = body.search(p);
    if (at !== -1) return `${p.source} in …${body.slice(Math.max(0, at - 300), at + 200)}…`;
  }
  return undefined;
}

/** Shortens long text in failure reports: a 4 MiB counterexample helps nobody. */
export const short = (text: string, max = 300): string => (text.length <= max ? text : `${text.slice(0, max)}… (${text.length} chars)`);

/** Gives a generated value a short printed form: fast-check shows it as the counterexample. */
export function shown<T extends object>(value: T, text: string): T {
  return Object.assign(value, { [fc.toStringMethod]: () => short(text, 600) });
}

/** Runs one property per item and reports every failing item together, not only the first. */
export async function eachAssert<T>(items: T[], label: (item: T) => string, check: (item: T) => Promise<void>): Promise<string[]> {
  const failures: string[] = [];
  for (const item of items) {
    try {
      await check(item);
    } catch (err) {
      const cause = err instanceof Error && err.cause instanceof Error ? `\nCaused by: ${err.cause.message}` : '';
      failures.push(`${label(item)}: ${short(err instanceof Error ? err.message : String(err), 1500)}${short(cause, 1500)}`);
    }
  }
  return failures;
}

/** FUZZ_STATS=1: how many answers of each kind a suite saw, printed at its end (is the fuzz reaching anything?). */
const stats = new Map<string, number>();
export function tally(kind: string): void {
  stats.set(kind, (stats.get(kind) ?? 0) + 1);
}
export function printStats(suite: string): void {
  if (!process.env.FUZZ_STATS) return;
  const lines = [...stats].sort(([a], [b]) => a.localeCompare(b)).map(([k, n]) => `  ${k}: ${n}`);
  console.log(`${suite}\n${lines.join('\n')}`);
  stats.clear();
}

/** Rejects after `ms`: a request the server never answers is a failure, not a stuck test. */
export function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms: ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
