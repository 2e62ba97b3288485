import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeRegistries, startFakeRegistries } from '../../../../test/fake-registries.js';
import { recordingLogger } from '../../../../test/recording-logger.js';
import { SourceError } from './http.js';
import { McpRegistrySource } from './mcp-registry.js';
import { PypiSource } from './pypi.js';

describe('PyPI source against the fake PyPI and MCP Registry', () => {
  let fake: FakeRegistries;
  let logger: ReturnType<typeof recordingLogger>;
  let pypi: PypiSource;

  beforeAll(async () => {
    fake = await startFakeRegistries();
  });
  afterAll(async () => fake?.close());
  /** Generous, so a loaded machine cannot fail a test; only the hanging-registry case uses a short deadline. */
  const source = (timeoutMs = 10_000) => {
    const common = { timeoutMs, logger };
    return new PypiSource({
      ...common,
      jsonUrl: fake.urls.pypiJson,
      registry: new McpRegistrySource({ ...common, baseUrl: fake.urls.mcpRegistry }),
    });
  };
  beforeEach(() => {
    fake.reset();
    logger = recordingLogger();
    pypi = source();
  });

  it('reads a project from the JSON API: summary, author from the e-mail field, repository from project URLs, upload time, readme', async () => {
    const pkg = await pypi.details('mcp-server-fetch');
    expect(fake.requests[0]).toMatchObject({ registry: 'pypi', path: '/pypi/mcp-server-fetch/json' });
    expect(pkg).toMatchObject({
      source: 'pypi',
      name: 'mcp-server-fetch',
      version: '2025.4.7',
      description: 'A Model Context Protocol server providing tools to fetch and convert web content for usage by LLMs',
      author: 'Anthropic',
      repositoryUrl: 'https://github.com/modelcontextprotocol/servers',
      homepage: 'https://github.com/modelcontextprotocol/servers',
      lastPublish: '2025-04-07T17:01:31.501442Z',
      weeklyDownloads: null,
      launch: { kind: 'package', registryType: 'pypi', identifier: 'mcp-server-fetch', version: '2025.4.7', runtimeHint: 'uvx' },
    });
    expect(pkg?.readme).toContain('# Fetch MCP Server');
  });

  it('answers null for an unknown project, and caches by normalised name', async () => {
    expect(await pypi.details('no-such-project')).toBeNull();
    await pypi.details('Acme_Notes.MCP');
    await pypi.details('acme-notes-mcp');
    expect(fake.count('pypi')).toBe(2);
  });

  it('searches through the MCP Registry entries that publish a PyPI package, plus the exact name', async () => {
    const byRegistry = await pypi.search('notes', 20);
    expect(byRegistry.map((p) => [p.source, p.name, p.version])).toEqual([['pypi', 'acme-notes-mcp', '0.3.1']]);
    expect(byRegistry[0]?.declaredEnv.map((v) => v.name)).toEqual(['ACME_NOTES_TOKEN', 'ACME_NOTES_DIR']);

    const exact = await pypi.search('mcp-server-fetch', 20);
    expect(exact.map((p) => p.name)).toEqual(['mcp-server-fetch']);
    expect(exact[0]).toMatchObject({ author: 'Anthropic', readme: '' });
  });

  it('lists a project found both ways once, the exact match first', async () => {
    fake.reset();
    const results = await pypi.search('acme-notes-mcp', 20);
    expect(results.map((p) => p.name)).toEqual(['acme-notes-mcp']);
    expect(results[0]?.description).toBe('Notes for MCP clients');
  });

  it('still finds the exact name when the MCP Registry is down, and logs the failure', async () => {
    fake.fail('mcp', 'error');
    expect((await pypi.search('mcp-server-fetch', 20)).map((p) => p.name)).toEqual(['mcp-server-fetch']);
    expect(logger.warnings[0]?.obj).toMatchObject({ source: 'pypi', via: 'mcp_registry' });
  });

  it('fails the search with both reasons when both are down, and SourceError from details', async () => {
    fake.fail('mcp', 'hang');
    fake.fail('pypi', 'bad-json');
    await expect(source(300).search('notes', 20)).rejects.toThrow('the answer is not JSON; via the MCP Registry: no answer within 300 ms');
    expect(logger.warnings).toHaveLength(2);
    await expect(pypi.details('acme-notes-mcp')).rejects.toBeInstanceOf(SourceError);
  });
});
