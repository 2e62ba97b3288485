import { MINUTE, TtlCache } from './cache.js';
import { getJson, joinUrl, SourceError } from './http.js';
import { githubRepoOf, repositoryUrlOf } from './links.js';
import {
  type Argument,
  type KeyValueInput,
  type RegistryPackage,
  type RegistryRemote,
  type ServerDetail,
  ServerList,
  ServerResponse,
} from './mcp-registry-schema.js';
import { type DeclaredEnvVar, emptyPackage, type LaunchPlan, type MarketSource, type SourceOptions, type SourcePackage } from './types.js';

/** Reverse-DNS namespace, one slash, server name (ServerDetail.name in the registry's schema). */
const REGISTRY_NAME = /^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/;
export const isRegistryName = (name: string) => name.length <= 200 && REGISTRY_NAME.test(name);

/** Entries fetched per search: PyPI search keeps only the PyPI ones, so ask for more than a page. */
const SEARCH_FETCH = 50;
const OFFICIAL = 'io.modelcontextprotocol.registry/official';

export interface McpRegistrySourceOptions extends SourceOptions {
  baseUrl: string;
}

/** The official MCP Registry (or a subregistry speaking its v0.1 API). */
export class McpRegistrySource implements MarketSource {
  readonly name = 'mcp_registry' as const;
  private readonly lists: TtlCache<ServerResponse[]>;
  private readonly entries: TtlCache<ServerResponse | null>;
  private readonly versionLists: TtlCache<string[] | null>;

  constructor(private readonly opts: McpRegistrySourceOptions) {
    const ttl = opts.ttlMs ?? 5 * MINUTE;
    this.lists = new TtlCache(ttl, 200);
    this.entries = new TtlCache(ttl, 500);
    this.versionLists = new TtlCache(ttl, 200);
  }

  /** The latest version of every server whose name contains `query`; throws SourceError. */
  searchEntries(query: string): Promise<ServerResponse[]> {
    return this.lists.getOrLoad(query.toLowerCase(), async () => {
      const params = new URLSearchParams({ search: query, limit: String(SEARCH_FETCH), version: 'latest' });
      const list = ServerList.safeParse(await getJson(`${joinUrl(this.opts.baseUrl, 'v0.1/servers')}?${params}`, this.http()));
      if (!list.success) throw new SourceError('the server list has no servers');
      return latestPerName(list.data.servers);
    });
  }

  async search(query: string, limit: number): Promise<SourcePackage[]> {
    try {
      return (await this.searchEntries(query)).slice(0, limit).map(fromEntry);
    } catch (err) {
      this.opts.logger.warn({ source: 'mcp_registry', query, err: String(err) }, 'marketplace search failed');
      throw err;
    }
  }

  async details(name: string): Promise<SourcePackage | null> {
    const entry = await this.entry(name);
    return entry ? fromEntry(entry) : null;
  }

  /** The latest version of one server, as the registry sends it (the installer reads its packages and remotes). */
  entry(name: string): Promise<ServerResponse | null> {
    if (!isRegistryName(name)) return Promise.resolve(null);
    return this.entries.getOrLoad(name, async () => {
      const answer = await getJson(joinUrl(this.opts.baseUrl, `v0.1/servers/${encodeURIComponent(name)}/versions/latest`), this.http());
      if (answer === null) return null;
      const parsed = ServerResponse.safeParse(answer);
      if (!parsed.success) throw new SourceError('the server entry has no server');
      return parsed.data;
    });
  }

  /** Every published version of a server, newest first as the registry orders them; null when unknown. */
  versions(name: string): Promise<string[] | null> {
    if (!isRegistryName(name)) return Promise.resolve(null);
    return this.versionLists.getOrLoad(name, async () => {
      const answer = await getJson(joinUrl(this.opts.baseUrl, `v0.1/servers/${encodeURIComponent(name)}/versions`), this.http());
      if (answer === null) return null;
      const list = ServerList.safeParse(answer);
      if (!list.success) throw new SourceError('the version list has no servers');
      return list.data.servers.flatMap((s) => {
        const parsed = ServerResponse.safeParse(s);
        return parsed.success ? [parsed.data.server.version] : [];
      });
    });
  }

  /**
   * The variables the registry declares for a package published on npm or PyPI: through the
   * entry the package names (npm's `mcpName`), else among entries found by the package's name.
   * [] when the registry lists no such package or cannot be reached.
   */
  async declaredEnvFor(registryType: 'npm' | 'pypi', identifier: string, mcpName = ''): Promise<DeclaredEnvVar[]> {
    const same = (p: RegistryPackage) => p.registryType === registryType && samePackage(registryType, p.identifier, identifier);
    try {
      const named = mcpName ? await this.entry(mcpName) : null;
      const candidates = named ? [named] : await this.searchEntries(registrySearchTerm(identifier));
      for (const entry of candidates) {
        const pkg = entry.server.packages.find(same);
        if (pkg) return (pkg.environmentVariables ?? []).map(toDeclared);
      }
      return [];
    } catch (err) {
      this.opts.logger.warn({ source: 'mcp_registry', identifier, err: String(err) }, 'marketplace variable lookup failed');
      return [];
    }
  }

  private http() {
    return { timeoutMs: this.opts.timeoutMs };
  }
}

/** Registries that ignore `version=latest` send every version: keep the one marked latest, else the first. */
function latestPerName(servers: unknown[]): ServerResponse[] {
  const byName = new Map<string, ServerResponse>();
  for (const raw of servers) {
    const parsed = ServerResponse.safeParse(raw);
    if (!parsed.success) continue;
    const name = parsed.data.server.name;
    if (!byName.has(name) || parsed.data._meta?.[OFFICIAL]?.isLatest) byName.set(name, parsed.data);
  }
  return [...byName.values()];
}

/**
 * The registry's search is a substring match on server names (`io.github.acme/weather`), which
 * rarely contain a package's full name (`acme-weather-mcp`): search by its last distinctive word
 * instead and let the exact identifier match decide.
 */
export function registrySearchTerm(identifier: string): string {
  const bare = identifier.split('/').pop() ?? identifier;
  const words = bare
    .toLowerCase()
    .split(/[-_.]+/)
    .filter((w) => w && w !== 'mcp' && w !== 'server');
  return words.at(-1) ?? bare;
}

const pypiNormal = (name: string) => name.toLowerCase().replace(/[-_.]+/g, '-');
const samePackage = (type: string, a: string, b: string) => (type === 'pypi' ? pypiNormal(a) === pypiNormal(b) : a === b);

/** An MCP Registry entry as a marketplace package; also used for its PyPI packages by the PyPI source. */
export function fromEntry(entry: ServerResponse): SourcePackage {
  const s = entry.server;
  const meta = entry._meta?.[OFFICIAL];
  const launch = chooseLaunch(s);
  const repositoryUrl = repositoryUrlOf(s.repository?.url);
  const owner = githubRepoOf(repositoryUrl)?.owner ?? githubRepoOf(s.websiteUrl)?.owner;
  return {
    ...emptyPackage('mcp_registry', s.name),
    version: s.version,
    description: s.description,
    author: owner ?? s.name.split('/')[0] ?? '',
    homepage: s.websiteUrl ?? repositoryUrl,
    repositoryUrl,
    lastPublish: meta?.updatedAt ?? meta?.publishedAt ?? '',
    npmPackage: launch?.kind === 'package' && launch.registryType === 'npm' ? launch.identifier : '',
    declaredEnv: launch ? (launch.kind === 'package' ? launch.env : [...launch.variables, ...launch.headers]) : [],
    launch,
  };
}

/** The gateway installs npm and PyPI packages and connects to remotes; other package types come last. */
const PACKAGE_PREFERENCE = ['npm', 'pypi'];

export function chooseLaunch(s: ServerDetail): LaunchPlan | null {
  const installable = PACKAGE_PREFERENCE.map((t) => s.packages.find((p) => p.registryType === t)).find(Boolean);
  if (installable) return packageLaunch(installable, s.version);
  const remote = s.remotes.find((r) => r.type === 'streamable-http') ?? s.remotes.find((r) => r.type === 'sse');
  if (remote) return remoteLaunch(remote);
  const other = s.packages[0];
  return other ? packageLaunch(other, s.version) : null;
}

function packageLaunch(p: RegistryPackage, serverVersion: string): LaunchPlan {
  return {
    kind: 'package',
    registryType: p.registryType,
    identifier: p.identifier,
    version: p.version ?? serverVersion,
    runtimeHint: p.runtimeHint ?? '',
    runtimeArguments: argumentTokens(p.runtimeArguments),
    packageArguments: argumentTokens(p.packageArguments),
    env: (p.environmentVariables ?? []).map(toDeclared),
  };
}

function remoteLaunch(r: RegistryRemote): LaunchPlan {
  return {
    kind: 'remote',
    transport: r.type === 'sse' ? 'sse' : 'streamableHttp',
    url: r.url,
    headers: (r.headers ?? []).map(toDeclared),
    variables: urlVariables(r),
  };
}

/** `{name}` placeholders of a URL template, in order, each once. */
export const urlTemplateNames = (url: string): string[] => [...new Set([...url.matchAll(/\{([^{}/?#]+)\}/g)].map((m) => m[1] as string))];

/**
 * The variables of a remote's URL template (`https://{tenant}.example.com/mcp`), as the registry declares them
 * in `variables`; a placeholder it does not declare is asked for all the same. The URL cannot be built without
 * a value, so a variable without a default is required whatever `isRequired` says. `choices` are named in the
 * description.
 */
function urlVariables(r: RegistryRemote): DeclaredEnvVar[] {
  return urlTemplateNames(r.url).map((name) => {
    const v = r.variables?.[name] ?? {};
    const base = toDeclared({ ...v, name });
    const choices = v.choices?.length ? `(${v.choices.join(', ')})` : '';
    const description = [base.description, choices].filter(Boolean).join(' ');
    return { ...base, description, isRequired: base.isRequired || !base.defaultValue };
  });
}

/** Arguments with a value (or default) become command-line tokens; ones waiting for user input are left out. */
function argumentTokens(args: Argument[] = []): string[] {
  return args.flatMap((a) => {
    const value = a.value ?? a.default;
    if (value === undefined) return [];
    return a.type === 'named' && a.name ? [a.name, value] : [value];
  });
}

/**
 * A value with `{placeholders}` (e.g. "Bearer {api_key}") is a template the user completes, not a
 * default: it goes into the description and the default stays empty, so the install asks for it.
 */
function toDeclared(v: KeyValueInput): DeclaredEnvVar {
  const value = v.default ?? v.value ?? '';
  const template = /\{[A-Za-z_][A-Za-z0-9_]*\}/.test(value);
  const description = v.description ?? '';
  return {
    name: v.name,
    description: template ? `${description}${description ? ' ' : ''}(${value})` : description,
    isRequired: v.isRequired === true,
    isSecret: v.isSecret === true,
    defaultValue: template ? '' : value,
  };
}
