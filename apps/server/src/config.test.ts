import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, prepareDataDir } from './config.js';

/** The ConfigError that loading this environment throws; fails the test when it loads fine. */
function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  throw new Error(`expected ${JSON.stringify(env)} to be refused`);
}

describe('loadConfig', () => {
  it('applies the documented defaults to an empty environment', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 3000,
      host: '0.0.0.0',
      dataDir: path.resolve('./data'),
      databaseUrl: undefined,
      redisUrl: undefined,
      secretKey: undefined,
      adminPassword: undefined,
      logLevel: 'info',
    });
    expect(config.registries.pypiIndex).toBe('https://pypi.org/simple');
    expect(config.registries.mcpRegistry).toBe('https://registry.modelcontextprotocol.io');
  });

  it('reads the runtime contract variables', () => {
    const config = loadConfig({
      PORT: '8080',
      HOST: '127.0.0.1',
      DATA_DIR: '/var/lib/toolport',
      DATABASE_URL: 'postgresql://tp:pw@db:5432/toolport',
      REDIS_URL: 'redis://cache:6379',
      SECRET_KEY: 's'.repeat(32),
      ADMIN_PASSWORD: 'admin-password',
      LOG_LEVEL: 'debug',
      NPM_REGISTRY_URL: 'https://registry.npmmirror.com',
    });
    expect(config).toMatchObject({
      port: 8080,
      host: '127.0.0.1',
      dataDir: '/var/lib/toolport',
      databaseUrl: 'postgresql://tp:pw@db:5432/toolport',
      redisUrl: 'redis://cache:6379',
      logLevel: 'debug',
      registries: { npm: 'https://registry.npmmirror.com' },
    });
  });

  it('treats empty variables as unset, as compose files write them', () => {
    expect(loadConfig({ PORT: '', DATABASE_URL: '' })).toMatchObject({ port: 3000, databaseUrl: undefined });
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['DATABASE_URL', 'mysql://x'],
    ['DATABASE_URL', 'not a url'],
    ['REDIS_URL', 'http://cache:6379'],
    ['LOG_LEVEL', 'loud'],
    ['SECRET_KEY', 'too-short'],
    ['ADMIN_PASSWORD', 'short'],
    ['PYPI_INDEX_URL', 'file:///simple'],
  ])('refuses %s=%s with a problem naming the variable', (name, value) => {
    const problems = problemsOf({ [name]: value });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(new RegExp(`^${name}: `));
  });

  it('believes X-Forwarded-For only from proxies on this host or a private network unless TRUST_PROXY says otherwise', () => {
    expect(loadConfig({}).trustProxy).toEqual(['loopback', 'linklocal', 'uniquelocal']);
    expect(loadConfig({ TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'TRUE' }).trustProxy).toBe(true);
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 192.168.1.7,::1/128,loopback' }).trustProxy).toEqual([
      '10.0.0.0/8',
      '192.168.1.7',
      '::1/128',
      'loopback',
    ]);
    for (const bad of ['yes', '10.0.0.0/33', '10.0.0/8', 'proxy.local', '1.2.3.4,', '::1/129']) {
      expect(problemsOf({ TRUST_PROXY: bad })[0], bad).toMatch(/^TRUST_PROXY: /);
    }
  });

  it('reads ALLOWED_HOSTS and ALLOWED_ORIGINS as lists and refuses entries of the wrong shape', () => {
    expect(loadConfig({}).proxyAccess).toEqual({ allowedHosts: [], allowedOrigins: [] });
    const c = loadConfig({
      ALLOWED_HOSTS: 'MCP.internal, gw.example.com',
      ALLOWED_ORIGINS: 'https://App.example.com/,http://localhost:5173',
    });
    expect(c.proxyAccess).toEqual({
      allowedHosts: ['mcp.internal', 'gw.example.com'],
      allowedOrigins: ['https://app.example.com', 'http://localhost:5173'],
    });
    for (const bad of ['https://gw.example.com', 'gw.example.com:8080', 'a b/c']) {
      expect(problemsOf({ ALLOWED_HOSTS: bad })[0], bad).toMatch(/^ALLOWED_HOSTS: /);
    }
    for (const bad of ['app.example.com', 'https://app.example.com/path', 'ftp://app.example.com']) {
      expect(problemsOf({ ALLOWED_ORIGINS: bad })[0], bad).toMatch(/^ALLOWED_ORIGINS: /);
    }
  });

  it('reports every bad variable at once, not just the first', () => {
    const problems = problemsOf({ PORT: 'abc', LOG_LEVEL: 'loud' });
    expect(problems.map((p) => p.split(':')[0]).sort()).toEqual(['LOG_LEVEL', 'PORT']);
  });

  it('shows the refused value, except secrets and URL credentials', () => {
    expect(problemsOf({ LOG_LEVEL: 'loud' })[0]).toContain('"loud"');
    const [secret] = problemsOf({ SECRET_KEY: 'short-secret' });
    expect(secret).toMatch(/^SECRET_KEY: /);
    expect(secret).not.toContain('short-secret');
    expect(problemsOf({ ADMIN_PASSWORD: 'pw123' })[0]).not.toContain('pw123');
    const [url] = problemsOf({ DATABASE_URL: 'mysql://toolport:hunter2@db/toolport' });
    expect(url).toContain('mysql://***@db/toolport');
    expect(url).not.toContain('hunter2');
  });
});

describe('prepareDataDir', () => {
  const root = mkdtempSync(path.join(tmpdir(), 'toolport-config-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('creates a missing directory', () => {
    const dir = path.join(root, 'nested', 'data');
    prepareDataDir(dir);
    expect(statSync(dir).isDirectory()).toBe(true);
  });

  it('refuses a path under a regular file with a problem naming DATA_DIR', () => {
    const file = path.join(root, 'a-file');
    writeFileSync(file, '');
    expect(() => prepareDataDir(path.join(file, 'data'))).toThrow(ConfigError);
    try {
      prepareDataDir(path.join(file, 'data'));
    } catch (err) {
      expect((err as ConfigError).problems[0]).toMatch(/^DATA_DIR: .*a-file\/data is not a writable directory/);
    }
  });
});
