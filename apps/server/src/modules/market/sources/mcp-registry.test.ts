import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeRegistries, startFakeRegistries } from '../../../../test/fake-registries.js';
import { recordingLogger } from '../../../../test/recording-logger.js';
import { SourceError } from './http.js';
import { McpRegistrySource, registrySearchTerm } from './mcp-registry.js';

describe('MCP Registry source against the fake registry', () => {
  let fake: FakeRegistries;
  let logger: ReturnType<typeof recordingLogger>;
  let registry: McpRegistrySource;

  beforeAll(async () => {
    fake = await startFakeRegistries();
  });
  afterAll(async () => fake?.close());
  /** Generous, so a loaded machine cannot fail a test; only the hanging-registry case uses a short deadline. */
  const source = (timeoutMs = 10_000) => new McpRegistrySource({ timeoutMs, logger, baseUrl: fake.urls.mcpRegistry });
  beforeEach(() => {
    fake.reset();
    logger = recordingLogger();
    registry = source();
  });

  it('searches /v0.1/servers for the latest versions and maps an npm package entry', async () => {
    const results = await registry.search('everything', 20);
    expect(fake.requests[0]).toMatchObject({ path: '/v0.1/servers', query: { search: 'everything', version: 'latest', limit: '50' } });
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({
      source: 'mcp_registry',
      name: 'io.github.modelcontextprotocol/server-everything',
      version: '2026.8.31',
      author: 'modelcontextprotocol',
      homepage: 'https://github.com/modelcontextprotocol/servers',
      repositoryUrl: 'https://github.com/modelcontextprotocol/servers',
      lastPublish: '2026-09-02T05:20:00Z',
      npmPackage: '@modelcontextprotocol/server-everything',
      launch: {
        kind: 'package',
        registryType: 'npm',
        identifier: '@modelcontextprotocol/server-everything',
        version: '2026.8.31',
        runtimeHint: 'npx',
        packageArguments: ['stdio'],
      },
    });
  });

  it('maps declared variables, remotes with header templates, and container-only entries', async () => {
    const byName = new Map((await registry.search('.', 20)).map((p) => [p.name, p]));
    expect(byName.get('io.github.acme/weather')?.declaredEnv).toEqual([
      { name: 'WEATHER_API_KEY', description: 'Acme weather API key', isRequired: true, isSecret: true, defaultValue: '' },
      { name: 'WEATHER_UNITS', description: 'metric or imperial', isRequired: false, isSecret: false, defaultValue: 'metric' },
    ]);
    const remote = byName.get('com.example/remote-search');
    expect(remote).toMatchObject({ author: 'com.example', homepage: 'https://mcp.example.com/docs', npmPackage: '' });
    expect(remote?.launch).toEqual({
      kind: 'remote',
      transport: 'streamableHttp',
      url: 'https://mcp.example.com/mcp',
      headers: [
        {
          name: 'Authorization',
          description: 'Bearer token from your example.com account (Bearer {api_key})',
          isRequired: true,
          isSecret: true,
          defaultValue: '',
        },
      ],
      variables: [],
    });
    expect(byName.get('io.github.acme/docker-only')?.launch).toMatchObject({
      kind: 'package',
      registryType: 'oci',
      runtimeHint: 'docker',
      runtimeArguments: ['-e', 'SEARCH_TOKEN'],
    });
  });

  it('shares one cached list between searches of the same text', async () => {
    await registry.search('acme', 20);
    await registry.search('ACME', 5);
    await registry.searchEntries('acme');
    expect(fake.count('mcp')).toBe(1);
  });

  it('reads one entry by its URL-encoded name, and null for an unknown or impossible name', async () => {
    const pkg = await registry.details('io.github.acme/weather');
    expect(fake.requests[0]?.path).toBe('/v0.1/servers/io.github.acme%2Fweather/versions/latest');
    expect(pkg).toMatchObject({ name: 'io.github.acme/weather', version: '1.4.0', npmPackage: 'acme-weather-mcp' });
    expect(await registry.details('io.github.acme/nothing')).toBeNull();
    expect(await registry.details('no-slash-here')).toBeNull();
    expect(fake.count('mcp')).toBe(2);
  });

  it('lists the versions of a server', async () => {
    expect(await registry.versions('io.github.modelcontextprotocol/server-everything')).toEqual(['2026.8.18', '2026.8.31']);
    expect(await registry.versions('io.github.acme/nothing')).toBeNull();
  });

  it('finds the variables it declares for an npm package, through mcpName or by searching', async () => {
    const viaMcpName = await registry.declaredEnvFor('npm', 'acme-weather-mcp', 'io.github.acme/weather');
    expect(viaMcpName.map((v) => v.name)).toEqual(['WEATHER_API_KEY', 'WEATHER_UNITS']);
    expect(fake.requests.at(-1)?.path).toBe('/v0.1/servers/io.github.acme%2Fweather/versions/latest');

    const viaSearch = await registry.declaredEnvFor('pypi', 'Acme_Notes.MCP');
    expect(viaSearch.map((v) => v.name)).toEqual(['ACME_NOTES_TOKEN', 'ACME_NOTES_DIR']);
    expect(fake.requests.at(-1)?.query.search).toBe('notes');
    expect(await registry.declaredEnvFor('npm', 'left-pad')).toEqual([]);
  });

  it('searches for a package by its distinctive word, since registry names rarely contain package names', () => {
    expect(registrySearchTerm('acme-weather-mcp')).toBe('weather');
    expect(registrySearchTerm('mcp-server-fetch')).toBe('fetch');
    expect(registrySearchTerm('@modelcontextprotocol/server-github')).toBe('github');
    expect(registrySearchTerm('mcp')).toBe('mcp');
  });

  it('fails the search and gives no variables when the registry fails, with a log line each', async () => {
    fake.fail('mcp', 'error');
    await expect(registry.search('acme', 20)).rejects.toBeInstanceOf(SourceError);
    expect(await registry.declaredEnvFor('npm', 'acme-weather-mcp', 'io.github.acme/weather')).toEqual([]);
    expect(logger.warnings.map((w) => w.obj)).toMatchObject([{ source: 'mcp_registry', query: 'acme' }, { source: 'mcp_registry' }]);
  });

  it('gives up on a registry that does not answer', async () => {
    fake.fail('mcp', 'hang');
    const impatient = source(300);
    await expect(impatient.search('acme', 20)).rejects.toThrow(/no answer within 300 ms/);
    await expect(impatient.details('io.github.acme/weather')).rejects.toThrow(/no answer within 300 ms/);
  });
});
