import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { checkBoundaries, checkWebBoundaries, formatReport } from './check-boundaries.mjs';

const dirs = [];

/** A server app folder holding `files` (path relative to it → source text). */
function tree(files) {
  const dir = mkdtempSync(path.join(tmpdir(), 'boundaries-'));
  dirs.push(dir);
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), text);
  }
  return dir;
}

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** What every tree here starts from: a layout that keeps every rule. */
const clean = {
  'src/context.ts': "import { users } from './modules/a/index.js';\nexport const ctx = { users };\n",
  'src/app.ts': "import { ctx } from './context.js';\nimport { proxy } from './gateway/proxy.js';\nexport const app = { ctx, proxy };\n",
  'src/gateway/proxy.ts':
    "import { log } from '../infra/log.js';\nimport type { Meter } from './meter.js';\nexport const proxy = (m: Meter) => log(m);\n",
  'src/gateway/meter.ts': 'export interface Meter { n: number }\n',
  'src/infra/log.ts': 'export const log = (x: unknown) => String(x);\n',
  'src/modules/index.ts': "export * from './a/index.js';\nexport * from './b/index.js';\n",
  'src/modules/a/index.ts': "export { users } from './service.js';\n",
  'src/modules/a/service.ts': "import { log } from '../../infra/log.js';\nexport const users = [log('a')];\n",
  'src/modules/b/index.ts': "export * from './x.js';\n",
  'src/modules/b/x.ts':
    "import { users } from '../a/index.js';\nimport type { Meter } from '../../gateway/meter.js';\nimport * as a from '../a';\nexport const x: Meter = { n: users.length + Object.keys(a).length };\n",
  'src/modules/b/x.test.ts':
    "import { expect, it } from 'vitest';\nimport { harness } from '../../../test/harness.js';\nimport { x } from './x.js';\nit('x', () => expect(x.n + harness).toBe(1));\n",
  'test/harness.ts': 'export const harness = 0;\n',
};

describe('checkBoundaries', () => {
  it('passes a tree that keeps every rule, and says what it checked', () => {
    const result = checkBoundaries(tree(clean));
    expect(result.violations).toEqual([]);
    expect(result).toMatchObject({ files: 11, testFiles: 1 });
    const report = formatReport(result);
    expect(report).toHaveLength(1);
    expect(report[0]).toMatch(/^Boundaries ok: 11 files \(1 tests\), \d+ imports; /);
  });

  it('reports the gateway importing a module (import type and import() too) or context.ts', () => {
    const result = checkBoundaries(
      tree({
        ...clean,
        'src/gateway/proxy.ts':
          "import type { users } from '../modules/a/service.js';\nimport { ctx } from '../context.js';\nexport const p = [ctx];\n",
        'src/gateway/lazy.ts': "export const load = () => import('../modules/index.js');\n",
      }),
    );
    expect(result.violations.filter((v) => v.rule === 'gateway')).toEqual([
      { rule: 'gateway', file: 'src/gateway/lazy.ts', line: 1, test: false, target: 'src/modules/index.ts' },
      { rule: 'gateway', file: 'src/gateway/proxy.ts', line: 1, test: false, target: 'src/modules/a/service.ts' },
      { rule: 'gateway', file: 'src/gateway/proxy.ts', line: 2, test: false, target: 'src/context.ts' },
    ]);
    expect(formatReport(result, 'apps/server/')).toContain(
      'gateway: apps/server/src/gateway/proxy.ts:2 imports apps/server/src/context.ts; the gateway must not depend on modules/ or context.ts',
    );
  });

  it('reports the two sides of the gateway importing each other, and lets both use the files between them', () => {
    const sides = {
      ...clean,
      'src/gateway/link-api.ts': 'export interface Link { send(m: string): void }\n',
      'src/gateway/wire/words.ts': "export const WORD = 'io.example/word';\n",
      'src/gateway/downstream/face.ts':
        "import type { Link } from '../link-api.js';\nimport { WORD } from '../wire/words.js';\nexport const face = (l: Link) => l.send(WORD);\n",
      'src/gateway/upstream/link.ts':
        "import type { Link } from '../link-api.js';\nimport { WORD } from '../wire/words.js';\nexport const link: Link = { send: () => WORD };\n",
    };
    expect(checkBoundaries(tree(sides)).violations).toEqual([]);
    const result = checkBoundaries(
      tree({
        ...sides,
        'src/gateway/downstream/face.ts': "import { link } from '../upstream/link.js';\nexport const face = () => link.send('x');\n",
        'src/gateway/upstream/pool.ts': "import type { face } from '../downstream/face.js';\nexport type Face = typeof face;\n",
        'src/gateway/upstream/pool.test.ts': "export const load = () => import('../downstream/face.js');\n",
      }),
    );
    expect(result.violations.filter((v) => v.rule === 'gateway-sides')).toEqual([
      { rule: 'gateway-sides', file: 'src/gateway/downstream/face.ts', line: 1, test: false, target: 'src/gateway/upstream/link.ts' },
      { rule: 'gateway-sides', file: 'src/gateway/upstream/pool.test.ts', line: 1, test: true, target: 'src/gateway/downstream/face.ts' },
      { rule: 'gateway-sides', file: 'src/gateway/upstream/pool.ts', line: 1, test: false, target: 'src/gateway/downstream/face.ts' },
    ]);
    expect(formatReport(result, 'apps/server/')).toContain(
      'gateway-sides: apps/server/src/gateway/downstream/face.ts:1 imports apps/server/src/gateway/upstream/link.ts; gateway/downstream/ and gateway/upstream/ meet only through gateway/link-api.ts and the other files of gateway/',
    );
  });

  it('reports a module reaching past another module’s index.ts, and names the door', () => {
    const result = checkBoundaries(
      tree({
        ...clean,
        'src/modules/b/x.ts': "import { users } from '../a/service.js';\nexport const x = users;\n",
        'src/modules/b/deep/y.ts': "export type { Thing } from '../../a/deep/thing.js';\n",
        'src/modules/a/deep/thing.ts': 'export type Thing = 1;\n',
      }),
    );
    const doors = result.violations.filter((v) => v.rule === 'module-door');
    expect(doors.map((v) => [v.file, v.target])).toEqual([
      ['src/modules/b/deep/y.ts', 'src/modules/a/deep/thing.ts'],
      ['src/modules/b/x.ts', 'src/modules/a/service.ts'],
    ]);
    expect(formatReport(result)).toContain(
      'module-door: src/modules/b/x.ts:1 (module b) imports src/modules/a/service.ts; use src/modules/a/index.ts',
    );
  });

  it('reports files outside modules/ reaching past a door, except the composition root and the CLI', () => {
    const result = checkBoundaries(
      tree({
        ...clean,
        'src/http/guard.ts':
          "import { users } from '../modules/a/service.js';\nimport * as a from '../modules/a/index.js';\nexport const g = [users, a];\n",
        'src/backup/run.test.ts': "import type { users } from '../modules/a/service.js';\nexport type U = typeof users;\n",
        'src/app.ts': "import { users } from './modules/a/service.js';\nexport const app = users;\n",
        'src/cli.ts': "import { users } from './modules/a/service.js';\nexport const cli = users;\n",
        'src/cli/user.ts': "import { users } from '../modules/a/service.js';\nexport const user = users;\n",
      }),
    );
    expect(result.violations.filter((v) => v.rule === 'module-internals')).toEqual([
      { rule: 'module-internals', file: 'src/backup/run.test.ts', line: 1, test: true, target: 'src/modules/a/service.ts' },
      { rule: 'module-internals', file: 'src/http/guard.ts', line: 1, test: false, target: 'src/modules/a/service.ts' },
    ]);
    expect(formatReport(result)).toContain(
      'module-internals: src/http/guard.ts:1 imports src/modules/a/service.ts; outside modules/ only app.ts and cli* may, use src/modules/a/index.ts',
    );
  });

  it('reports infra importing a module or the gateway', () => {
    const result = checkBoundaries(
      tree({
        ...clean,
        'src/infra/log.ts':
          "import type { Meter } from '../gateway/meter.js';\nimport '../modules/a/index.js';\nexport const log = (m: Meter) => m;\n",
      }),
    );
    expect(result.violations.filter((v) => v.rule === 'infra').map((v) => v.target)).toEqual([
      'src/gateway/meter.ts',
      'src/modules/a/index.ts',
    ]);
  });

  it('reports code outside gateway/ reaching into its sides, and lets tests and the gateway’s own files do it', () => {
    const sides = {
      ...clean,
      'src/gateway/index.ts': "export { pool } from './upstream/pool.js';\n",
      'src/gateway/upstream/pool.ts': 'export const pool = 1;\n',
      'src/gateway/downstream/face.ts': 'export const face = 2;\n',
      'src/app.ts': "import { pool } from './gateway/index.js';\nexport const app = pool;\n",
      'src/gateway/upstream/pool.test.ts': "import { pool } from './pool.js';\nexport const t = pool;\n",
      'test/kit.ts': "import { face } from '../src/gateway/downstream/face.js';\nexport const kit = face;\n",
    };
    expect(checkBoundaries(tree(sides)).violations).toEqual([]);
    const result = checkBoundaries(
      tree({
        ...sides,
        'src/app.ts': "import { pool } from './gateway/upstream/pool.js';\nexport const app = pool;\n",
        'src/modules/a/service.ts':
          "import type { face } from '../../gateway/downstream/face.js';\nexport const users: (typeof face)[] = [];\n",
      }),
    );
    expect(result.violations.filter((v) => v.rule === 'gateway-door')).toEqual([
      { rule: 'gateway-door', file: 'src/app.ts', line: 1, test: false, target: 'src/gateway/upstream/pool.ts' },
      { rule: 'gateway-door', file: 'src/modules/a/service.ts', line: 1, test: false, target: 'src/gateway/downstream/face.ts' },
    ]);
    expect(formatReport(result, 'apps/server/')).toContain(
      'gateway-door: apps/server/src/app.ts:1 imports apps/server/src/gateway/upstream/pool.ts; outside gateway/, use apps/server/src/gateway/index.ts or a port file of gateway/',
    );
  });

  it('lets only tests import gateway/testing.ts, and reports any other file that does, the gateway’s own included', () => {
    const testing = {
      ...clean,
      'src/gateway/testing.ts': "import type { Meter } from './meter.js';\nexport const internals = (m: Meter) => m;\n",
      'src/gateway/proxy.test.ts': "import { internals } from './testing.js';\nexport const t = internals;\n",
      'src/modules/a/service.test.ts': "import type { internals } from '../../gateway/testing.js';\nexport type I = typeof internals;\n",
      'test/kit.ts': "import { internals } from '../src/gateway/testing.js';\nexport const kit = internals;\n",
    };
    expect(checkBoundaries(tree(testing)).violations).toEqual([]);
    const result = checkBoundaries(
      tree({
        ...testing,
        'src/gateway/index.ts': "export { internals } from './testing.js';\n",
        'src/modules/a/service.ts': "export const users = [];\nexport const load = () => import('../../gateway/testing.js');\n",
        'src/app.ts': "import type { internals } from './gateway/testing.js';\nexport type App = typeof internals;\n",
      }),
    );
    expect(result.violations.filter((v) => v.rule === 'gateway-testing')).toEqual([
      { rule: 'gateway-testing', file: 'src/app.ts', line: 1, test: false, target: 'src/gateway/testing.ts' },
      { rule: 'gateway-testing', file: 'src/gateway/index.ts', line: 1, test: false, target: 'src/gateway/testing.ts' },
      { rule: 'gateway-testing', file: 'src/modules/a/service.ts', line: 2, test: false, target: 'src/gateway/testing.ts' },
    ]);
    const report = formatReport(result, 'apps/server/');
    expect(report).toContain(
      'gateway-testing: apps/server/src/gateway/index.ts:1 imports apps/server/src/gateway/testing.ts, which only tests (*.test.ts, apps/server/test/) may import',
    );
    expect(report.at(-1)).toMatch(/^Boundary check failed: 3 in source files, 0 in test files \(.*gateway-testing 3.*\)\.$/);
  });

  it('lets only the composition root, the CLI and tests use the builders, which keep the module doors', () => {
    const built = {
      ...clean,
      'src/build/core.ts': "import { users } from '../modules/a/index.js';\nexport const core = users;\n",
      'src/app.ts': "import { core } from './build/core.js';\nexport const app = core;\n",
      'src/cli.ts': "export const run = () => import('./build/core.js');\n",
      'src/modules/b/cli.ts': "import { core } from '../../build/core.js';\nexport const cmd = core;\n",
      'test/kit.ts': "import { core } from '../src/build/core.js';\nexport const kit = core;\n",
    };
    expect(checkBoundaries(tree(built)).violations).toEqual([]);
    const result = checkBoundaries(
      tree({
        ...built,
        'src/build/core.ts': "import { users } from '../modules/a/service.js';\nexport const core = users;\n",
        'src/modules/b/x.ts': "import { core } from '../../build/core.js';\nexport const x = core;\n",
        'src/infra/log.ts': "import type { core } from '../build/core.js';\nexport const log = (x: typeof core) => x;\n",
      }),
    );
    expect(result.violations.filter((v) => v.rule === 'build').map((v) => v.file)).toEqual(['src/infra/log.ts', 'src/modules/b/x.ts']);
    expect(result.violations.filter((v) => v.rule === 'module-internals')).toEqual([
      { rule: 'module-internals', file: 'src/build/core.ts', line: 1, test: false, target: 'src/modules/a/service.ts' },
    ]);
    expect(formatReport(result, 'apps/server/')).toContain(
      "build: apps/server/src/modules/b/x.ts:1 imports apps/server/src/build/core.ts; only app.ts, server.ts and the CLI (cli.ts, cli/, a command's cli.ts) build the graph",
    );
  });

  it('reports each import cycle once, as a path from its first file', () => {
    const result = checkBoundaries(
      tree({
        ...clean,
        'src/p.ts': "import { q } from './q.js';\nexport const p = () => q;\n",
        'src/q.ts': "import type { p } from './p';\nexport const q = 1 as unknown as typeof p;\n",
        'src/r.ts': "export { s } from './s.js';\n",
        'src/s.ts': "import { t } from './t.js';\nexport const s = t;\n",
        'src/t.ts': "import './r.js';\nexport const t = 1;\n",
      }),
    );
    const cycles = result.violations.filter((v) => v.rule === 'cycle');
    expect(cycles.map((v) => v.cycle)).toEqual([
      ['src/p.ts', 'src/q.ts'],
      ['src/r.ts', 'src/s.ts', 'src/t.ts'],
    ]);
    expect(result.tangles).toBe(2);
    const report = formatReport(result);
    expect(report).toContain('cycle: src/r.ts -> src/s.ts -> src/t.ts -> src/r.ts');
    expect(report.at(-1)).toBe('Boundary check failed: 2 in source files, 0 in test files (cycle 2 in 2 tangles).');
  });

  it('reports code that is not a test importing vitest or apps/server/test/', () => {
    const result = checkBoundaries(
      tree({
        ...clean,
        'src/modules/a/test-helpers.ts':
          "import { vi } from 'vitest';\nimport { harness } from '../../../test/harness.js';\nexport const h = [vi, harness];\n",
      }),
    );
    expect(result.violations).toEqual([
      { rule: 'test-code', file: 'src/modules/a/test-helpers.ts', line: 1, test: false, target: 'vitest' },
      { rule: 'test-code', file: 'src/modules/a/test-helpers.ts', line: 2, test: false, target: 'test/harness.ts' },
    ]);
    expect(formatReport(result, 'apps/server/')).toContain(
      'test-code: apps/server/src/modules/a/test-helpers.ts:2 imports apps/server/test/harness.ts, but is not a test file (*.test.ts)',
    );
  });

  it('lists violations of test files apart from those of source files', () => {
    const result = checkBoundaries(
      tree({
        ...clean,
        'src/modules/b/x.test.ts': "import { users } from '../a/service.js';\nexport const n = users.length;\n",
        'src/infra/log.ts': "import type { Meter } from '../gateway/meter.js';\nexport const log = (x: Meter) => x;\n",
      }),
    );
    expect(result.violations.map((v) => [v.rule, v.test])).toEqual([
      ['infra', false],
      ['module-door', true],
    ]);
    const report = formatReport(result);
    expect(report.indexOf('In test files:')).toBeGreaterThan(report.findIndex((l) => l.startsWith('infra:')));
    expect(report.indexOf('In test files:')).toBeLessThan(report.findIndex((l) => l.startsWith('module-door:')));
    expect(report.at(-1)).toBe('Boundary check failed: 1 in source files, 1 in test files (module-door 1, infra 1).');
  });
});

/** A console laid out as apps/web: two features with doors, shared code below them, the app above. */
const cleanWeb = {
  'src/main.tsx': "import { router } from './app/router';\nexport const main = router;\n",
  'src/app/router.tsx':
    "import { aRoutes } from '../features/a';\nimport { bRoutes } from '../features/b/index';\nexport const router = [aRoutes, bRoutes];\n",
  'src/lib/api.ts': 'export const api = 1;\n',
  'src/components/field.tsx': "import { api } from '../lib/api';\nexport const Field = () => <div>{api}</div>;\n",
  'src/features/a/index.ts': "export { aRoutes } from './routes';\nexport { title } from './title';\n",
  'src/features/a/routes.ts': "export const aRoutes = [{ lazy: () => import('./page') }];\n",
  'src/features/a/page.tsx':
    "import { Field } from '../../components/field';\nimport { title } from './title';\nexport const Page = () => <Field>{title}</Field>;\n",
  'src/features/a/title.ts': 'export const title = 1;\n',
  'src/features/b/index.ts': "export { bRoutes } from './routes';\n",
  'src/features/b/routes.ts': "export const bRoutes = [{ lazy: () => import('./page') }];\n",
  'src/features/b/page.tsx': "import { title } from '../a';\nexport const Page = () => <p>{title}</p>;\n",
  'src/features/b/page.test.tsx':
    "import { expect, it } from 'vitest';\nimport { renderApp } from '../../test/render';\nimport { title } from '../a/index';\nit('b', () => expect(renderApp(title)).toBe(1));\n",
  'src/features/b/test-fixtures.ts': "import { vi } from 'vitest';\nexport const fixture = vi.fn();\n",
  'src/test/render.tsx':
    "import { vi } from 'vitest';\nimport { router } from '../app/router';\nexport const renderApp = (x: number) => vi.fn(() => [router, x]);\n",
};

describe('checkWebBoundaries', () => {
  it('passes a console that keeps every rule, and says what it checked', () => {
    const result = checkWebBoundaries(tree(cleanWeb));
    expect(result.violations).toEqual([]);
    expect(result).toMatchObject({ files: 14, testFiles: 3 });
    expect(formatReport(result)[0]).toMatch(
      /^Boundaries ok: 14 files \(3 tests\), \d+ imports; feature doors, shared code, import cycles and test code checked\.$/,
    );
  });

  it('reports a reach past a feature’s index.ts, from another feature, the app or a test, and names the door', () => {
    const result = checkWebBoundaries(
      tree({
        ...cleanWeb,
        'src/features/b/page.tsx': "import type { title } from '../a/title';\nexport const Page = (t: typeof title) => t;\n",
        'src/features/b/lazy.ts': "export const load = () => import('../a/page');\n",
        // The router's own door is a room's routes.ts (its pages load lazily); anything else behind the door is not.
        'src/app/router.tsx': "import { aRoutes } from '../features/a/routes';\nexport const router = [aRoutes];\n",
        'src/app/shell.tsx': "import { Page } from '../features/a/page';\nexport const Shell = Page;\n",
        'src/features/b/page.test.tsx': "import { title } from '../a/title';\nexport const t = title;\n",
      }),
    );
    expect(result.violations.map((v) => [v.rule, v.file, v.target, v.test])).toEqual([
      ['feature-door', 'src/app/shell.tsx', 'src/features/a/page.tsx', false],
      ['feature-door', 'src/features/b/lazy.ts', 'src/features/a/page.tsx', false],
      ['feature-door', 'src/features/b/page.test.tsx', 'src/features/a/title.ts', true],
      ['feature-door', 'src/features/b/page.tsx', 'src/features/a/title.ts', false],
    ]);
    expect(formatReport(result, 'apps/web/')).toContain(
      'feature-door: apps/web/src/features/b/page.tsx:1 imports apps/web/src/features/a/title.ts; use apps/web/src/features/a/index.ts',
    );
  });

  it('reports lib/ or components/ importing a feature or the app', () => {
    const result = checkWebBoundaries(
      tree({
        ...cleanWeb,
        'src/lib/api.ts': "import { title } from '../features/a';\nexport const api = title;\n",
        'src/components/field.tsx': "import { router } from '../app/router';\nexport const Field = () => <div>{router.length}</div>;\n",
      }),
    );
    const shared = result.violations.filter((v) => v.rule === 'shared-code');
    expect(shared.map((v) => [v.file, v.target])).toEqual([
      ['src/components/field.tsx', 'src/app/router.tsx'],
      ['src/lib/api.ts', 'src/features/a/index.ts'],
    ]);
    expect(formatReport(result)).toContain(
      'shared-code: src/lib/api.ts:1 imports src/features/a/index.ts; lib/ and components/ must not depend on features/ or app/',
    );
  });

  it('reports an import cycle, through a door and a lazy import too', () => {
    const result = checkWebBoundaries(
      tree({
        ...cleanWeb,
        'src/features/a/title.ts': "import { bRoutes } from '../b';\nexport const title = bRoutes.length;\n",
      }),
    );
    // Two cycles, one tangle: a/index.ts reaches a/title.ts directly and through a's page.
    expect(result.violations.filter((v) => v.rule === 'cycle').map((v) => v.cycle)).toEqual([
      [
        'src/features/a/index.ts',
        'src/features/a/routes.ts',
        'src/features/a/page.tsx',
        'src/features/a/title.ts',
        'src/features/b/index.ts',
        'src/features/b/routes.ts',
        'src/features/b/page.tsx',
      ],
      [
        'src/features/a/index.ts',
        'src/features/a/title.ts',
        'src/features/b/index.ts',
        'src/features/b/routes.ts',
        'src/features/b/page.tsx',
      ],
    ]);
    expect(result.tangles).toBe(1);
  });

  it('reports console code that is not test code importing vitest or src/test/', () => {
    const result = checkWebBoundaries(
      tree({
        ...cleanWeb,
        'src/features/a/title.ts':
          "import { vi } from 'vitest';\nimport { renderApp } from '../../test/render';\nexport const title = [vi, renderApp];\n",
      }),
    );
    expect(result.violations.filter((v) => v.rule === 'test-code').map((v) => [v.file, v.line, v.target])).toEqual([
      ['src/features/a/title.ts', 1, 'vitest'],
      ['src/features/a/title.ts', 2, 'src/test/render.tsx'],
    ]);
  });

  // Reads the console twice (about 300 files each): more than the default 5 s beside other suites on 2 cores.
  it('passes the console as it is, and fails it with one reach-in planted', { timeout: 60_000 }, () => {
    const web = fileURLToPath(new URL('../apps/web', import.meta.url));
    expect(checkWebBoundaries(web).violations).toEqual([]);
    const copy = mkdtempSync(path.join(tmpdir(), 'boundaries-web-'));
    dirs.push(copy);
    cpSync(path.join(web, 'src'), path.join(copy, 'src'), { recursive: true });
    writeFileSync(
      path.join(copy, 'src/features/groups/planted.ts'),
      "import { useServiceActions } from '../services/use-service-actions';\nexport const planted = useServiceActions;\n",
    );
    const result = checkWebBoundaries(copy);
    expect(result.violations.map((v) => [v.rule, v.file, v.target])).toEqual([
      ['feature-door', 'src/features/groups/planted.ts', 'src/features/services/use-service-actions.ts'],
    ]);
  });
});
