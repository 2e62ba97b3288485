import { describe, expect, it } from 'vitest';
import { emptyPackage } from '../sources/types.js';
import { InstalledIndex } from './installed.js';
import { toMarketPackage } from './mapping.js';

const none = new InstalledIndex(new Map());

describe('toMarketPackage counts', () => {
  it('keeps a real 0 as 0 and an unknown count as null', () => {
    const pkg = { ...emptyPackage('npm', 'acme-zero'), version: '1.0.0' };
    expect(toMarketPackage(pkg, { downloads: 0, stars: 0 }, none)).toMatchObject({ downloads: 0, github_stars: 0 });
    expect(toMarketPackage(pkg, { downloads: null, stars: null }, none)).toMatchObject({ downloads: null, github_stars: null });
    expect(toMarketPackage(pkg, { downloads: 12.7, stars: -3 }, none)).toMatchObject({ downloads: 12, github_stars: 0 });
  });
});
