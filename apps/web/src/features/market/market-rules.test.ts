import { describe, expect, it } from 'vitest';
import { installedService } from '../../test/installed-service';
import { firstBlankVar, isMissingEnvValue, missingRequiredVars, varsNamed } from './env-vars';
import {
  authorName,
  DEFAULT_MARKET_TAB,
  detailsPath,
  fromInstalledService,
  fromMarketPackage,
  fromPackageDetails,
  githubOwnerOf,
  type MarketEnvVar,
  marketTabs,
  packagePageUrl,
} from './market-item';
import { safeUrl } from './safe-url';
import { envVar, marketPackage, packageDetails } from './test-fixtures';

const variable = (overrides: Partial<MarketEnvVar> = {}): MarketEnvVar => ({
  name: 'TOKEN',
  description: '',
  isSecret: true,
  isRequired: true,
  defaultValue: '',
  value: '',
  ...overrides,
});

describe('missing env var rule of the detail view install (docs/console.md §5)', () => {
  it.each([
    'your-token',
    'enter-key',
    'API-KEY-HERE',
    'my-api-token-here',
    'token-here',
    'key-here',
    'Secret-Here',
    'paste-it',
    'insert-value',
    'add-yours',
  ])('counts %s as missing (case-insensitive placeholder)', (value) => {
    expect(isMissingEnvValue(value)).toBe(true);
  });

  it('counts an empty value as missing and a real one as given', () => {
    expect(isMissingEnvValue('')).toBe(true);
    expect(isMissingEnvValue(undefined)).toBe(true);
    expect(isMissingEnvValue('ghp_abc123')).toBe(false);
    expect(isMissingEnvValue('https://gitlab.com/api/v4')).toBe(false);
  });

  it('blocks only required variables without a usable entered value or default', () => {
    const vars = [
      variable({ name: 'NEEDED' }),
      variable({ name: 'PLACEHOLDER_DEFAULT', defaultValue: '<your-token>' }),
      variable({ name: 'REAL_DEFAULT', defaultValue: 'https://api.example.com' }),
      variable({ name: 'OPTIONAL', isRequired: false }),
      variable({ name: 'ENTERED' }),
      variable({ name: 'ENTERED_PLACEHOLDER' }),
    ];
    const missing = missingRequiredVars(vars, { ENTERED: 'abc', ENTERED_PLACEHOLDER: 'paste-here' });
    expect(missing.map((v) => v.name)).toEqual(['NEEDED', 'PLACEHOLDER_DEFAULT', 'ENTERED_PLACEHOLDER']);
  });
});

describe('missing-variable modal rule (docs/console.md §5)', () => {
  it('wants every listed variable non-blank after trimming, naming the first blank one', () => {
    expect(firstBlankVar(['A', 'B'], { A: 'x', B: '   ' })).toBe('B');
    expect(firstBlankVar(['A', 'B'], { B: 'y' })).toBe('A');
    expect(firstBlankVar(['A', 'B'], { A: ' x ', B: 'y' })).toBeNull();
  });

  it("describes the server's names with what the package declares, else as plain required variables", () => {
    const known = [variable({ name: 'A', description: 'the A key' })];
    expect(varsNamed(['A', 'B'], known)).toEqual([known[0], variable({ name: 'B', isSecret: false })]);
  });
});

describe('Markdown address rule (docs/console.md §5)', () => {
  it.each([
    'https://example.com/a',
    'http://example.com',
    'HTTPS://EXAMPLE.COM',
    'irc://irc.libera.chat/mcp',
    'ircs://irc.libera.chat/mcp',
    'mailto:someone@example.com',
    'xmpp:someone@example.com',
    './docs/setup.md',
    '/absolute/path.png',
    '#configuration',
    '?tab=readme',
    'docs/a:b.md',
  ])('keeps %s', (url) => {
    expect(safeUrl(url)).toBe(url);
  });

  it.each([
    'javascript:alert(1)',
    'JavaScript:alert(1)',
    ' javascript:alert(1)',
    'data:image/png;base64,AAAA',
    'vbscript:x',
    'file:///etc/passwd',
    'ftp://example.com',
  ])('blanks %s', (url) => {
    expect(safeUrl(url)).toBe('');
  });
});

describe('search result mapping (docs/console.md §3)', () => {
  it('keys by name plus package manager and keeps the fields the card reads', () => {
    expect(fromMarketPackage(marketPackage({ is_installed: true, installed_service_id: 4 }))).toMatchObject({
      id: 'acme-echo-mcp:npm',
      name: 'acme-echo-mcp',
      version: '1.0.0',
      source: 'npm',
      downloads: 321,
      stars: 12,
      author: 'Acme Tools',
      homepage: 'https://github.com/acme/echo-mcp#readme',
      repositoryUrl: 'https://github.com/acme/echo-mcp',
      lastUpdated: '2026-10-01T09:00:00.000Z',
      isInstalled: true,
      installed_service_id: 4,
    });
  });

  it("falls back to version 0.0.0, and to the GitHub homepage's first path segment for the author", () => {
    const item = fromMarketPackage(marketPackage({ version: '', author: '', homepage: 'https://github.com/octo-org/tool' }));
    expect(item.version).toBe('0.0.0');
    expect(item.author).toBe('octo-org');
    expect(fromMarketPackage(marketPackage({ author: '', homepage: 'https://example.com/octo' })).author).toBe('');
    expect(githubOwnerOf('https://www.github.com/acme/x')).toBe('acme');
    expect(githubOwnerOf('not a url')).toBe('');
  });

  it('reads an author given as a string or an object with a name', () => {
    expect(authorName(' Ada ')).toBe('Ada');
    expect(authorName({ name: 'Grace' })).toBe('Grace');
    expect(authorName({ email: 'x@example.com' })).toBe('');
    expect(authorName(null)).toBe('');
  });

  it('maps details with their variables (isRequired = not optional) and readme', () => {
    const item = fromPackageDetails(
      packageDetails({}, { env_vars: [envVar(), envVar({ name: 'LEVEL', optional: true, is_secret: false, default_value: 'info' })] }),
    );
    expect(item.envVars).toEqual([
      {
        name: 'ACME_ECHO_TOKEN',
        description: 'Token from the Acme console',
        isSecret: true,
        isRequired: true,
        defaultValue: '',
        value: '',
      },
      { name: 'LEVEL', description: 'Token from the Acme console', isSecret: false, isRequired: false, defaultValue: 'info', value: '' },
    ]);
    expect(item.readme).toContain('# acme-echo-mcp');
  });

  it('keys an installed service like its package, or by id when it came from no package', () => {
    const fromNpm = fromInstalledService(installedService({ id: 3, source: 'npm', package_name: '@acme/x', package_manager: 'npm' }));
    expect(fromNpm).toMatchObject({
      id: '@acme/x:npm',
      packageName: '@acme/x',
      source: 'npm',
      isInstalled: true,
      installed_service_id: 3,
      // No count applies to an installed service (shown without one); null is a package whose count is unknown.
      downloads: undefined,
    });
    const fromUvx = fromInstalledService(installedService({ id: 5, source: 'custom', package_name: 'Acme_Notes', package_manager: 'uv' }));
    expect(fromUvx).toMatchObject({ id: 'Acme_Notes:pypi', source: 'pypi' });
    // A service added as `npx -y @scope/name@version` links to its package and shows the pinned version.
    const pinned = fromInstalledService(
      installedService({
        id: 7,
        source: 'custom',
        package_name: '@modelcontextprotocol/server-everything@2026.8.31',
        package_manager: 'npm',
        version: '',
      }),
    );
    expect(pinned).toMatchObject({
      id: '@modelcontextprotocol/server-everything:npm',
      packageName: '@modelcontextprotocol/server-everything',
      version: '2026.8.31',
    });
    expect(packagePageUrl(pinned.source, pinned.packageName)).toBe('https://www.npmjs.com/package/@modelcontextprotocol/server-everything');
    const pinnedUv = fromInstalledService(
      installedService({ id: 8, source: 'custom', package_name: 'mcp-server-time==1.0', package_manager: 'uv', version: '' }),
    );
    expect(pinnedUv).toMatchObject({ id: 'mcp-server-time:pypi', packageName: 'mcp-server-time', version: '1.0' });
    const custom = fromInstalledService(installedService({ id: 6, source: 'custom', display_name: 'Remote' }));
    expect(custom).toMatchObject({ id: 'service:6', name: 'Remote', packageName: '', source: 'custom' });
  });
});

describe('marketplace links and tabs', () => {
  it('links a package to its registry page', () => {
    expect(packagePageUrl('npm', '@scope/pkg')).toBe('https://www.npmjs.com/package/@scope/pkg');
    expect(packagePageUrl('pypi', 'mcp-server-fetch')).toBe('https://pypi.org/project/mcp-server-fetch/');
    expect(packagePageUrl('mcp_registry', 'io.github.acme/weather')).toBe(
      'https://registry.modelcontextprotocol.io/v0.1/servers/io.github.acme%2Fweather/versions/latest',
    );
    expect(packagePageUrl('custom', '')).toBe('');
  });

  it('puts the details of a scoped package under /market/{source}/{name} with its slash kept', () => {
    expect(detailsPath('npm', '@modelcontextprotocol/server-github')).toBe('/market/npm/%40modelcontextprotocol/server-github');
    expect(detailsPath('mcp_registry', 'io.github.acme/weather')).toBe('/market/mcp_registry/io.github.acme/weather');
  });

  it('opens on npm, with the Installed tab last (docs/console.md §4, §9)', () => {
    expect(DEFAULT_MARKET_TAB).toBe('npm');
    expect(marketTabs).toEqual(['npm', 'pypi', 'mcp_registry', 'installed']);
  });
});
