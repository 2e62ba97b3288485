import type { Config } from '../../../config.js';
import { GithubStars } from './github.js';
import { McpRegistrySource } from './mcp-registry.js';
import { NpmSource } from './npm.js';
import { NpmRegistryUrl } from './npm-registry-url.js';
import { PypiSource } from './pypi.js';
import type { MarketSource, SourceName, SourceOptions } from './types.js';

/** Every registry the marketplace reads, built once per app so their caches are shared by all requests. */
export interface MarketSources {
  npm: NpmSource;
  pypi: PypiSource;
  mcpRegistry: McpRegistrySource;
  github: GithubStars;
  /** Resolved once; the installer installs from the same registry the marketplace searched. */
  npmRegistryUrl: NpmRegistryUrl;
  logger: SourceOptions['logger'];
  bySource(source: SourceName): MarketSource;
}

/** A registry gets this long to answer before its part of a search is given up. */
export const SOURCE_TIMEOUT_MS = 8000;

export function createMarketSources(config: Config, logger: SourceOptions['logger'], timeoutMs = SOURCE_TIMEOUT_MS): MarketSources {
  const common = { timeoutMs, logger };
  const npmRegistryUrl = new NpmRegistryUrl(config.registries.npm);
  const npm = new NpmSource({ ...common, registryUrl: npmRegistryUrl, downloadsUrl: config.registries.npmDownloads });
  const mcpRegistry = new McpRegistrySource({ ...common, baseUrl: config.registries.mcpRegistry });
  const pypi = new PypiSource({ ...common, jsonUrl: config.registries.pypiJson, registry: mcpRegistry });
  const github = new GithubStars({ ...common, apiUrl: config.oauth.githubApiUrl, token: config.registries.githubToken });
  const byName: Record<SourceName, MarketSource> = { npm, pypi, mcp_registry: mcpRegistry };
  return { npm, pypi, mcpRegistry, github, npmRegistryUrl, logger, bySource: (source) => byName[source] };
}
