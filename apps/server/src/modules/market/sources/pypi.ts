import { z } from 'zod';
import { MINUTE, TtlCache } from './cache.js';
import { getJson, joinUrl, SourceError } from './http.js';
import { firstGithubUrl, personName } from './links.js';
import { fromEntry, type McpRegistrySource } from './mcp-registry.js';
import { emptyPackage, type MarketSource, type PartialFailure, type SourceOptions, type SourcePackage } from './types.js';

/** PEP 508 project names. */
const PYPI_NAME = /^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$/;
export const isPypiName = (name: string) => name.length <= 214 && PYPI_NAME.test(name);
/** PEP 503 normalisation: how PyPI compares names. */
export const normalizePypiName = (name: string) => name.toLowerCase().replace(/[-_.]+/g, '-');

// The PyPI JSON API (docs.pypi.org/api/json): only the fields read here.
const Project = z.object({
  info: z.object({
    name: z.string(),
    version: z.string().catch(''),
    summary: z.string().nullish(),
    description: z.string().nullish(),
    author: z.string().nullish(),
    author_email: z.string().nullish(),
    maintainer: z.string().nullish(),
    home_page: z.string().nullish(),
    project_urls: z.record(z.string(), z.string()).nullish(),
  }),
  urls: z.array(z.object({ upload_time_iso_8601: z.string().nullish() }).loose()).catch([]),
});
type Project = z.infer<typeof Project>;

export interface PypiSourceOptions extends SourceOptions {
  jsonUrl: string;
  registry: McpRegistrySource;
}

/**
 * PyPI has no search API: searching means the MCP Registry's entries that publish a PyPI package,
 * plus the project whose name is exactly the query. Details come from the JSON API.
 */
export class PypiSource implements MarketSource {
  readonly name = 'pypi' as const;
  private readonly projects: TtlCache<SourcePackage | null>;

  constructor(private readonly opts: PypiSourceOptions) {
    this.projects = new TtlCache(opts.ttlMs ?? 5 * MINUTE, 500);
  }

  /** Throws SourceError only when both ways failed: one that answered is a search that worked, if partly. */
  async search(query: string, limit: number, partial?: (failure: PartialFailure) => void): Promise<SourcePackage[]> {
    const [exactResult, listedResult] = await Promise.allSettled([this.exactMatch(query), this.fromRegistry(query)]);
    if (exactResult.status === 'rejected' && listedResult.status === 'rejected') {
      throw new SourceError(`${errorText(exactResult.reason)}; via the MCP Registry: ${errorText(listedResult.reason)}`);
    }
    // One half failed: the other's results, and a warning that they may be incomplete (issue 15, item 3).
    if (listedResult.status === 'rejected')
      partial?.({ part: 'MCP Registry', reason: errorText(listedResult.reason), setting: 'MCP_REGISTRY_URL' });
    if (exactResult.status === 'rejected')
      partial?.({ part: 'PyPI JSON API', reason: errorText(exactResult.reason), setting: 'PYPI_JSON_URL' });
    const exact = exactResult.status === 'fulfilled' ? exactResult.value : null;
    const listed = listedResult.status === 'fulfilled' ? listedResult.value : [];
    const seen = new Set<string>();
    return [...(exact ? [exact] : []), ...listed]
      .filter((p) => {
        const key = normalizePypiName(p.name);
        if (seen.has(key)) return false;
        seen.add(key);
        return true;
      })
      .slice(0, limit);
  }

  details(name: string): Promise<SourcePackage | null> {
    if (!isPypiName(name)) return Promise.resolve(null);
    return this.projects.getOrLoad(normalizePypiName(name), async () => {
      const answer = await getJson(joinUrl(this.opts.jsonUrl, `${encodeURIComponent(name)}/json`), { timeoutMs: this.opts.timeoutMs });
      if (answer === null) return null;
      const project = Project.safeParse(answer);
      if (!project.success) throw new SourceError('the project document has no info');
      return fromProject(project.data);
    });
  }

  private async exactMatch(query: string): Promise<SourcePackage | null> {
    if (!isPypiName(query)) return null;
    try {
      const found = await this.details(query);
      return found && { ...found, readme: '' };
    } catch (err) {
      this.opts.logger.warn({ source: 'pypi', query, err: String(err) }, 'marketplace search failed');
      throw err;
    }
  }

  private async fromRegistry(query: string): Promise<SourcePackage[]> {
    try {
      const entries = await this.opts.registry.searchEntries(query);
      return entries.flatMap((entry) =>
        entry.server.packages
          .filter((p) => p.registryType === 'pypi')
          .map((p) => {
            const listed = fromEntry({ ...entry, server: { ...entry.server, packages: [p], remotes: [] } });
            return { ...listed, source: 'pypi' as const, name: p.identifier, version: p.version ?? listed.version, npmPackage: '' };
          }),
      );
    } catch (err) {
      this.opts.logger.warn({ source: 'pypi', via: 'mcp_registry', query, err: String(err) }, 'marketplace search failed');
      throw err;
    }
  }
}

/** Project URLs use free-form labels; these are the common ones for a homepage and for the code. */
const HOMEPAGE_LABELS = ['homepage', 'home', 'home page', 'documentation'];
const SOURCE_LABELS = ['repository', 'source', 'source code', 'code', 'github'];

function fromProject(p: Project): SourcePackage {
  const urls = Object.entries(p.info.project_urls ?? {});
  const labelled = (labels: string[]) => urls.find(([label]) => labels.includes(label.toLowerCase()))?.[1] ?? '';
  const repositoryUrl = labelled(SOURCE_LABELS) || firstGithubUrl(urls.map(([, url]) => url));
  const emailName = (p.info.author_email ?? '').split(',')[0] ?? '';
  return {
    ...emptyPackage('pypi', p.info.name),
    version: p.info.version,
    description: p.info.summary ?? '',
    author: p.info.author || p.info.maintainer || personName(emailName),
    homepage: p.info.home_page || labelled(HOMEPAGE_LABELS) || repositoryUrl,
    repositoryUrl,
    lastPublish: p.urls.map((u) => u.upload_time_iso_8601 ?? '').find(Boolean) ?? '',
    launch: {
      kind: 'package',
      registryType: 'pypi',
      identifier: p.info.name,
      version: p.info.version,
      runtimeHint: 'uvx',
      runtimeArguments: [],
      packageArguments: [],
      env: [],
    },
    readme: p.info.description ?? '',
  };
}

const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err));
