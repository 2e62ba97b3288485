import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

/**
 * One loopback HTTP server that speaks the wire formats of every registry the marketplace reads:
 * the npm registry (search, packuments, the downloads point API), PyPI (JSON API and a PEP 503
 * simple index), the MCP Registry v0.1 and GitHub's repos API. Answers come from the JSON files in
 * fixtures/registries (see the README there for where each shape comes from). Each registry lives
 * under its own path prefix, so one registry can be made to fail while the others answer. The
 * packages under fixtures/registries/npm/tarballs are real: the fake packs each into a tarball at
 * start and serves it the way the registry does, so `npm install` works against it offline.
 *
 * Dependency-free and independent of the server code, so the Playwright suites can start it too.
 */

export type FakeRegistry = 'npm' | 'downloads' | 'pypi' | 'mcp' | 'github';
/** error: HTTP 500 · hang: never answers · bad-json: 200 with a body that is not JSON · rate-limit: GitHub's 403 */
/** `not-found`: every path answers 404, as a mirror without the search endpoint does. */
export type Fault = 'error' | 'hang' | 'bad-json' | 'rate-limit' | 'not-found';

export interface RecordedRequest {
  registry: FakeRegistry;
  method: string;
  /** Path below the registry's prefix, still URL-encoded as sent. */
  path: string;
  query: Record<string, string>;
  authorization: string | undefined;
}

export interface FakeRegistriesOptions {
  /** Files (wheels, sdists) the PEP 503 simple index serves; read on every request. */
  pypiFilesDir?: string;
  /** MCP Registry entries served besides the fixture files' (a test's own, e.g. a remote at a given address). */
  extraMcpServers?: Fixtures['mcpServers'];
  /** Installable npm packages served besides those of npm/tarballs (`echoPackage`: the echo server under a name). */
  extraNpmPackages?: NpmPackage[];
}

/** An installable npm package: its package.json, and its other files (the name in the package → the file to read). */
export interface NpmPackage {
  manifest: Record<string, unknown> & { name: string; version: string; description?: string; keywords?: string[] };
  files: Record<string, string>;
}

/**
 * `acme-echo-mcp`'s server as another package: its one file (`server.mjs` of npm/tarballs/acme-echo-mcp, the
 * same source) under the name, version, command and description given, without the readme (whose mcpServers
 * block asks for `ACME_ECHO_TOKEN`). For a scoped name, a version that is not the name's, a long name.
 */
export function echoPackage(name: string, version: string, details: { bin: string; description: string }): NpmPackage {
  // The one echo server the fake serves, its package (npm/tarballs/acme-echo-mcp).
  const echoDir = path.join(FIXTURES, 'npm/tarballs/acme-echo-mcp');
  const {
    name: _name,
    version: _version,
    repository: _repository,
    ...echo
  } = JSON.parse(readFileSync(path.join(echoDir, 'package.json'), 'utf8')) as Record<string, unknown>;
  return {
    manifest: {
      name,
      version,
      ...echo,
      description: details.description,
      keywords: ['mcp'],
      bin: { [details.bin]: 'server.mjs' },
      files: ['server.mjs'],
    },
    files: { 'server.mjs': path.join(echoDir, 'server.mjs') },
  };
}

/** A package directory of npm/tarballs: its package.json, and every other file in it. */
function packageIn(dir: string): NpmPackage {
  const files: Record<string, string> = {};
  for (const file of readdirSync(dir)) {
    if (file !== 'package.json' && statSync(path.join(dir, file)).isFile()) files[file] = path.join(dir, file);
  }
  return { manifest: JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as NpmPackage['manifest'], files };
}

export interface FakeRegistries {
  urls: { npm: string; npmDownloads: string; pypiJson: string; pypiIndex: string; mcpRegistry: string; githubApi: string };
  /** The environment that points a Toolport server at this fake. */
  env: Record<string, string>;
  requests: RecordedRequest[];
  /** How many requests reached `registry`, optionally only those whose path starts with `pathPrefix`. */
  count(registry: FakeRegistry, pathPrefix?: string): number;
  /** Makes every request to `registry` fail the given way until cleared with null. */
  fail(registry: FakeRegistry, fault: Fault | null): void;
  /** Clears faults and the request log. */
  reset(): void;
  close(): Promise<void>;
}

const FIXTURES = fileURLToPath(new URL('./fixtures/registries/', import.meta.url));
const PREFIXES: [string, FakeRegistry][] = [
  ['/npm-downloads', 'downloads'],
  ['/npm', 'npm'],
  ['/pypi', 'pypi'],
  ['/mcp-registry', 'mcp'],
  ['/github', 'github'],
];

const readJson = (file: string): unknown => JSON.parse(readFileSync(path.join(FIXTURES, file), 'utf8'));
const jsonFiles = (dir: string) => readdirSync(path.join(FIXTURES, dir)).filter((f) => f.endsWith('.json'));
/** PEP 503 name normalisation. */
export const normalizePypiName = (name: string) => name.toLowerCase().replace(/[-_.]+/g, '-');

interface Fixtures {
  npmSearch: { objects: { package: { name: string; description?: string; keywords?: string[] } }[] };
  packuments: Map<string, Record<string, unknown>>;
  downloads: Record<string, number>;
  pypi: Map<string, unknown>;
  mcpServers: { server: { name: string; version: string }; _meta?: Record<string, { isLatest?: boolean }> }[];
  githubRepos: Record<string, unknown>;
  /** Tarballs of the installable packages, by the path the npm registry serves them at. */
  tarballs: Map<string, Buffer>;
}

function loadFixtures(): Fixtures {
  const packuments = new Map<string, Record<string, unknown>>();
  for (const file of jsonFiles('npm/packuments')) {
    const doc = readJson(`npm/packuments/${file}`) as Record<string, unknown>;
    const name = String(doc.name);
    // The registry stores the latest version's readme in the document; fixtures keep it as a real file.
    const readme = path.join(FIXTURES, 'readmes', `${name.split('/').pop()}.md`);
    if (doc.readme === undefined && existsSync(readme)) doc.readme = readFileSync(readme, 'utf8');
    packuments.set(name, doc);
  }
  const pypi = new Map<string, unknown>();
  for (const file of jsonFiles('pypi')) {
    const doc = readJson(`pypi/${file}`) as { info: { name: string } };
    pypi.set(normalizePypiName(doc.info.name), doc);
  }
  const githubRepos: Record<string, unknown> = {};
  for (const [key, repo] of Object.entries(readJson('github/repos.json') as Record<string, unknown>)) githubRepos[key.toLowerCase()] = repo;
  return {
    npmSearch: readJson('npm/search.json') as Fixtures['npmSearch'],
    packuments,
    downloads: readJson('npm/downloads.json') as Record<string, number>,
    pypi,
    mcpServers: (readJson('mcp-registry/servers.json') as { servers: Fixtures['mcpServers'] }).servers,
    githubRepos,
    tarballs: new Map(),
  };
}

/** One ustar header block (POSIX tar, as npm pack writes it) for a regular file. */
function tarHeader(name: string, size: number, mode: number): Buffer {
  const header = Buffer.alloc(512);
  const put = (value: string, offset: number, length: number) => header.write(value, offset, length, 'utf8');
  const octal = (value: number, length: number) => `${value.toString(8).padStart(length - 1, '0')}\0`;
  put(name, 0, 100);
  put(octal(mode, 8), 100, 8);
  put(octal(0, 8), 108, 8);
  put(octal(0, 8), 116, 8);
  put(octal(size, 12), 124, 12);
  // npm pack stamps every file with this date, which keeps tarballs and their checksums reproducible.
  put(octal(Date.UTC(1985, 9, 26, 8, 15) / 1000, 12), 136, 12);
  put('        ', 148, 8);
  put('0', 156, 1);
  put('ustar\0', 257, 6);
  put('00', 263, 2);
  let sum = 0;
  for (const byte of header) sum += byte;
  put(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8);
  return header;
}

/** A package as npm pack makes it: its package.json and every other file under `package/`, tarred and gzipped. */
export function packTarball(pkg: NpmPackage): Buffer {
  const blocks: Buffer[] = [];
  const contents: Record<string, Buffer> = { 'package.json': Buffer.from(`${JSON.stringify(pkg.manifest, null, 2)}\n`) };
  for (const [file, source] of Object.entries(pkg.files)) contents[file] = readFileSync(source);
  for (const file of Object.keys(contents).sort()) {
    const data = contents[file] as Buffer;
    const executable = file.endsWith('.mjs') || file.endsWith('.js');
    blocks.push(tarHeader(`package/${file}`, data.length, executable ? 0o755 : 0o644), data);
    const padding = (512 - (data.length % 512)) % 512;
    if (padding) blocks.push(Buffer.alloc(padding));
  }
  blocks.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(blocks), { level: 9 });
}

/**
 * Packs each package of npm/tarballs and registers it as the registry would list it: a packument whose
 * `dist` names the tarball here with its `shasum` and `integrity`, and a search result.
 */
function addInstallablePackages(f: Fixtures, npmBase: string, extra: NpmPackage[]): void {
  const root = path.join(FIXTURES, 'npm/tarballs');
  const dirs = existsSync(root)
    ? readdirSync(root)
        .sort()
        .map((dirName) => path.join(root, dirName))
        .filter((dir) => statSync(dir).isDirectory())
    : [];
  for (const pkg of [...dirs.map(packageIn), ...extra]) {
    const { manifest } = pkg;
    const tarball = packTarball(pkg);
    const file = `${manifest.name.split('/').pop()}-${manifest.version}.tgz`;
    const tarPath = `/${manifest.name}/-/${file}`;
    f.tarballs.set(tarPath, tarball);
    const readmeFile = pkg.files['README.md'];
    const published = '2026-10-01T09:00:00.000Z';
    const maintainer = { name: 'acme-tools', email: 'tools@example.com' };
    f.packuments.set(manifest.name, {
      _id: manifest.name,
      _rev: '1-0123456789abcdef0123456789abcdef',
      name: manifest.name,
      description: manifest.description,
      'dist-tags': { latest: manifest.version },
      versions: {
        [manifest.version]: {
          ...manifest,
          _id: `${manifest.name}@${manifest.version}`,
          dist: {
            shasum: createHash('sha1').update(tarball).digest('hex'),
            integrity: `sha512-${createHash('sha512').update(tarball).digest('base64')}`,
            tarball: `${npmBase}${manifest.name}/-/${file}`,
          },
        },
      },
      time: { created: published, modified: published, [manifest.version]: published },
      maintainers: [maintainer],
      author: manifest.author,
      keywords: manifest.keywords,
      homepage: manifest.homepage,
      repository: manifest.repository,
      readme: readmeFile ? readFileSync(readmeFile, 'utf8') : '',
      readmeFilename: 'README.md',
    });
    const repository = (manifest.repository as { url?: string } | undefined)?.url ?? '';
    f.npmSearch.objects.push({
      package: {
        name: manifest.name,
        keywords: manifest.keywords ?? [],
        version: manifest.version,
        description: manifest.description,
        publisher: { email: maintainer.email, username: maintainer.name },
        maintainers: [{ email: maintainer.email, username: maintainer.name }],
        date: published,
        author: manifest.author,
        links: {
          homepage: String(manifest.homepage ?? ''),
          repository,
          npm: `https://www.npmjs.com/package/${manifest.name}`,
        },
      },
    } as Fixtures['npmSearch']['objects'][number]);
  }
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  const type = typeof body === 'string' ? 'text/html; charset=utf-8' : 'application/json';
  res.writeHead(status, { 'content-type': type, ...headers });
  res.end(text);
}

export async function startFakeRegistries(options: FakeRegistriesOptions = {}): Promise<FakeRegistries> {
  const fixtures = loadFixtures();
  fixtures.mcpServers.push(...(options.extraMcpServers ?? []));
  const faults = new Map<FakeRegistry, Fault>();
  const requests: RecordedRequest[] = [];

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const match = PREFIXES.find(([prefix]) => url.pathname === prefix || url.pathname.startsWith(`${prefix}/`));
    if (!match) return send(res, 404, { error: 'no such registry' });
    const [prefix, registry] = match;
    const rawPath = (req.url ?? '/').split('?')[0]?.slice(prefix.length) || '/';
    requests.push({
      registry,
      method: req.method ?? 'GET',
      path: rawPath,
      query: Object.fromEntries(url.searchParams),
      authorization: req.headers.authorization,
    });
    const fault = faults.get(registry);
    if (fault === 'hang') return;
    if (fault === 'error') return send(res, 500, { error: 'Internal Server Error' });
    if (fault === 'not-found') return send(res, 404, { error: 'Not Found' });
    if (fault === 'bad-json') return send(res, 200, '{"objects": [', { 'content-type': 'application/json' });
    if (fault === 'rate-limit') {
      return send(
        res,
        403,
        {
          message: 'API rate limit exceeded',
          documentation_url: 'https://docs.github.com/rest/overview/resources-in-the-rest-api#rate-limiting',
        },
        { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + 3600) },
      );
    }
    const routes = { npm: npmRoute, downloads: downloadsRoute, pypi: pypiRoute, mcp: mcpRoute, github: githubRoute };
    routes[registry](fixtures, rawPath, url, req, res, options);
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  addInstallablePackages(fixtures, `${base}/npm/`, options.extraNpmPackages ?? []);
  const urls = {
    npm: `${base}/npm/`,
    npmDownloads: `${base}/npm-downloads`,
    pypiJson: `${base}/pypi/pypi`,
    pypiIndex: `${base}/pypi/simple`,
    mcpRegistry: `${base}/mcp-registry`,
    githubApi: `${base}/github`,
  };
  return {
    urls,
    env: {
      NPM_REGISTRY_URL: urls.npm,
      NPM_DOWNLOADS_URL: urls.npmDownloads,
      PYPI_JSON_URL: urls.pypiJson,
      PYPI_INDEX_URL: urls.pypiIndex,
      MCP_REGISTRY_URL: urls.mcpRegistry,
      GITHUB_API_URL: urls.githubApi,
    },
    requests,
    count: (registry, pathPrefix = '') => requests.filter((r) => r.registry === registry && r.path.startsWith(pathPrefix)).length,
    fail: (registry, fault) => (fault ? faults.set(registry, fault) : faults.delete(registry)),
    reset: () => {
      faults.clear();
      requests.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

type Route = (f: Fixtures, rawPath: string, url: URL, req: IncomingMessage, res: ServerResponse, options: FakeRegistriesOptions) => void;

/** Search terms must all appear in the name, description or keywords; `qualifier:value` terms are ignored. */
const npmRoute: Route = (f, rawPath, url, _req, res) => {
  if (rawPath === '/-/v1/search') {
    const terms = (url.searchParams.get('text') ?? '')
      .toLowerCase()
      .split(/\s+/)
      .filter((t) => t && !t.includes(':'));
    const size = Number(url.searchParams.get('size') ?? 20);
    const hits = f.npmSearch.objects.filter(({ package: p }) => {
      const haystack = [p.name, p.description ?? '', ...(p.keywords ?? [])].join(' ').toLowerCase();
      return terms.every((t) => haystack.includes(t));
    });
    return send(res, 200, { objects: hits.slice(0, size), total: hits.length, time: new Date().toUTCString() });
  }
  // Scoped names arrive as @scope%2Fname (what npm sends) or @scope/name.
  const name = decodeURIComponent(rawPath.slice(1));
  const tarball = f.tarballs.get(decodeURIComponent(rawPath));
  if (tarball) {
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(tarball.length) });
    return void res.end(tarball);
  }
  const doc = f.packuments.get(name);
  return doc ? send(res, 200, doc) : send(res, 404, { error: 'Not found' });
};

const downloadsRoute: Route = (f, rawPath, _url, _req, res) => {
  const prefix = '/downloads/point/last-week/';
  if (!rawPath.startsWith(prefix)) return send(res, 404, { error: 'Invalid endpoint' });
  const name = decodeURIComponent(rawPath.slice(prefix.length));
  const downloads = f.downloads[name];
  if (downloads === undefined) return send(res, 404, { error: `package ${name} not found` });
  return send(res, 200, { downloads, start: '2026-11-13', end: '2026-11-19', package: name });
};

const pypiRoute: Route = (f, rawPath, _url, _req, res, options) => {
  const json = /^\/pypi\/([^/]+)\/json\/?$/.exec(rawPath);
  if (json?.[1]) {
    const doc = f.pypi.get(normalizePypiName(decodeURIComponent(json[1])));
    return doc ? send(res, 200, doc) : send(res, 404, { message: 'Not Found' });
  }
  const files = options.pypiFilesDir && existsSync(options.pypiFilesDir) ? readdirSync(options.pypiFilesDir) : [];
  if (rawPath === '/simple' || rawPath === '/simple/') {
    const projects = [...new Set(files.map(distributionOf).filter((n): n is string => !!n))];
    return send(
      res,
      200,
      simplePage(
        'Simple index',
        projects.map((p) => [`${p}/`, p]),
      ),
    );
  }
  const project = /^\/simple\/([^/]+)\/?$/.exec(rawPath)?.[1];
  if (project) {
    const wanted = normalizePypiName(decodeURIComponent(project));
    const mine = files.filter((file) => distributionOf(file) === wanted);
    if (mine.length === 0) return send(res, 404, 'Not Found');
    const dir = options.pypiFilesDir as string;
    const links = mine.map((file): [string, string] => [`../../files/${file}#sha256=${sha256Of(path.join(dir, file))}`, file]);
    return send(res, 200, simplePage(`Links for ${wanted}`, links));
  }
  const file = /^\/files\/([^/]+)$/.exec(rawPath)?.[1];
  if (file && options.pypiFilesDir && files.includes(decodeURIComponent(file))) {
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    return void res.end(readFileSync(path.join(options.pypiFilesDir, decodeURIComponent(file))));
  }
  return send(res, 404, 'Not Found');
};

/** The distribution name of a wheel (`name-ver-…whl`) or sdist (`name-ver.tar.gz`), normalised. */
function distributionOf(file: string): string | undefined {
  const wheel = /^([^-]+)-[^-]+(-[^-]+)?-[^-]+-[^-]+-[^-]+\.whl$/.exec(file);
  const sdist = /^(.+)-[^-]+\.(tar\.gz|zip)$/.exec(file);
  const name = wheel?.[1] ?? sdist?.[1];
  return name ? normalizePypiName(name) : undefined;
}

const sha256Of = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

function simplePage(title: string, links: [string, string][]): string {
  const body = links.map(([href, text]) => `    <a href="${href}">${text}</a><br/>`).join('\n');
  return `<!DOCTYPE html>\n<html>\n  <head><meta name="pypi:repository-version" content="1.0"><title>${title}</title></head>\n  <body>\n${body}\n  </body>\n</html>\n`;
}

const isLatest = (entry: Fixtures['mcpServers'][number]) => entry._meta?.['io.modelcontextprotocol.registry/official']?.isLatest === true;

/** Cursors are opaque to clients; here they are the offset of the next page. */
const mcpRoute: Route = (f, rawPath, url, _req, res) => {
  if (rawPath === '/v0.1/servers' || rawPath === '/v0.1/servers/') {
    const search = (url.searchParams.get('search') ?? '').toLowerCase();
    const version = url.searchParams.get('version');
    const limit = Math.min(Number(url.searchParams.get('limit') ?? 30) || 30, 100);
    const offset = Number(url.searchParams.get('cursor') ?? 0) || 0;
    const hits = f.mcpServers.filter(
      (e) =>
        e.server.name.toLowerCase().includes(search) && (!version || (version === 'latest' ? isLatest(e) : e.server.version === version)),
    );
    const page = hits.slice(offset, offset + limit);
    const next = offset + limit < hits.length ? { nextCursor: String(offset + limit) } : {};
    return send(res, 200, { servers: page, metadata: { count: page.length, ...next } });
  }
  // Server names contain a slash and arrive encoded as %2F, so split before decoding.
  const parts = rawPath.split('/').slice(3).map(decodeURIComponent);
  const [name, versionsWord, version] = parts;
  const versions = f.mcpServers.filter((e) => e.server.name === name);
  if (versionsWord !== 'versions' || versions.length === 0) return send(res, 404, { error: 'Server not found' });
  if (version === undefined) return send(res, 200, { servers: versions, metadata: { count: versions.length } });
  const hit = versions.find((e) => (version === 'latest' ? isLatest(e) : e.server.version === version));
  return hit ? send(res, 200, hit) : send(res, 404, { error: 'Server not found' });
};

const githubRoute: Route = (f, rawPath, _url, _req, res) => {
  const repo = /^\/repos\/([^/]+\/[^/]+)$/.exec(rawPath)?.[1];
  const doc = repo ? f.githubRepos[decodeURIComponent(repo).toLowerCase()] : undefined;
  if (!doc) {
    return send(res, 404, {
      message: 'Not Found',
      documentation_url: 'https://docs.github.com/rest/repos/repos#get-a-repository',
      status: '404',
    });
  }
  return send(res, 200, doc, { 'x-ratelimit-remaining': '59' });
};
