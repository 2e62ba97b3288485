import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { allEndpoints } from './endpoints.js';
import { pathOf, routes } from './routes.js';

describe('endpoint table', () => {
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
    expect(allEndpoints().map((e) => `${e.method} ${e.path} ${e.auth}`)).toEqual(keys);
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
