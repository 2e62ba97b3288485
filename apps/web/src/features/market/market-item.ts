import type { EnvVarDeclaration, InstalledService, MarketPackage, MarketSourceName, PackageDetails } from '@toolport/contract';
import { MARKET_SOURCE_OF_MANAGER, marketSources, splitPackageSpec } from '@toolport/contract';

/** The tabs of the marketplace (docs/console.md §2.10): one per package source, then the installed services. */
export type MarketTab = MarketSourceName | 'installed';
export const marketTabs: readonly MarketTab[] = [...marketSources, 'installed'];
export const DEFAULT_MARKET_TAB: MarketTab = 'npm';

export const isMarketSource = (value: unknown): value is MarketSourceName =>
  typeof value === 'string' && (marketSources as readonly string[]).includes(value);

/** A variable a package reads, as the client keeps it (docs/console.md §3). */
export interface MarketEnvVar {
  name: string;
  description: string;
  isSecret: boolean;
  isRequired: boolean;
  defaultValue: string;
  /** What the user entered, if anything. */
  value: string;
}

/**
 * One card of the marketplace (docs/console.md §3): a search result, a package's details or an installed
 * service, in one shape. Text fallbacks that depend on the language ('Unknown Name', 'Unknown Author')
 * are left empty here and filled in where they are shown.
 */
export interface MarketItem {
  /** The package name plus its package manager; an installed service without a package uses its id. */
  id: string;
  name: string;
  /** The package to look up and install; '' for a service that came from no package (custom). */
  packageName: string;
  version: string;
  description: string;
  /** npm, pypi or mcp_registry for packages; the service's own source otherwise. */
  source: string;
  /**
   * Weekly downloads: null when the source did not provide them (shown as unknown, "—"), undefined where
   * no count applies (an installed service, shown without one).
   */
  downloads: number | null | undefined;
  /** GitHub stars; null when unknown (shown as "—"), as the server answers it. */
  stars: number | null;
  author: string;
  repositoryUrl: string;
  homepage: string;
  lastUpdated: string;
  isInstalled: boolean;
  installed_service_id: number | null;
  envVars: MarketEnvVar[];
  readme: string;
  /** Made from an installed service: the registry's author is not known, so none is shown (issue 15). */
  fromInstalled?: boolean;
}

/** Shown when a result names no version (docs/console.md §3). */
export const FALLBACK_VERSION = '0.0.0';

export const itemIdOf = (name: string, source: string) => `${name}:${source}`;

const GITHUB_HOSTS = new Set(['github.com', 'www.github.com']);

/** True when the address is on the code-hosting provider (GitHub). */
export function isGithubUrl(url: string): boolean {
  try {
    return GITHUB_HOSTS.has(new URL(url).hostname.toLowerCase());
  } catch {
    return false;
  }
}

/** The first path segment of a GitHub address (its owner), or ''. */
export function githubOwnerOf(url: string): string {
  if (!isGithubUrl(url)) return '';
  return new URL(url).pathname.split('/').find(Boolean) ?? '';
}

/** An author given as a string or as an object with a name (docs/console.md §2.10); '' when neither. */
export function authorName(author: unknown): string {
  if (typeof author === 'string') return author.trim();
  if (author && typeof author === 'object' && 'name' in author && typeof author.name === 'string') return author.name.trim();
  return '';
}

export const toMarketEnvVar = (v: EnvVarDeclaration): MarketEnvVar => ({
  name: v.name,
  description: v.description,
  isSecret: v.is_secret,
  isRequired: !v.optional,
  defaultValue: v.default_value,
  value: '',
});

/** A search result as the cards read it (docs/console.md §3). */
export function fromMarketPackage(p: MarketPackage): MarketItem {
  const homepage = p.homepage || '';
  return {
    id: itemIdOf(p.name, p.package_manager),
    name: p.name,
    packageName: p.name,
    version: p.version || FALLBACK_VERSION,
    description: p.description,
    source: p.package_manager,
    downloads: p.downloads,
    stars: p.github_stars,
    author: authorName(p.author) || githubOwnerOf(homepage),
    repositoryUrl: p.repository_url,
    homepage,
    lastUpdated: p.last_publish,
    isInstalled: p.is_installed,
    installed_service_id: p.installed_service_id,
    envVars: [],
    readme: '',
  };
}

/** A package's details: the result under `details`, with the counts, variables and readme beside it. */
export function fromPackageDetails(d: PackageDetails): MarketItem {
  const base = fromMarketPackage(d.details);
  return {
    ...base,
    downloads: d.downloads,
    stars: d.stars,
    author: authorName(d.author) || base.author,
    repositoryUrl: d.repository_url || base.repositoryUrl,
    lastUpdated: d.last_publish || base.lastUpdated,
    isInstalled: d.is_installed,
    installed_service_id: d.installed_service_id,
    envVars: d.env_vars.map(toMarketEnvVar),
    readme: d.readme,
  };
}

/** The marketplace source an installed service's package comes from, or null for one that has none. */
export function marketSourceOf(service: Pick<InstalledService, 'source' | 'package_manager' | 'package_name'>): MarketSourceName | null {
  if (!service.package_name) return null;
  if (isMarketSource(service.source)) return service.source;
  return MARKET_SOURCE_OF_MANAGER[service.package_manager.toLowerCase()] ?? null;
}

/**
 * The package name without a pinned version, and that version: services added as `npx -y pkg@1.2.3`
 * before the server split them carry the whole spec as their package name.
 */
function packageParts(s: InstalledService, source: MarketSourceName | null): { name: string; version: string } {
  if (source === 'npm' || source === 'pypi') {
    const parts = splitPackageSpec(source === 'npm' ? 'npx' : 'uvx', s.package_name);
    return { name: parts.name, version: s.version || parts.version };
  }
  return { name: source ? s.package_name : '', version: s.version };
}

/** An installed service on the Installed tab: keyed like its package's search result, so their states line up. */
export function fromInstalledService(s: InstalledService): MarketItem {
  const source = marketSourceOf(s);
  const pkg = packageParts(s, source);
  return {
    id: source ? itemIdOf(pkg.name, source) : `service:${s.id}`,
    name: s.display_name || s.name,
    packageName: pkg.name,
    version: pkg.version || FALLBACK_VERSION,
    description: s.description,
    source: source ?? s.source,
    downloads: undefined,
    stars: null,
    author: '',
    repositoryUrl: '',
    homepage: '',
    lastUpdated: '',
    isInstalled: true,
    installed_service_id: s.installed_service_id,
    envVars: s.env_vars.map(toMarketEnvVar),
    readme: '',
    fromInstalled: true,
  };
}

/**
 * The public page of a package on its registry: npmjs.com, pypi.org, or the MCP Registry's own entry
 * (its API answers a server's latest version); '' for a service that came from no package.
 */
export function packagePageUrl(source: string, packageName: string): string {
  if (!packageName) return '';
  switch (source) {
    case 'npm':
      return `https://www.npmjs.com/package/${packageName}`;
    case 'pypi':
      return `https://pypi.org/project/${encodeURIComponent(packageName)}/`;
    case 'mcp_registry':
      return `https://registry.modelcontextprotocol.io/v0.1/servers/${encodeURIComponent(packageName)}/versions/latest`;
    default:
      return '';
  }
}

/** Where the detail view of a package lives: /market/{source}/{name}, the name's slashes kept. */
export function detailsPath(source: string, packageName: string): string {
  return `/market/${encodeURIComponent(source)}/${packageName.split('/').map(encodeURIComponent).join('/')}`;
}
