import { describe, expect, it } from 'vitest';
import { TtlCache } from './cache.js';

describe('TtlCache', () => {
  it('shares one load between concurrent callers and keeps the value until it expires', async () => {
    let now = 0;
    let loads = 0;
    const cache = new TtlCache<number>(1000, 10, () => now);
    const load = async () => ++loads;
    expect(await Promise.all([cache.getOrLoad('a', load), cache.getOrLoad('a', load)])).toEqual([1, 1]);
    now = 999;
    expect(await cache.getOrLoad('a', load)).toBe(1);
    now = 1000;
    expect(await cache.getOrLoad('a', load)).toBe(2);
  });

  it('forgets a failed load so the next call tries again', async () => {
    const cache = new TtlCache<string>(60_000, 10);
    await expect(cache.getOrLoad('k', () => Promise.reject(new Error('down')))).rejects.toThrow('down');
    expect(await cache.getOrLoad('k', async () => 'up')).toBe('up');
  });

  it('evicts the least recently used entry beyond its size', async () => {
    const cache = new TtlCache<string>(60_000, 2);
    await cache.getOrLoad('a', async () => 'a1');
    await cache.getOrLoad('b', async () => 'b1');
    await cache.getOrLoad('a', async () => 'a2');
    await cache.getOrLoad('c', async () => 'c1');
    expect(cache.size).toBe(2);
    expect(await cache.getOrLoad('a', async () => 'a3')).toBe('a1');
    expect(await cache.getOrLoad('b', async () => 'b2')).toBe('b2');
  });
});
