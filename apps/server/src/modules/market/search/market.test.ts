import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeRegistries, startFakeRegistries } from '../../../../test/fake-registries.js';
import { bearer, createTestApp, engines, type TestApp } from '../../../../test/harness.js';
import { serviceRow } from '../../../../test/kits/service-row.js';

/**
 * The marketplace as the console uses it: the real app, its registries pointed at the local fake
 * registries through the same environment variables an operator sets for a mirror.
 */
describe.each(engines)('marketplace routes on %s', (engine) => {
  let fake: FakeRegistries;
  let t: TestApp;
  let token: string;

  const get = (url: string, headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'GET', url, headers: { ...bearer(token), ...headers } });
  const search = async (query: string, sources?: string) => {
    const params = new URLSearchParams({ query, ...(sources ? { sources } : {}) });
    const res = await get(`/api/mcp_market/search?${params}`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data as Record<string, unknown>[];
  };
  const details = (name: string, manager: string, headers: Record<string, string> = {}) =>
    get(`/api/mcp_market/package_details?${new URLSearchParams({ package_name: name, package_manager: manager })}`, headers);

  /** A service row as an install would leave it; the marketplace only reads these columns. */
  const installService = async (name: string, source: string, packageManager: string, packageName: string) => {
    const row = await t.ctx.db
      .insertInto('services')
      .values(
        serviceRow({
          name,
          display_name: name,
          source,
          package_name: packageName,
          package_manager: packageManager,
          command: 'node',
        }),
      )
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  };

  beforeAll(async () => {
    fake = await startFakeRegistries();
    t = await createTestApp(engine, fake.env);
    // Browsing is for every signed-in user, so the suite browses as an ordinary one.
    token = (await t.createUser({ role: 1 })).token;
  });
  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });
  beforeEach(() => fake.reset());

  it('requires sign-in', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/mcp_market/search?query=github' });
    expect(res.statusCode).toBe(401);
  });

  it('answers an empty list for an empty query without asking any registry', async () => {
    expect(await search('', 'npm')).toEqual([]);
    expect(await search('   ')).toEqual([]);
    expect(fake.requests).toEqual([]);
  });

  it('finds an npm package with its weekly downloads, stars, author and links', async () => {
    expect(await search('github', 'npm')).toEqual([
      {
        name: '@modelcontextprotocol/server-github',
        version: '2025.4.8',
        description: 'MCP server for using the GitHub API',
        package_manager: 'npm',
        downloads: 35120,
        github_stars: 71234,
        author: 'Anthropic, PBC',
        homepage: 'https://modelcontextprotocol.io',
        repository_url: 'https://github.com/modelcontextprotocol/servers',
        last_publish: '2025-04-08T15:33:18.109Z',
        is_installed: false,
        installed_service_id: null,
      },
    ]);
  });

  it('asks the downloads API when the search has no counts, and takes stars from the GitHub homepage', async () => {
    const [weather] = await search('weather', 'npm');
    expect(weather).toMatchObject({ name: 'acme-weather-mcp', downloads: 1234, github_stars: 42, author: 'acme-bot' });
    expect(fake.count('downloads')).toBe(1);
    expect(fake.count('github', '/repos/acme/weather-mcp')).toBe(1);
  });

  it('searches each source named in a comma list, and every source when none is named', async () => {
    const two = await search('weather', 'npm,mcp_registry');
    expect(two.map((p) => [p.package_manager, p.name])).toEqual([
      ['npm', 'acme-weather-mcp'],
      ['mcp_registry', 'io.github.acme/weather'],
    ]);
    const all = await search('notes');
    expect(all.map((p) => [p.package_manager, p.name])).toEqual([
      ['pypi', 'acme-notes-mcp'],
      ['mcp_registry', 'io.github.acme/notes'],
    ]);
    // PyPI counts no downloads: unknown (null), not 0.
    expect(all[0]).toMatchObject({ version: '0.3.1', author: 'acme', github_stars: 7, downloads: null });
  });

  it('refuses an unknown source with 400 in the caller’s language', async () => {
    const en = await get('/api/mcp_market/search?query=x&sources=npm,cargo');
    expect(en.statusCode).toBe(400);
    expect(en.json()).toMatchObject({ success: false, message: 'Unknown package source "cargo": use npm, pypi or mcp_registry' });
    const zh = await get('/api/mcp_market/search?query=x&sources=cargo', { 'accept-language': 'zh-CN' });
    expect(zh.json().message).toBe('未知的软件包来源“cargo”：请使用 npm、pypi 或 mcp_registry');
  });

  it('shows installed packages with their service id, whichever way they were installed', async () => {
    const github = await installService('server-github', 'npm', 'npm', '@modelcontextprotocol/server-github');
    // A custom `uvx Acme_Notes_MCP` service: PyPI compares names normalised.
    const notes = await installService('notes', 'custom', 'uv', 'Acme_Notes_MCP');
    const [npmHit] = await search('github', 'npm');
    expect(npmHit).toMatchObject({ is_installed: true, installed_service_id: github });
    const pypiHits = await search('notes', 'pypi');
    expect(pypiHits[0]).toMatchObject({ name: 'acme-notes-mcp', is_installed: true, installed_service_id: notes });
    const [registryHit] = await search('notes', 'mcp_registry');
    expect(registryHit).toMatchObject({ is_installed: false, installed_service_id: null });
    await t.ctx.db.deleteFrom('services').where('id', 'in', [github, notes]).execute();
  });

  it('keeps answering when a registry fails, and says which one failed, why, and which setting points at it', async () => {
    fake.fail('mcp', 'error');
    const res = await get(`/api/mcp_market/search?${new URLSearchParams({ query: 'everything', sources: 'mcp_registry,npm' })}`);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.data.map((p: Record<string, unknown>) => [p.package_manager, p.name])).toEqual([
      ['npm', '@modelcontextprotocol/server-everything'],
    ]);
    expect(body.warnings).toEqual([
      { source: 'mcp_registry', message: 'The MCP Registry search failed (HTTP 500); MCP_REGISTRY_URL points at it' },
    ]);
    // A search where every source answered has no warnings at all.
    fake.fail('mcp', null);
    expect((await get(`/api/mcp_market/search?query=everything&sources=npm`)).json()).not.toHaveProperty('warnings');
  });

  it('warns when part of one source’s search failed: PyPI’s exact match answered, its MCP Registry half did not', async () => {
    fake.fail('mcp', 'error');
    const res = await get(`/api/mcp_market/search?${new URLSearchParams({ query: 'acme-notes-mcp', sources: 'pypi' })}`);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.data.map((p: Record<string, unknown>) => p.name)).toEqual(['acme-notes-mcp']);
    expect(body.warnings).toEqual([
      {
        source: 'pypi',
        message: 'The PyPI results may be incomplete: its search through the MCP Registry failed (HTTP 500); MCP_REGISTRY_URL points at it',
      },
    ]);
    fake.fail('mcp', null);
  });

  it('answers 502 in the caller’s language when every asked source failed, never an empty list', async () => {
    fake.fail('npm', 'error');
    const en = await get(`/api/mcp_market/search?query=nobody-cached-this&sources=npm`);
    expect(en.statusCode).toBe(502);
    expect(en.json()).toMatchObject({
      success: false,
      code: 'market_search_failed',
      message:
        'The search failed, so it is not known whether such a package exists: The npm search failed (HTTP 500); NPM_REGISTRY_URL points at it',
      data: { failures: [{ source: 'npm', reason: 'HTTP 500' }] },
    });
    const zh = await get(`/api/mcp_market/search?query=nobody-cached-this&sources=npm`, { 'accept-language': 'zh-CN' });
    expect(zh.statusCode).toBe(502);
    expect(zh.json().message).toBe(
      '搜索失败，因此无法确定是否存在这样的软件包：npm 搜索失败（HTTP 500）；它的地址由 NPM_REGISTRY_URL 设置',
    );
  });

  it('takes a registry without a search endpoint (404) for a failed search, not for "nothing found"', async () => {
    fake.fail('npm', 'not-found');
    // A query no earlier test asked: searches are cached for a while, failures are not.
    const res = await get(`/api/mcp_market/search?query=no-search-endpoint&sources=npm`);
    expect(res.statusCode).toBe(502);
    expect(res.json().data.failures).toEqual([{ source: 'npm', reason: 'the registry has no search (HTTP 404)' }]);
  });

  it('reads an npm package: readme, variables from its readme, the mcpServers entry that runs it', async () => {
    const res = await details('@modelcontextprotocol/server-github', 'npm');
    expect(res.statusCode, res.body).toBe(200);
    const data = res.json().data;
    expect(data.details).toMatchObject({
      name: '@modelcontextprotocol/server-github',
      version: '2025.4.8',
      homepage: 'https://modelcontextprotocol.io',
    });
    expect(data).toMatchObject({
      downloads: 35120,
      stars: 71234,
      author: 'Anthropic, PBC',
      repository_url: 'https://github.com/modelcontextprotocol/servers',
      last_publish: '2025-04-08T15:33:18.109Z',
      is_installed: false,
      installed_service_id: null,
      env_vars: [{ name: 'GITHUB_PERSONAL_ACCESS_TOKEN', description: '', is_secret: true, optional: false, default_value: '' }],
      mcp_config: {
        mcpServers: {
          'server-github': {
            command: 'npx',
            args: ['-y', '@modelcontextprotocol/server-github@2025.4.8'],
            env: { GITHUB_PERSONAL_ACCESS_TOKEN: '' },
          },
        },
      },
    });
    expect(data.readme).toContain('# GitHub MCP Server');
  });

  it('reads an npm package that names its MCP Registry entry: declared variables come first', async () => {
    const data = (await details('acme-weather-mcp', 'npm')).json().data;
    expect(data.env_vars.map((v: { name: string }) => v.name)).toEqual([
      'WEATHER_API_KEY',
      'WEATHER_UNITS',
      'WEATHER_CACHE_DIR',
      'WEATHER_TIMEOUT_MS',
    ]);
    expect(data.env_vars[0]).toEqual({
      name: 'WEATHER_API_KEY',
      description: 'Acme weather API key',
      is_secret: true,
      optional: false,
      default_value: '',
    });
    expect(fake.count('mcp', '/v0.1/servers/io.github.acme%2Fweather')).toBe(1);
  });

  it('reads an MCP Registry entry, with the readme and downloads of the npm package it runs', async () => {
    const data = (await details('io.github.modelcontextprotocol/server-everything', 'mcp_registry')).json().data;
    expect(data.details).toMatchObject({
      name: 'io.github.modelcontextprotocol/server-everything',
      version: '2026.8.31',
      package_manager: 'mcp_registry',
    });
    expect(data).toMatchObject({ downloads: 97310, stars: 71234, author: 'modelcontextprotocol', env_vars: [] });
    expect(data.readme).toContain('# Everything MCP Server');
    expect(data.mcp_config.mcpServers['server-everything']).toEqual({
      command: 'npx',
      args: ['-y', '@modelcontextprotocol/server-everything@2026.8.31', 'stdio'],
    });
  });

  it('reads a remote MCP Registry entry: its headers are what the user must supply', async () => {
    const data = (await details('com.example/remote-search', 'mcp_registry')).json().data;
    expect(data.env_vars).toEqual([
      {
        name: 'Authorization',
        description: 'Bearer token from your example.com account (Bearer {api_key})',
        is_secret: true,
        optional: false,
        default_value: '',
      },
    ]);
    expect(data.mcp_config.mcpServers['remote-search']).toEqual({
      type: 'streamableHttp',
      url: 'https://mcp.example.com/mcp',
      headers: { Authorization: '' },
    });
  });

  it('reads a PyPI project: its registry-declared variables, then its readme’s', async () => {
    const data = (await details('acme-notes-mcp', 'pypi')).json().data;
    expect(data.env_vars).toEqual([
      { name: 'ACME_NOTES_TOKEN', description: 'Token of your Acme Notes account', is_secret: true, optional: false, default_value: '' },
      { name: 'ACME_NOTES_DIR', description: 'Where notes are kept', is_secret: false, optional: true, default_value: '~/notes' },
      { name: 'ACME_NOTES_LOG_LEVEL', description: '', is_secret: false, optional: true, default_value: '' },
    ]);
    expect(data.mcp_config.mcpServers['acme-notes-mcp']).toMatchObject({ command: 'uvx', args: ['acme-notes-mcp@0.3.1'] });
  });

  it('answers 404 in the caller’s language for a package that does not exist', async () => {
    const en = await details('no-such-package-anywhere', 'npm');
    expect(en.statusCode).toBe(404);
    expect(en.json()).toEqual({ success: false, message: 'Package no-such-package-anywhere was not found on npm' });
    const zh = await details('io.github.acme/nothing', 'mcp_registry', { 'accept-language': 'zh-CN,zh;q=0.9' });
    expect(zh.statusCode).toBe(404);
    expect(zh.json().message).toBe('在 MCP Registry 上找不到软件包 io.github.acme/nothing');
  });

  it('answers 502, not 500, when the registry cannot say', async () => {
    fake.fail('npm', 'error');
    const res = await details('@modelcontextprotocol/server-brave-search', 'npm');
    expect(res.statusCode).toBe(502);
    expect(res.json()).toEqual({ success: false, message: 'npm could not be reached, please try again later' });
  });

  it('validates the details query', async () => {
    const res = await get('/api/mcp_market/package_details?package_name=x&package_manager=cargo');
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toContain('package_manager');
  });

  // Last: it reads (and so caches) a package the 502 test above must find uncached.
  it('answers null, not 0, for downloads nobody could provide (the downloads API failing)', async () => {
    fake.fail('downloads', 'error');
    const res = await details('@modelcontextprotocol/server-brave-search', 'npm');
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json().data;
    expect(body).toMatchObject({ downloads: null, stars: 71234 });
    expect(body.details).toMatchObject({ downloads: null, github_stars: 71234 });
  });
});
