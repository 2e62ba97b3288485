import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeRegistries, startFakeRegistries } from '../../../../test/fake-registries.js';
import { recordingLogger } from '../../../../test/recording-logger.js';
import { SourceError } from './http.js';
import { NpmSource, npmSearchText } from './npm.js';
import { NpmRegistryUrl, PUBLIC_NPM_REGISTRY } from './npm-registry-url.js';

/** Generous, so a loaded machine cannot fail a test; only the hanging-registry cases use a short deadline. */
const TIMEOUT_MS = 10_000;
const HANG_TIMEOUT_MS = 300;

describe('npm source against the fake npm registry', () => {
  let fake: FakeRegistries;
  let logger: ReturnType<typeof recordingLogger>;
  let npm: NpmSource;

  beforeAll(async () => {
    fake = await startFakeRegistries();
  });
  afterAll(async () => fake?.close());
  const source = (timeoutMs = TIMEOUT_MS) =>
    new NpmSource({ timeoutMs, logger, registryUrl: new NpmRegistryUrl(fake.urls.npm), downloadsUrl: fake.urls.npmDownloads });
  beforeEach(() => {
    fake.reset();
    logger = recordingLogger();
    npm = source();
  });

  it('adds "mcp" to the query unless the user typed it', () => {
    expect(npmSearchText('github')).toBe('github mcp');
    expect(npmSearchText('GitHub MCP server')).toBe('GitHub MCP server');
  });

  it('searches with the real search API and maps each object', async () => {
    const results = await npm.search('github', 20);
    expect(fake.requests[0]).toMatchObject({ registry: 'npm', path: '/-/v1/search', query: { text: 'github mcp', size: '20' } });
    // "github-api-lite" matches "github" but not "mcp".
    expect(results.map((r) => r.name)).toEqual(['@modelcontextprotocol/server-github']);
    expect(results[0]).toMatchObject({
      source: 'npm',
      version: '2025.4.8',
      description: 'MCP server for using the GitHub API',
      author: 'Anthropic, PBC',
      homepage: 'https://modelcontextprotocol.io',
      repositoryUrl: 'https://github.com/modelcontextprotocol/servers',
      lastPublish: '2025-04-08T15:33:18.109Z',
      weeklyDownloads: 35120,
      npmPackage: '@modelcontextprotocol/server-github',
      readme: '',
    });
  });

  it('leaves downloads unknown when the search object has none, and falls back to a maintainer as author', async () => {
    const [weather] = await npm.search('weather', 20);
    expect(weather).toMatchObject({ name: 'acme-weather-mcp', weeklyDownloads: null, author: 'acme-bot' });
  });

  it('answers a repeated search from its cache', async () => {
    await npm.search('everything', 20);
    await npm.search('everything', 20);
    expect(fake.count('npm', '/-/v1/search')).toBe(1);
  });

  it('reads the package document of a scoped package: latest version, readme, times, links', async () => {
    const pkg = await npm.details('@modelcontextprotocol/server-github');
    expect(fake.requests.map((r) => r.path)).toEqual(['/@modelcontextprotocol%2Fserver-github']);
    expect(pkg).toMatchObject({
      name: '@modelcontextprotocol/server-github',
      version: '2025.4.8',
      author: 'Anthropic, PBC',
      homepage: 'https://modelcontextprotocol.io',
      repositoryUrl: '',
      linkHints: ['https://github.com/modelcontextprotocol/servers/issues'],
      lastPublish: '2025-04-08T15:33:18.109Z',
      mcpName: '',
    });
    expect(pkg?.readme).toContain('# GitHub MCP Server');
    expect(pkg?.launch).toMatchObject({
      kind: 'package',
      registryType: 'npm',
      identifier: '@modelcontextprotocol/server-github',
      version: '2025.4.8',
    });
  });

  it('takes dist-tags.latest over newer pre-releases and reads mcpName from the version', async () => {
    const pkg = await npm.details('acme-weather-mcp');
    expect(pkg).toMatchObject({
      version: '1.4.0',
      description: 'Weather forecasts for MCP clients',
      repositoryUrl: 'https://github.com/acme/weather-mcp',
      lastPublish: '2026-07-01T09:00:00.000Z',
      mcpName: 'io.github.acme/weather',
      author: 'acme-bot',
    });
  });

  it('answers null for a package that does not exist, and for a name npm cannot have without asking', async () => {
    expect(await npm.details('no-such-package-anywhere')).toBeNull();
    expect(await npm.details('../../etc/passwd')).toBeNull();
    expect(fake.count('npm')).toBe(1);
  });

  it('caches package documents, including "not found"', async () => {
    await npm.details('acme-weather-mcp');
    await npm.details('acme-weather-mcp');
    await npm.details('no-such-package-anywhere');
    await npm.details('no-such-package-anywhere');
    expect(fake.count('npm')).toBe(2);
  });

  it('reads weekly downloads from the downloads API, cached, null (unknown) for packages it has no count of', async () => {
    expect(await npm.weeklyDownloads('acme-weather-mcp')).toBe(1234);
    expect(await npm.weeklyDownloads('acme-weather-mcp')).toBe(1234);
    expect(await npm.weeklyDownloads('@modelcontextprotocol/server-everything')).toBe(97310);
    expect(await npm.weeklyDownloads('never-published')).toBeNull();
    expect(fake.count('downloads')).toBe(3);
    expect(fake.requests.find((r) => r.registry === 'downloads')?.path).toBe('/downloads/point/last-week/acme-weather-mcp');
  });

  it.each(['error', 'bad-json', 'hang'] as const)(
    'fails the search with SourceError and a log line when the registry fails (%s)',
    async (fault) => {
      fake.fail('npm', fault);
      await expect(source(HANG_TIMEOUT_MS).search('github', 20)).rejects.toBeInstanceOf(SourceError);
      expect(logger.warnings).toHaveLength(1);
      expect(logger.warnings[0]?.obj).toMatchObject({ source: 'npm', query: 'github' });
    },
  );

  it('does not remember a failure: the next search asks again', async () => {
    fake.fail('npm', 'error');
    await expect(npm.search('github', 20)).rejects.toThrow(/HTTP 5\d\d/);
    fake.fail('npm', null);
    expect(await npm.search('github', 20)).toHaveLength(1);
    expect(fake.count('npm', '/-/v1/search')).toBe(2);
  });

  it('throws SourceError from details when the registry fails, so the route can tell it from "not found"', async () => {
    fake.fail('npm', 'error');
    await expect(npm.details('acme-weather-mcp')).rejects.toBeInstanceOf(SourceError);
    fake.fail('npm', 'hang');
    await expect(source(HANG_TIMEOUT_MS).details('acme-weather-mcp')).rejects.toThrow(/no answer within 300 ms/);
  });

  it('counts downloads as unknown (null), not 0, when the downloads API fails', async () => {
    fake.fail('downloads', 'error');
    expect(await npm.weeklyDownloads('acme-weather-mcp')).toBeNull();
    expect(logger.warnings[0]?.obj).toMatchObject({ source: 'npm-downloads' });
  });
});

describe('the npm registry URL', () => {
  it('uses NPM_REGISTRY_URL without asking npm', async () => {
    let asked = 0;
    const url = new NpmRegistryUrl('https://registry.npmmirror.com/', async () => {
      asked++;
      return 'https://elsewhere.example/';
    });
    expect(await url.get()).toBe('https://registry.npmmirror.com/');
    expect(asked).toBe(0);
  });

  it('asks npm once for its configured registry', async () => {
    let asked = 0;
    const url = new NpmRegistryUrl(undefined, async () => {
      asked++;
      return 'https://registry.npmmirror.com/';
    });
    expect(await url.get()).toBe('https://registry.npmmirror.com/');
    expect(await url.get()).toBe('https://registry.npmmirror.com/');
    expect(asked).toBe(1);
  });

  it('falls back to the public registry when npm fails or answers nonsense', async () => {
    expect(await new NpmRegistryUrl(undefined, () => Promise.reject(new Error('npm: not found'))).get()).toBe(PUBLIC_NPM_REGISTRY);
    expect(await new NpmRegistryUrl(undefined, async () => 'undefined').get()).toBe(PUBLIC_NPM_REGISTRY);
  });

  it('reads the real npm configuration of this machine', async () => {
    expect(await new NpmRegistryUrl(undefined).get()).toMatch(/^https?:\/\//);
  });
});
