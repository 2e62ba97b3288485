import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { allEndpoints, endpoints, pathOf } from './endpoints.js';

describe('endpoint table', () => {
  it('names each method and path once', () => {
    const keys = allEndpoints().map((e) => `${e.method} ${e.path}`);
    expect(keys.length).toBeGreaterThan(0);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('has a params schema with exactly the placeholders of its path', () => {
    for (const e of allEndpoints()) {
      const placeholders = [...e.path.matchAll(/:(\w+)/g)].map((m) => m[1]).sort();
      const keys = e.params instanceof z.ZodObject ? Object.keys(e.params.shape).sort() : [];
      expect(keys, `${e.method} ${e.path}`).toEqual(placeholders);
    }
  });

  it('fills placeholders with encoded values', () => {
    expect(pathOf(endpoints.services.toggle, { id: 7 })).toBe('/mcp_services/7/toggle');
    expect(pathOf(endpoints.services.installStatus, { taskId: 'a/b' })).toBe('/mcp_market/install_status/a%2Fb');
    expect(() => pathOf(endpoints.users.remove, {})).toThrow(/:id/);
  });
});
