import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { allEndpoints, type EndpointOf } from './endpoints.js';
import { pathOf, type Route, routes } from './routes.js';

type RouteLeaves<T> = T extends Route ? T : T extends object ? { [K in keyof T]: RouteLeaves<T[K]> }[keyof T] : never;
/** Routes whose entry the console's types cannot find: left out of the table, or not a valid entry there. */
type Untyped<R extends Route> = R extends unknown ? ([EndpointOf<R>] extends [never] ? `${R['method']} ${R['path']}` : never) : never;
type Missing = Untyped<RouteLeaves<typeof routes>>;
const everyRouteTyped: [Missing] extends [never] ? true : Missing = true;

describe('endpoint table', () => {
  it('gives the console the types of every route (checked by the compiler)', () => {
    expect(everyRouteTyped).toBe(true);
  });

  it('names each method and path once', () => {
    const keys = allEndpoints().map((e) => `${e.method} ${e.path}`);
    expect(keys.length).toBeGreaterThan(0);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('adds schemas to every route, and to nothing else', () => {
    const keys: string[] = [];
    const walk = (node: object): void => {
      for (const value of Object.values(node)) {
        if (typeof value.method === 'string') keys.push(`${value.method} ${value.path} ${value.auth}`);
        else walk(value);
      }
    };
    walk(routes);
    // The same routes, each once; the two tables may list them in different orders.
    expect(
      allEndpoints()
        .map((e) => `${e.method} ${e.path} ${e.auth}`)
        .sort(),
    ).toEqual(keys.sort());
  });

  it('has a params schema with exactly the placeholders of its path', () => {
    for (const e of allEndpoints()) {
      const placeholders = [...e.path.matchAll(/:(\w+)/g)].map((m) => m[1]).sort();
      const keys = e.params instanceof z.ZodObject ? Object.keys(e.params.shape).sort() : [];
      expect(keys, `${e.method} ${e.path}`).toEqual(placeholders);
    }
  });

  it('fills placeholders with encoded values', () => {
    expect(pathOf(routes.services.toggle, { id: 7 })).toBe('/mcp_services/7/toggle');
    expect(pathOf(routes.services.installStatus, { taskId: 'a/b' })).toBe('/mcp_market/install_status/a%2Fb');
    expect(() => pathOf(routes.users.remove, {})).toThrow(/:id/);
  });
});
