// `npm run check:boundaries`: the server's module boundaries and the console's, checked on their import graphs.
//
// The server (apps/server):
//   gateway       gateway/ never imports modules/ or context.ts: the proxy path stands without the API.
//   gateway-sides gateway/downstream/ (the clients' side) and gateway/upstream/ (the tool servers' side) never
//                 import each other: they meet in gateway/link-api.ts and the other files of gateway/ itself
//                 (the ports: catalog.ts, upstream-auth.ts, options-reader.ts; the shared vocabulary in wire/).
//   module-door   a file of modules/<a>/ reaches another module only through modules/<b>/index.ts.
//   module-internals  outside modules/, only the composition root (app.ts) and the CLI (cli.ts, cli/) may import
//                 a file of modules/<m>/ other than its index.ts: http/, backup/ and the rest use the doors.
//   gateway-door  outside gateway/, code that is not a test imports neither gateway/downstream/ nor gateway/upstream/:
//                 the rest of the server uses gateway/index.ts and the port files of gateway/ itself.
//   gateway-testing  only test code (*.test.ts, apps/server/test/) imports gateway/testing.ts, the inside of a
//                 running gateway that tests change and the server never does (decision 0062); the gateway's
//                 own files included.
//   build         src/build/ (the builders of the core, the platform, the server's parts and its HTTP server,
//                 decision 0062) is imported only by the composition root (app.ts, server.ts), the CLI (cli.ts,
//                 cli/, a command's cli.ts) and tests; it imports modules through their doors like the rest.
//   infra         infra/ never imports modules/ or gateway/.
//   cycle         no import cycle among the server's source files.
//   test-code     code that is not a test (*.test.ts) imports neither vitest nor apps/server/test/.
//
// The console (apps/web, decision 0047):
//   feature-door  outside features/<f>/, a file reaches the feature only through features/<f>/index.ts (the
//                 router in app/ through features/<f>/routes.ts, which loads the pages lazily).
//   shared-code   lib/ and components/ import neither features/ nor app/: shared code stands below the rooms.
//   cycle         no import cycle among the console's source files.
//   test-code     code that is not test code imports neither vitest nor src/test/ (test code: *.test.ts(x),
//                 src/test/, a feature's test-fixtures.ts).
//
// Every import counts: `import type`, `export … from`, `import('…')` and `import('…').Type`.
// Violations in test files are listed apart, but fail the check too.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';

const RULES = [
  'gateway',
  'gateway-sides',
  'gateway-door',
  'gateway-testing',
  'build',
  'module-door',
  'module-internals',
  'infra',
  'feature-door',
  'shared-code',
  'cycle',
  'test-code',
];

/** Enough to show the shape of a tangled graph without flooding the terminal. */
const MAX_CYCLES = 200;

const toPosix = (p) => p.split(path.sep).join('/');
const isTestFile = (rel) => rel.endsWith('.test.ts');

function listTsFiles(dir, withTsx = false) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules') out.push(...listTsFiles(full, withTsx));
    } else if ((entry.name.endsWith('.ts') || (withTsx && entry.name.endsWith('.tsx'))) && !entry.name.endsWith('.d.ts')) {
      out.push(full);
    }
  }
  return out;
}

/** Every module specifier of a file, with its 1-based line. */
function importsOf(file) {
  const text = readFileSync(file, 'utf8');
  const kind = file.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS;
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, kind);
  const found = [];
  const add = (literal) => {
    const line = source.getLineAndCharacterOfPosition(literal.getStart(source)).line + 1;
    found.push({ specifier: literal.text, line });
  };
  const visit = (node) => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      add(node.moduleSpecifier);
    } else if (
      ts.isImportEqualsDeclaration(node) &&
      ts.isExternalModuleReference(node.moduleReference) &&
      ts.isStringLiteral(node.moduleReference.expression)
    ) {
      add(node.moduleReference.expression);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments.length > 0 &&
      ts.isStringLiteralLike(node.arguments[0])
    ) {
      add(node.arguments[0]);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      add(node.argument.literal);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/**
 * The file a relative specifier names, as the compiler finds it (`./x.js` is `./x.ts` or `./x.tsx`, `./x` is
 * `./x.ts`, `./x.tsx` or `./x/index.ts`), or undefined.
 */
function resolveRelative(fromFile, specifier) {
  const base = path.resolve(path.dirname(fromFile), specifier);
  const candidates = [];
  const ext = path.extname(base);
  if (ext === '.js' || ext === '.mjs' || ext === '.cjs') {
    const stem = base.slice(0, -ext.length);
    candidates.push(`${stem}${ext.replace('js', 'ts')}`, `${stem}.tsx`, base);
  } else if (ext === '.ts' || ext === '.tsx') {
    candidates.push(base);
  } else {
    candidates.push(`${base}.ts`, `${base}.tsx`, base);
  }
  candidates.push(path.join(base, 'index.ts'), path.join(base, 'index.tsx'));
  return candidates.find((c) => existsSync(c) && statSync(c).isFile());
}

/** The composition root and the CLI build modules from their parts, so they may import past the doors. */
const mayReachInternals = (rel) => rel === 'src/app.ts' || /^src\/cli(\.ts$|[-.]|\/)/.test(rel);

/** Who may use the builders of src/build/: the composition root, the CLI and a command's own cli.ts. */
const mayUseBuilders = (rel) =>
  rel === 'src/app.ts' || rel === 'src/server.ts' || /^src\/cli(\.ts$|[-.]|\/)/.test(rel) || /^src\/(?:.+\/)?cli\.ts$/.test(rel);

/** What tests alone may import: the inside of a running gateway (gatewayInternalsForTests). */
const GATEWAY_TESTING = 'src/gateway/testing.ts';

/** Where a file sits: which layer, and which module for a file under modules/<name>/. */
function placeOf(rel) {
  const parts = rel.split('/');
  if (parts[0] === 'test') return { area: 'test' };
  if (parts[0] !== 'src') return { area: 'other' };
  if (parts[1] === 'modules' && parts.length > 3) return { area: 'modules', module: parts[2] };
  if (parts[1] === 'modules') return { area: 'modules-root' };
  if (parts[1] === 'gateway') {
    const side = parts.length > 3 && (parts[2] === 'downstream' || parts[2] === 'upstream') ? parts[2] : undefined;
    return { area: 'gateway', side };
  }
  if (parts[1] === 'infra' || parts[1] === 'build') return { area: parts[1] };
  return { area: 'src' };
}

/**
 * Every elementary cycle of the graph once, as the list of its files starting at the smallest one
 * (Johnson's algorithm), up to MAX_CYCLES.
 */
function findCycles(graph) {
  const nodes = [...graph.keys()].sort();
  const order = new Map(nodes.map((n, i) => [n, i]));
  const cycles = [];
  for (let s = 0; s < nodes.length && cycles.length < MAX_CYCLES; s++) {
    const start = nodes[s];
    // Only files after `start` take part, so that each cycle is found from its smallest file alone.
    const inPlay = (n) => (order.get(n) ?? -1) >= s;
    const blocked = new Set();
    const blockedBy = new Map();
    const stack = [];
    const unblock = (n) => {
      blocked.delete(n);
      const waiting = blockedBy.get(n) ?? new Set();
      blockedBy.delete(n);
      for (const m of waiting) if (blocked.has(m)) unblock(m);
    };
    const circuit = (v) => {
      let closed = false;
      stack.push(v);
      blocked.add(v);
      for (const w of graph.get(v) ?? []) {
        if (!inPlay(w) || cycles.length >= MAX_CYCLES) continue;
        if (w === start) {
          cycles.push([...stack]);
          closed = true;
        } else if (!blocked.has(w) && circuit(w)) {
          closed = true;
        }
      }
      if (closed) unblock(v);
      else {
        for (const w of graph.get(v) ?? []) {
          if (!inPlay(w)) continue;
          if (!blockedBy.has(w)) blockedBy.set(w, new Set());
          blockedBy.get(w).add(v);
        }
      }
      stack.pop();
      return closed;
    };
    circuit(start);
  }
  return cycles;
}

/** How many tangles (groups of files joined by cycles) the cycles make: cycles sharing a file are one tangle. */
function countTangles(cycles) {
  const parent = new Map();
  const root = (n) => {
    while (parent.get(n) !== n) n = parent.get(n);
    return n;
  };
  for (const cycle of cycles) {
    for (const file of cycle) if (!parent.has(file)) parent.set(file, file);
    for (const file of cycle.slice(1)) parent.set(root(file), root(cycle[0]));
  }
  return new Set([...parent.keys()].map(root)).size;
}

/**
 * Reads the imports of every file of `appDir/src` and builds its graph: an import of vitest by code that is not
 * test code, or of the test harness (`place(to).area === 'test'`), is a test-code violation, `rules` reports the
 * app's own for each resolved relative import, and every cycle among the files in the graph is one. Paths are
 * relative to `appDir`, with forward slashes.
 */
function checkApp({ appDir, withTsx, isTest, place, inGraph, rules, checked }) {
  const files = listTsFiles(path.join(appDir, 'src'), withTsx).sort();
  const rel = (file) => toPosix(path.relative(appDir, file));
  const graph = new Map();
  const violations = [];
  let importCount = 0;
  const report = (rule, file, line, more) => violations.push({ rule, file, line, test: isTest(file), ...more });

  for (const file of files) {
    const from = rel(file);
    const fromPlace = place(from);
    const edges = new Set();
    graph.set(from, edges);
    for (const { specifier, line } of importsOf(file)) {
      importCount++;
      if (specifier === 'vitest' || specifier.startsWith('vitest/')) {
        if (!isTest(from)) report('test-code', from, line, { target: specifier });
        continue;
      }
      if (!specifier.startsWith('.')) continue;
      const target = resolveRelative(file, specifier);
      if (!target) continue;
      const to = rel(target);
      const toPlace = place(to);
      if (inGraph(to, toPlace)) edges.add(to);
      if (toPlace.area === 'test' && !isTest(from)) report('test-code', from, line, { target: to });
      rules({ from, fromPlace, to, toPlace, report: (rule, more) => report(rule, from, line, { target: to, ...more }) });
    }
  }

  const cycles = findCycles(graph);
  for (const cycle of cycles) report('cycle', cycle[0], 0, { cycle });
  return {
    files: files.length,
    testFiles: files.filter((f) => isTest(rel(f))).length,
    imports: importCount,
    violations,
    tangles: countTangles(cycles),
    cyclesCapped: cycles.length >= MAX_CYCLES,
    checked,
  };
}

/**
 * Checks the server app at `serverDir` (the folder holding `src/` and `test/`). Paths in the answer are
 * relative to `serverDir`, with forward slashes. A violation is `{ rule, file, line, test, target }`, or for a
 * cycle `{ rule: 'cycle', file, line: 0, test, cycle }` with the cycle's files in import order.
 */
export function checkBoundaries(serverDir) {
  return checkApp({
    appDir: serverDir,
    withTsx: false,
    isTest: isTestFile,
    place: placeOf,
    inGraph: (to, toPlace) => toPlace.area !== 'test' && toPlace.area !== 'other' && to.endsWith('.ts'),
    rules({ from, fromPlace, to, toPlace, report }) {
      const intoModules = toPlace.area === 'modules' || toPlace.area === 'modules-root';
      if (fromPlace.area === 'gateway' && (intoModules || to === 'src/context.ts')) report('gateway');
      if (fromPlace.side && toPlace.side && fromPlace.side !== toPlace.side) report('gateway-sides');
      if (fromPlace.area === 'infra' && (intoModules || toPlace.area === 'gateway')) report('infra');
      const test = fromPlace.area === 'test' || isTestFile(from);
      if (toPlace.side && fromPlace.area !== 'gateway' && !test) report('gateway-door');
      if (to === GATEWAY_TESTING && !test) report('gateway-testing');
      if (toPlace.area === 'build' && fromPlace.area !== 'build' && !test && !mayUseBuilders(from)) report('build');
      const pastDoor = toPlace.area === 'modules' && to !== `src/modules/${toPlace.module}/index.ts`;
      if (pastDoor && fromPlace.area === 'modules' && toPlace.module !== fromPlace.module) report('module-door');
      const outside = fromPlace.area === 'src' || fromPlace.area === 'modules-root' || fromPlace.area === 'build';
      if (pastDoor && outside && !mayReachInternals(from)) {
        report('module-internals');
      }
    },
    checked:
      'gateway, gateway sides, gateway door, gateway testing, builders, module doors, module internals, infra, import cycles and test code',
  });
}

/** The console's test code: its tests, its harness under src/test/ and a feature's test fixtures. */
const isWebTestCode = (rel) =>
  /\.test\.tsx?$/.test(rel) || rel.startsWith('src/test/') || /^src\/features\/[^/]+\/test-fixtures\.tsx?$/.test(rel);

/** Where a console file sits: which layer, and which feature for a file under features/<name>/. */
function webPlaceOf(rel) {
  const parts = rel.split('/');
  if (parts[0] !== 'src') return { area: 'other' };
  if (parts[1] === 'features' && parts.length > 3) return { area: 'features', feature: parts[2] };
  if (['app', 'components', 'lib', 'test', 'features'].includes(parts[1]) && parts.length > 2) return { area: parts[1] };
  return { area: 'src' };
}

/** A feature's door: its index.ts (or index.tsx). */
const isFeatureDoor = (rel, feature) => rel === `src/features/${feature}/index.ts` || rel === `src/features/${feature}/index.tsx`;
/**
 * The router's door to a feature: its routes.ts, which loads its pages lazily. Through index.ts the router would
 * pull everything the door re-exports into the first download of every page, the sign-in page's included.
 */
const isRoutesDoor = (rel, feature) => rel === `src/features/${feature}/routes.ts` || rel === `src/features/${feature}/routes.tsx`;

/**
 * Checks the console at `webDir` (the folder holding `src/`), with the answer shaped as checkBoundaries's. Test
 * code keeps the doors too (violations there are listed apart): a test of one feature uses another's door, and
 * test data shared between features lives in src/test/.
 */
export function checkWebBoundaries(webDir) {
  return checkApp({
    appDir: webDir,
    withTsx: true,
    isTest: isWebTestCode,
    place: webPlaceOf,
    inGraph: (to, toPlace) => toPlace.area !== 'other' && /\.tsx?$/.test(to),
    rules({ fromPlace, to, toPlace, report }) {
      const viaRoutes = fromPlace.area === 'app' && isRoutesDoor(to, toPlace.feature);
      if (toPlace.area === 'features' && fromPlace.feature !== toPlace.feature && !isFeatureDoor(to, toPlace.feature) && !viaRoutes) {
        report('feature-door', { feature: toPlace.feature });
      }
      const shared = fromPlace.area === 'lib' || fromPlace.area === 'components';
      if (shared && (toPlace.area === 'features' || toPlace.area === 'app')) report('shared-code');
    },
    checked: 'feature doors, shared code, import cycles and test code',
  });
}

/** One line for a violation; `prefix` is put before every path (the CLI prints them from the repository root). */
export function describeViolation(v, prefix = '') {
  const at = `${prefix}${v.file}${v.line ? `:${v.line}` : ''}`;
  const target = v.target?.startsWith('src/') || v.target?.startsWith('test/') ? `${prefix}${v.target}` : v.target;
  switch (v.rule) {
    case 'gateway':
      return `gateway: ${at} imports ${target}; the gateway must not depend on modules/ or context.ts`;
    case 'gateway-sides':
      return `gateway-sides: ${at} imports ${target}; gateway/downstream/ and gateway/upstream/ meet only through gateway/link-api.ts and the other files of gateway/`;
    case 'gateway-door':
      return `gateway-door: ${at} imports ${target}; outside gateway/, use ${prefix}src/gateway/index.ts or a port file of gateway/`;
    case 'gateway-testing':
      return `gateway-testing: ${at} imports ${target}, which only tests (*.test.ts, apps/server/test/) may import`;
    case 'build':
      return `build: ${at} imports ${target}; only app.ts, server.ts and the CLI (cli.ts, cli/, a command's cli.ts) build the graph`;
    case 'module-door': {
      const [, , owner] = v.target.split('/');
      const from = v.file.split('/')[2];
      return `module-door: ${at} (module ${from}) imports ${target}; use ${prefix}src/modules/${owner}/index.ts`;
    }
    case 'module-internals': {
      const [, , owner] = v.target.split('/');
      return `module-internals: ${at} imports ${target}; outside modules/ only app.ts and cli* may, use ${prefix}src/modules/${owner}/index.ts`;
    }
    case 'infra':
      return `infra: ${at} imports ${target}; infra must not depend on modules/ or gateway/`;
    case 'feature-door':
      return `feature-door: ${at} imports ${target}; use ${prefix}src/features/${v.feature}/index.ts`;
    case 'shared-code':
      return `shared-code: ${at} imports ${target}; lib/ and components/ must not depend on features/ or app/`;
    case 'cycle':
      return `cycle: ${[...v.cycle, v.cycle[0]].map((f) => `${prefix}${f}`).join(' -> ')}`;
    case 'test-code':
      return v.file.endsWith('.tsx') || v.file.startsWith('src/features/') || v.file.startsWith('src/lib/')
        ? `test-code: ${at} imports ${target}, but is not test code (*.test.ts(x), src/test/, test-fixtures.ts)`
        : `test-code: ${at} imports ${target}, but is not a test file (*.test.ts)`;
    default:
      return `${v.rule}: ${at}`;
  }
}

/** The lines to print for a result: the violations (source files first, then tests), or a one-line summary. */
export function formatReport(result, prefix = '') {
  if (result.violations.length === 0) {
    return [`Boundaries ok: ${result.files} files (${result.testFiles} tests), ${result.imports} imports; ${result.checked} checked.`];
  }
  const source = result.violations.filter((v) => !v.test);
  const tests = result.violations.filter((v) => v.test);
  const counts = RULES.map((rule) => [rule, result.violations.filter((v) => v.rule === rule).length])
    .filter(([, n]) => n > 0)
    .map(([rule, n]) => (rule === 'cycle' ? `cycle ${n} in ${result.tangles} tangles` : `${rule} ${n}`));
  return [
    ...source.map((v) => describeViolation(v, prefix)),
    ...(tests.length ? ['', 'In test files:', ...tests.map((v) => describeViolation(v, prefix))] : []),
    ...(result.cyclesCapped ? [`(only the first ${MAX_CYCLES} cycles are listed)`] : []),
    '',
    `Boundary check failed: ${source.length} in source files, ${tests.length} in test files (${counts.join(', ')}).`,
  ];
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const app = (dir) => fileURLToPath(new URL(`../apps/${dir}`, import.meta.url));
  const results = [
    ['Server', 'apps/server/', checkBoundaries(app('server'))],
    ['Console', 'apps/web/', checkWebBoundaries(app('web'))],
  ];
  for (const [name, prefix, result] of results) {
    process.stdout.write(`${name} (${prefix}):\n`);
    for (const text of formatReport(result, prefix)) process.stdout.write(`${text}\n`);
  }
  process.exit(results.every(([, , result]) => result.violations.length === 0) ? 0 : 1);
}
