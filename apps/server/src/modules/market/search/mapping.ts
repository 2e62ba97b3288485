import type { MarketPackage } from '@toolport/contract';
import { firstGithubUrl, githubRepoOf } from '../sources/links.js';
import type { SourcePackage } from '../sources/types.js';
import type { InstalledIndex } from './installed.js';

/** Counts looked up beside the source: weekly downloads and GitHub stars; null when nobody could say. */
export interface Popularity {
  downloads: number | null;
  stars: number | null;
}

/** A count as the API answers it: a whole number, or null when unknown (never a made-up 0). */
const countOrNull = (n: number | null): number | null => (n === null || !Number.isFinite(n) ? null : Math.max(0, Math.trunc(n)));

/** The GitHub repository of a package, from whichever of its links leads there, as a canonical URL or ''. */
export const githubUrlOf = (p: SourcePackage) => firstGithubUrl([p.repositoryUrl, p.homepage, ...p.linkHints]);

/**
 * A source's package as the console's result card reads it (docs/console.md §3). Missing links are
 * filled from the GitHub repository, whose owner is also the author when the source names none.
 */
export function toMarketPackage(p: SourcePackage, popularity: Popularity, installed: InstalledIndex): MarketPackage {
  const github = githubUrlOf(p);
  const repositoryUrl = p.repositoryUrl || github;
  const serviceId = installed.serviceIdOf(p.source, p.name);
  return {
    name: p.name,
    version: p.version,
    description: p.description,
    package_manager: p.source,
    downloads: countOrNull(popularity.downloads),
    github_stars: countOrNull(popularity.stars),
    author: p.author || (githubRepoOf(github)?.owner ?? ''),
    homepage: p.homepage || repositoryUrl,
    repository_url: repositoryUrl,
    last_publish: isoOrEmpty(p.lastPublish),
    is_installed: serviceId !== null,
    installed_service_id: serviceId,
  };
}

/** Registries write times in several ISO 8601 flavours; the API always answers one. */
function isoOrEmpty(time: string): string {
  const ms = time ? Date.parse(time) : Number.NaN;
  return Number.isNaN(ms) ? '' : new Date(ms).toISOString();
}
