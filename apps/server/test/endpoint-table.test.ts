import { allEndpoints } from '@toolport/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './harness.js';
import { apiRoutes } from './route-table.js';

/**
 * The contract's endpoint table is what the console calls and what routes are registered from: every
 * /api route the server serves must be registered from it with the same method, path and auth level, and
 * every entry must be served. The API docs pages are the only /api routes outside it.
 */
describe('endpoint table', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp('sqlite');
  });
  afterAll(async () => t?.close());

  const notInTable = (url: string) => url.startsWith('/api/docs');
  const served = () =>
    apiRoutes(t.routes)
      .filter((r) => !notInTable(r.url))
      .map((r) => `${r.method} ${r.url} ${r.auth}`);
  const declared = () => allEndpoints().map((e) => `${e.method} /api${e.path} ${e.auth}`);

  it('declares every served /api route, with its auth level', () => {
    const table = new Set(declared());
    expect(served().filter((r) => !table.has(r))).toEqual([]);
  });

  it('registers every served /api route through the table, the API docs pages alone excepted', () => {
    const byHand = apiRoutes(t.routes).filter((r) => !r.endpoint && !notInTable(r.url));
    expect(byHand.map((r) => `${r.method} ${r.url}`)).toEqual([]);
  });

  it('has every entry served', () => {
    const routes = new Set(served());
    expect(declared().filter((e) => !routes.has(e))).toEqual([]);
  });
});
