import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { discoverEnvVars } from './env-discovery.js';
import { isPlaceholder, parseLooseJson } from './readme-env.js';

/** Real readmes, as published in the npm tarballs named in test/fixtures/registries/README.md. */
const readme = (file: string) => readFileSync(new URL(`../../../../test/fixtures/registries/readmes/${file}`, import.meta.url), 'utf8');
const secret = (name: string, description = '') => ({ name, description, is_secret: true, optional: false, default_value: '' });

describe('variable discovery on real readmes', () => {
  it('@modelcontextprotocol/server-github 2025.4.8: the token of its mcpServers blocks, secret and required', () => {
    expect(discoverEnvVars([], readme('server-github.md'))).toEqual([secret('GITHUB_PERSONAL_ACCESS_TOKEN')]);
  });

  it('@modelcontextprotocol/server-brave-search 0.6.2: the API key, its "YOUR_API_KEY_HERE" sample not taken as a default', () => {
    expect(discoverEnvVars([], readme('server-brave-search.md'))).toEqual([secret('BRAVE_API_KEY')]);
  });

  it('@modelcontextprotocol/server-everything 2026.8.31: nothing, despite its many config blocks and badge links', () => {
    expect(discoverEnvVars([], readme('server-everything.md'))).toEqual([]);
  });

  it('@modelcontextprotocol/server-slack 2025.4.25: VS Code inputs give descriptions, the variables list marks the optional one', () => {
    expect(discoverEnvVars([], readme('server-slack.md'))).toEqual([
      secret('SLACK_BOT_TOKEN', 'Slack Bot Token (starts with xoxb-)'),
      { name: 'SLACK_TEAM_ID', description: 'Slack Team ID (starts with T)', is_secret: false, optional: false, default_value: '' },
      {
        name: 'SLACK_CHANNEL_IDS',
        description: expect.stringMatching(/^Optional\. Comma-separated list of channel IDs/),
        is_secret: false,
        optional: true,
        default_value: '',
      },
    ]);
  });

  it('@modelcontextprotocol/server-gitlab 2025.4.25: a // comment marks the optional URL, whose sample is a real default', () => {
    expect(discoverEnvVars([], readme('server-gitlab.md'))).toEqual([
      secret('GITLAB_PERSONAL_ACCESS_TOKEN', 'GitLab Personal Access Token'),
      {
        name: 'GITLAB_API_URL',
        description: 'Optional, for self-hosted instances',
        is_secret: false,
        optional: true,
        default_value: 'https://gitlab.com/api/v4',
      },
    ]);
  });

  it('@modelcontextprotocol/server-memory 2026.8.31: a documented default makes the path optional; "/path/to/…" is a sample', () => {
    expect(discoverEnvVars([], readme('server-memory.md'))).toEqual([
      {
        name: 'MEMORY_FILE_PATH',
        description: 'Path to the memory storage JSONL file (default: `memory.jsonl` in the server directory)',
        is_secret: false,
        optional: true,
        default_value: '',
      },
    ]);
  });
});

describe('variable discovery order and merging', () => {
  it('puts registry declarations first, then readme config blocks, then mentions, each filling only what is unsaid', () => {
    const declared = [
      { name: 'WEATHER_API_KEY', description: 'Acme weather API key', isRequired: true, isSecret: true, defaultValue: '' },
      { name: 'WEATHER_UNITS', description: 'metric or imperial', isRequired: false, isSecret: false, defaultValue: 'metric' },
    ];
    expect(discoverEnvVars(declared, readme('acme-weather-mcp.md'))).toEqual([
      secret('WEATHER_API_KEY', 'Acme weather API key'),
      { name: 'WEATHER_UNITS', description: 'metric or imperial', is_secret: false, optional: true, default_value: 'metric' },
      { name: 'WEATHER_CACHE_DIR', description: '', is_secret: false, optional: true, default_value: '/tmp/weather-cache' },
      {
        name: 'WEATHER_TIMEOUT_MS',
        description: 'Request timeout in milliseconds (optional)',
        is_secret: false,
        optional: true,
        default_value: '',
      },
    ]);
  });

  it('finds export lines, inline assignments and reads in code, skipping ambient variables', () => {
    const text = [
      '```bash',
      'export ACME_TOKEN=sk-your-token',
      'PORT=3000 LOG_LEVEL="debug" npx acme-server',
      'export PATH=$PATH:/opt/bin',
      '```',
      'Set `process.env.ACME_REGION` or `os.environ["ACME_ZONE"]`; NODE_ENV is read too: `process.env.NODE_ENV`.',
    ].join('\n');
    expect(discoverEnvVars([], text)).toEqual([
      secret('ACME_TOKEN'),
      { name: 'PORT', description: '', is_secret: false, optional: true, default_value: '3000' },
      { name: 'LOG_LEVEL', description: '', is_secret: false, optional: true, default_value: 'debug' },
      { name: 'ACME_REGION', description: '', is_secret: false, optional: true, default_value: '' },
      { name: 'ACME_ZONE', description: '', is_secret: false, optional: true, default_value: '' },
    ]);
  });

  it('reads Cursor-style bare maps and single server entries, keeping secrets out of defaults', () => {
    const text = [
      '```json',
      '{ "command": "npx", "args": ["x"], "env": { "DB_PASSWORD": "hunter2", "DB_HOST": "localhost", } }',
      '```',
    ].join('\n');
    expect(discoverEnvVars([], text)).toEqual([
      secret('DB_PASSWORD'),
      { name: 'DB_HOST', description: '', is_secret: false, optional: false, default_value: 'localhost' },
    ]);
  });
});

describe('readme helpers', () => {
  it('recognises sample values', () => {
    for (const sample of [
      '<YOUR_TOKEN>',
      'YOUR_API_KEY_HERE',
      'xoxb-your-bot-token',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a VS Code input reference, written as readmes write it
      '${input:token}',
      'T01234567',
      '/path/to/file',
      'sk-...',
      '',
    ]) {
      expect(isPlaceholder(sample), sample).toBe(true);
    }
    for (const real of ['https://gitlab.com/api/v4', 'metric', '3000', '~/notes']) expect(isPlaceholder(real), real).toBe(false);
  });

  it('parses JSON with comments and trailing commas, but leaves // inside strings alone', () => {
    expect(parseLooseJson('{ "url": "https://x.example/a", // the URL\n /* block */ "n": [1, 2,], }')).toEqual({
      url: 'https://x.example/a',
      n: [1, 2],
    });
    expect(parseLooseJson('{ not json')).toBeUndefined();
  });
});
