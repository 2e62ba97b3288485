import { z } from 'zod';
import { MINUTE, TtlCache } from './cache.js';
import { getJson, joinUrl, SourceError } from './http.js';
import { isRecord, personName, repositoryUrlOf, str } from './links.js';
import type { NpmRegistryUrl } from './npm-registry-url.js';
import { emptyPackage, type MarketSource, type SourceOptions, type SourcePackage } from './types.js';

/** npm's rule for package names (old packages may still carry capitals). */
const NPM_NAME = /^(?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9~][a-z0-9._~-]*$/i;
export const isNpmName = (name: string) => name.length <= 214 && NPM_NAME.test(name);

/**
 * npm's search ranks by relevance over all of npm; adding the term `mcp` (unless the user typed
 * it) keeps "github" from answering with GitHub SDKs instead of MCP servers for GitHub. See
 * docs/decisions/0006-market-sources.md.
 */
export const npmSearchText = (query: string) => (/\bmcp\b/i.test(query) ? query : `${query} mcp`);

/** `@scope/name` travels as `@scope%2Fname`, as the npm client sends it. */
const encodeName = (name: string) => (name.startsWith('@') ? `@${encodeURIComponent(name.slice(1))}` : encodeURIComponent(name));

// Upstream shapes, loose on purpose: mirrors omit fields the public registry sends.
const SearchObject = z.object({
  package: z.object({
    name: z.string(),
    version: z.string().catch(''),
    description: z.string().nullish(),
    date: z.string().nullish(),
    links: z.record(z.string(), z.string()).nullish(),
    author: z.unknown().optional(),
    publisher: z.unknown().optional(),
    maintainers: z.array(z.unknown()).nullish(),
  }),
  downloads: z.object({ weekly: z.number().int().min(0).optional() }).nullish(),
});
const SearchAnswer = z.object({ objects: z.array(z.unknown()) });

export interface NpmSourceOptions extends SourceOptions {
  registryUrl: NpmRegistryUrl;
  downloadsUrl: string;
}

/** The npm registry (or a mirror): search, package documents, and weekly downloads from npm's downloads API. */
export class NpmSource implements MarketSource {
  readonly name = 'npm' as const;
  private readonly searches: TtlCache<SourcePackage[]>;
  private readonly documents: TtlCache<SourcePackage | null>;
  private readonly downloads: TtlCache<number | null>;

  constructor(private readonly opts: NpmSourceOptions) {
    const ttl = opts.ttlMs ?? 5 * MINUTE;
    this.searches = new TtlCache(ttl, 200);
    this.documents = new TtlCache(ttl, 200);
    this.downloads = new TtlCache(ttl, 2000);
  }

  async search(query: string, limit: number): Promise<SourcePackage[]> {
    const text = npmSearchText(query);
    try {
      return await this.searches.getOrLoad(`${text}\n${limit}`, async () => {
        const registry = await this.opts.registryUrl.get();
        const url = `${joinUrl(registry, '-/v1/search')}?${new URLSearchParams({ text, size: String(limit) })}`;
        const raw = await getJson(url, this.http());
        // A registry (or mirror) without the search endpoint answers 404: that is a failed search, not "no match".
        if (raw === null) throw new SourceError('the registry has no search (HTTP 404)', 404);
        const answer = SearchAnswer.safeParse(raw);
        if (!answer.success) throw new SourceError('the search answer has no objects');
        return answer.data.objects.flatMap((o) => {
          const parsed = SearchObject.safeParse(o);
          return parsed.success ? [fromSearchObject(parsed.data)] : [];
        });
      });
    } catch (err) {
      this.opts.logger.warn({ source: 'npm', query, err: String(err) }, 'marketplace search failed');
      throw err;
    }
  }

  details(name: string): Promise<SourcePackage | null> {
    if (!isNpmName(name)) return Promise.resolve(null);
    return this.documents.getOrLoad(name, async () => {
      const registry = await this.opts.registryUrl.get();
      const doc = await getJson(joinUrl(registry, encodeName(name)), this.http());
      if (doc === null) return null;
      if (!isRecord(doc) || typeof doc.name !== 'string') throw new SourceError('the package document has no name');
      return fromPackument(doc);
    });
  }

  /** Last week's downloads from npm's downloads API; null when unknown or the API fails (not 0: nobody said 0). */
  async weeklyDownloads(name: string): Promise<number | null> {
    if (!isNpmName(name)) return null;
    try {
      return await this.downloads.getOrLoad(name, async () => {
        const answer = await getJson(joinUrl(this.opts.downloadsUrl, `downloads/point/last-week/${name}`), this.http());
        return isRecord(answer) && typeof answer.downloads === 'number' ? answer.downloads : null;
      });
    } catch (err) {
      this.opts.logger.warn({ source: 'npm-downloads', name, err: String(err) }, 'marketplace downloads lookup failed');
      return null;
    }
  }

  private http() {
    return { timeoutMs: this.opts.timeoutMs };
  }
}

function fromSearchObject(o: z.infer<typeof SearchObject>): SourcePackage {
  const p = o.package;
  const links = p.links ?? {};
  const firstMaintainer = p.maintainers?.[0] ?? p.publisher;
  return {
    ...emptyPackage('npm', p.name),
    version: p.version,
    description: p.description ?? '',
    author: personName(p.author) || personName(firstMaintainer),
    homepage: links.homepage ?? '',
    repositoryUrl: repositoryUrlOf(links.repository),
    linkHints: [links.bugs ?? ''],
    lastPublish: p.date ?? '',
    weeklyDownloads: o.downloads?.weekly ?? null,
    npmPackage: p.name,
    launch: npmLaunch(p.name, p.version),
  };
}

/** A full package document ("packument"); mirrors may keep fields only on the version object. */
function fromPackument(doc: Record<string, unknown>): SourcePackage {
  const name = String(doc.name);
  const tags = isRecord(doc['dist-tags']) ? doc['dist-tags'] : {};
  const version = str(tags.latest);
  const versions = isRecord(doc.versions) ? doc.versions : {};
  const latest = isRecord(versions[version]) ? versions[version] : {};
  const pick = (field: string) => doc[field] ?? latest[field];
  const maintainers = Array.isArray(doc.maintainers) ? doc.maintainers : [];
  const time = isRecord(doc.time) ? doc.time : {};
  const bugs = pick('bugs');
  return {
    ...emptyPackage('npm', name),
    version,
    description: str(pick('description')),
    author: personName(pick('author')) || personName(maintainers[0]),
    homepage: str(pick('homepage')),
    repositoryUrl: repositoryUrlOf(pick('repository')),
    linkHints: [isRecord(bugs) ? str(bugs.url) : str(bugs)],
    lastPublish: str(time[version]) || str(time.modified),
    npmPackage: name,
    launch: npmLaunch(name, version),
    readme: str(doc.readme) || str(latest.readme),
    mcpName: str(latest.mcpName),
  };
}

export const npmLaunch = (name: string, version: string): SourcePackage['launch'] => ({
  kind: 'package',
  registryType: 'npm',
  identifier: name,
  version,
  runtimeHint: 'npx',
  runtimeArguments: [],
  packageArguments: [],
  env: [],
});
