import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeRegistries, startFakeRegistries } from '../../../../test/fake-registries.js';
import { recordingLogger } from '../../../../test/recording-logger.js';
import { GithubStars } from './github.js';
import { githubRepoOf, personName, repositoryUrlOf } from './links.js';

describe('GitHub stars against the fake repos API', () => {
  let fake: FakeRegistries;
  let logger: ReturnType<typeof recordingLogger>;
  /** Generous, so a loaded machine cannot fail a test; only the hanging case uses a short deadline. */
  const stars = (token?: string, timeoutMs = 10_000) => new GithubStars({ timeoutMs, logger, apiUrl: fake.urls.githubApi, token });

  beforeAll(async () => {
    fake = await startFakeRegistries();
  });
  afterAll(async () => fake?.close());
  beforeEach(() => {
    fake.reset();
    logger = recordingLogger();
  });

  it('reads stargazers_count, sending the token only when one is configured', async () => {
    expect(await stars('ghp_test').stars({ owner: 'modelcontextprotocol', repo: 'servers' })).toBe(71234);
    expect(fake.requests[0]).toMatchObject({ path: '/repos/modelcontextprotocol/servers', authorization: 'Bearer ghp_test' });
    expect(await stars().stars({ owner: 'acme', repo: 'weather-mcp' })).toBe(42);
    expect(fake.requests[1]?.authorization).toBeUndefined();
  });

  it('asks once per repository, whatever the case of its name', async () => {
    const github = stars();
    await github.stars({ owner: 'acme', repo: 'weather-mcp' });
    await github.stars({ owner: 'Acme', repo: 'Weather-MCP' });
    expect(fake.count('github')).toBe(1);
  });

  it('counts a repository that does not exist as unknown (null), and remembers it', async () => {
    const github = stars();
    expect(await github.stars({ owner: 'acme', repo: 'gone' })).toBeNull();
    expect(await github.stars({ owner: 'acme', repo: 'gone' })).toBeNull();
    expect(fake.count('github')).toBe(1);
    expect(await github.stars(null)).toBeNull();
  });

  it('counts unknown (null) and logs when GitHub fails, and asks again next time', async () => {
    const github = stars();
    fake.fail('github', 'error');
    expect(await github.stars({ owner: 'acme', repo: 'notes-mcp' })).toBeNull();
    expect(logger.warnings[0]?.obj).toMatchObject({ source: 'github', repo: 'acme/notes-mcp' });
    fake.fail('github', null);
    expect(await github.stars({ owner: 'acme', repo: 'notes-mcp' })).toBe(7);
  });

  it('stops calling GitHub once it says the rate limit is reached (unknown meanwhile)', async () => {
    const github = stars();
    fake.fail('github', 'rate-limit');
    expect(await github.stars({ owner: 'acme', repo: 'notes-mcp' })).toBeNull();
    fake.fail('github', null);
    expect(await github.stars({ owner: 'acme', repo: 'weather-mcp' })).toBeNull();
    expect(fake.count('github')).toBe(1);
  });

  it('gives up on a GitHub that does not answer', async () => {
    fake.fail('github', 'hang');
    expect(await stars(undefined, 300).stars({ owner: 'acme', repo: 'notes-mcp' })).toBeNull();
    expect(logger.warnings[0]?.obj).toMatchObject({ err: expect.stringContaining('no answer within 300 ms') });
  });
});

describe('package links', () => {
  it('finds the GitHub repository in every form package metadata uses', () => {
    const expected = { owner: 'acme', repo: 'weather-mcp' };
    for (const url of [
      'https://github.com/acme/weather-mcp',
      'https://github.com/acme/weather-mcp#readme',
      'https://github.com/acme/weather-mcp/tree/main/src',
      'git+https://github.com/acme/weather-mcp.git',
      'git@github.com:acme/weather-mcp.git',
      'github:acme/weather-mcp',
    ]) {
      expect(githubRepoOf(url), url).toEqual(expected);
    }
    expect(githubRepoOf('https://gitlab.com/acme/weather-mcp')).toBeNull();
    expect(githubRepoOf('https://github.com/acme')).toBeNull();
    expect(githubRepoOf('not a url')).toBeNull();
  });

  it('turns npm repository fields into browsable URLs', () => {
    expect(repositoryUrlOf({ type: 'git', url: 'git+https://github.com/acme/weather-mcp.git' })).toBe(
      'https://github.com/acme/weather-mcp',
    );
    expect(repositoryUrlOf('acme/weather-mcp')).toBe('https://github.com/acme/weather-mcp');
    expect(repositoryUrlOf('git+https://gitlab.com/acme/tool.git')).toBe('https://gitlab.com/acme/tool');
    expect(repositoryUrlOf('git://example.org/tool.git')).toBe('https://example.org/tool');
    expect(repositoryUrlOf(undefined)).toBe('');
  });

  it('reads people as strings or objects', () => {
    expect(personName('Anthropic, PBC <hello@example.com> (https://anthropic.com)')).toBe('Anthropic, PBC');
    expect(personName({ name: 'Ann', email: 'ann@example.com' })).toBe('Ann');
    expect(personName({ username: 'acme-bot' })).toBe('acme-bot');
    expect(personName(42)).toBe('');
  });
});
