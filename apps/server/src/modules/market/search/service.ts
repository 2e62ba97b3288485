import {
  type EnvVarDeclaration,
  MARKET_SEARCH_LIMIT,
  type MarketPackage,
  type MarketSourceName,
  marketSources,
  type PackageDetails,
} from '@toolport/contract';
import { AppError, badRequest, notFound } from '../../../http/errors.js';
import type { ServiceRows } from '../../services/index.js';
import { discoverEnvVars } from '../details/env-discovery.js';
import { mcpConfigFor } from '../details/mcp-config.js';
import { SourceError } from '../sources/http.js';
import type { MarketSources } from '../sources/index.js';
import { githubRepoOf } from '../sources/links.js';
import type { DeclaredEnvVar, PartialFailure, SourcePackage } from '../sources/types.js';
import { type InstalledIndex, readInstalledIndex } from './installed.js';
import { githubUrlOf, type Popularity, toMarketPackage } from './mapping.js';

/** How sources are named in messages. */
export const SOURCE_LABEL: Record<MarketSourceName, string> = { npm: 'npm', pypi: 'PyPI', mcp_registry: 'MCP Registry' };

/** The setting that points at each source's registry: what an operator changes when a search fails. */
export const SOURCE_SETTING: Record<MarketSourceName, string> = {
  npm: 'NPM_REGISTRY_URL',
  // PyPI has no search API: its search is the JSON API's exact match plus the MCP Registry's PyPI entries.
  pypi: 'PYPI_JSON_URL / MCP_REGISTRY_URL',
  mcp_registry: 'MCP_REGISTRY_URL',
};

/** A source whose search failed, and why (the registry's status or the network's error). */
export interface SearchFailure {
  source: MarketSourceName;
  reason: string;
}

/** A source that answered, though part of its search failed (PyPI's MCP Registry half). */
export interface SearchPartial extends PartialFailure {
  source: MarketSourceName;
}

/** Readmes beyond this are cut: the detail view renders them whole. */
const README_MAX = 256 * 1024;

/**
 * `sources` as the console sends it: one source, or several separated by commas (or `|`).
 * Absent means every source.
 */
export function parseSources(text: string | undefined): MarketSourceName[] {
  if (!text) return [...marketSources];
  const wanted = text
    .split(/[,|]/)
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
  for (const s of wanted) {
    if (!(marketSources as readonly string[]).includes(s)) throw badRequest('market.invalid_source', { source: s });
  }
  return [...new Set(wanted as MarketSourceName[])];
}

/** A package as its source has it; else 404 when it does not exist, 502 when its registry cannot say. */
export async function findPackage(sources: MarketSources, name: string, source: MarketSourceName): Promise<SourcePackage> {
  let pkg: SourcePackage | null;
  try {
    pkg = await sources.bySource(source).details(name);
  } catch (err) {
    if (!(err instanceof SourceError)) throw err;
    sources.logger.warn({ source, name, err: String(err) }, 'marketplace details failed');
    throw new AppError(502, 'market.source_unavailable', { source: SOURCE_LABEL[source] });
  }
  if (!pkg) throw notFound('market.package_not_found', { name, source: SOURCE_LABEL[source] });
  return pkg;
}

/** Searching and reading packages across the registries, with installed state from the services table. */
export class MarketService {
  constructor(
    readonly sources: MarketSources,
    private readonly rows: Pick<ServiceRows, 'packaged'>,
  ) {}

  /** Which packages have a service: search results and installs answer for them. */
  installedIndex(): Promise<InstalledIndex> {
    return readInstalledIndex(this.rows);
  }

  /**
   * Results of every asked source, each in its own order, and the sources that failed with their reasons. A
   * failed source adds no packages but is reported: "nothing found" and "could not ask" are different answers.
   */
  async search(
    query: string,
    sources: MarketSourceName[],
  ): Promise<{ packages: MarketPackage[]; failures: SearchFailure[]; partials: SearchPartial[] }> {
    const text = query.trim();
    if (!text) return { packages: [], failures: [], partials: [] };
    const partials: SearchPartial[] = [];
    const settled = await Promise.allSettled(
      sources.map((s) => this.sources.bySource(s).search(text, MARKET_SEARCH_LIMIT, (p) => partials.push({ source: s, ...p }))),
    );
    const failures: SearchFailure[] = [];
    const packages = settled.flatMap((result, i) => {
      if (result.status === 'fulfilled') return result.value;
      if (!(result.reason instanceof SourceError)) throw result.reason;
      failures.push({ source: sources[i] as MarketSourceName, reason: result.reason.message });
      return [];
    });
    const [popularity, installed] = await Promise.all([Promise.all(packages.map((p) => this.popularity(p))), this.installedIndex()]);
    return {
      packages: packages.map((p, i) => toMarketPackage(p, popularity[i] ?? { downloads: null, stars: null }, installed)),
      failures,
      partials,
    };
  }

  /** Everything the detail view shows; 404 when the package does not exist, 502 when its registry cannot say. */
  async details(name: string, source: MarketSourceName): Promise<PackageDetails> {
    const pkg = await this.find(name, source);
    const [declared, readme] = await Promise.all([this.declaredEnv(pkg), this.readmeOf(pkg)]);
    const envVars = discoverEnvVars(declared, readme);
    const [popularity, installed] = await Promise.all([this.popularity(pkg), this.installedIndex()]);
    const item = toMarketPackage(pkg, popularity, installed);
    return {
      details: item,
      downloads: item.downloads,
      stars: item.github_stars,
      author: item.author,
      repository_url: item.repository_url,
      last_publish: item.last_publish,
      is_installed: item.is_installed,
      installed_service_id: item.installed_service_id,
      env_vars: envVars,
      readme: readme.length > README_MAX ? readme.slice(0, README_MAX) : readme,
      mcp_config: mcpConfigFor(pkg, envVars),
    };
  }

  /** The package as its source has it, or the AppError the route answers with. */
  find(name: string, source: MarketSourceName): Promise<SourcePackage> {
    return findPackage(this.sources, name, source);
  }

  /** The variables a package reads (registry declarations, then its readme): what an install asks for. */
  async envVarsOf(pkg: SourcePackage): Promise<EnvVarDeclaration[]> {
    const [declared, readme] = await Promise.all([this.declaredEnv(pkg), this.readmeOf(pkg)]);
    return discoverEnvVars(declared, readme);
  }

  private async popularity(p: SourcePackage): Promise<Popularity> {
    const downloads = p.weeklyDownloads ?? (p.npmPackage ? this.sources.npm.weeklyDownloads(p.npmPackage) : null);
    const [d, stars] = await Promise.all([downloads, this.sources.github.stars(githubRepoOf(githubUrlOf(p)))]);
    return { downloads: d, stars };
  }

  /** npm and PyPI packages may also be listed in the MCP Registry, which declares their variables. */
  private declaredEnv(p: SourcePackage): Promise<DeclaredEnvVar[]> {
    if (p.source === 'mcp_registry' || p.declaredEnv.length > 0) return Promise.resolve(p.declaredEnv);
    return this.sources.mcpRegistry.declaredEnvFor(p.source, p.name, p.mcpName);
  }

  /** MCP Registry entries carry no readme: the one of the package they run stands in. */
  private async readmeOf(p: SourcePackage): Promise<string> {
    if (p.readme || p.launch?.kind !== 'package') return p.readme;
    const { registryType, identifier } = p.launch;
    if (registryType !== 'npm' && registryType !== 'pypi') return '';
    try {
      return (await this.sources.bySource(registryType).details(identifier))?.readme ?? '';
    } catch (err) {
      this.sources.logger.warn({ source: registryType, name: identifier, err: String(err) }, 'marketplace readme lookup failed');
      return '';
    }
  }
}
