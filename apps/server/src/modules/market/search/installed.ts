import { MARKET_SOURCE_OF_MANAGER, type MarketSourceName } from '@toolport/contract';
import type { ServiceRows } from '../../services/index.js';
import { normalizePypiName } from '../sources/pypi.js';

const keyOf = (source: MarketSourceName, name: string) => `${source}\n${source === 'pypi' ? normalizePypiName(name) : name}`;

/** Which packages are installed, by marketplace source and package name. */
export class InstalledIndex {
  constructor(private readonly ids: Map<string, number>) {}

  serviceIdOf(source: MarketSourceName, packageName: string): number | null {
    return this.ids.get(keyOf(source, packageName)) ?? null;
  }
}

/**
 * Every service that came from a package. A service matches by its `source` (how it was
 * installed: npm, pypi, mcp_registry) and by its `package_manager` (so a custom `npx …` service
 * shows its npm package as installed). With several services of one package, the oldest wins.
 */
export async function readInstalledIndex(rows: Pick<ServiceRows, 'packaged'>): Promise<InstalledIndex> {
  const ids = new Map<string, number>();
  for (const row of await rows.packaged()) {
    for (const how of [row.package_manager, row.source]) {
      const source = MARKET_SOURCE_OF_MANAGER[how.toLowerCase()];
      if (source) ids.set(keyOf(source, row.package_name), row.id);
    }
  }
  return new InstalledIndex(ids);
}
