import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BatchFormatError, parseBatchConfig, repeatedKeys } from './config.js';

const fixture = (name: string): unknown =>
  JSON.parse(readFileSync(new URL(`../../../../test/fixtures/batch-import/${name}`, import.meta.url), 'utf8'));

describe('batch import configurations', () => {
  it('reads Claude Desktop: commands, arguments and variables', () => {
    expect(parseBatchConfig(fixture('claude-desktop.json'))).toEqual([
      {
        name: 'filesystem',
        displayName: 'filesystem',
        description: '',
        isolation: 'shared',
        kind: 'stdio',
        command: 'npx',
        args: ['-y', '@modelcontextprotocol/server-filesystem', '/Users/me/Desktop', '/Users/me/Downloads'],
        env: {},
        masked: [],
      },
      {
        name: 'fetch',
        displayName: 'fetch',
        description: '',
        isolation: 'shared',
        kind: 'stdio',
        command: 'uvx',
        args: ['mcp-server-fetch'],
        env: {},
        masked: [],
      },
      {
        name: 'github',
        displayName: 'github',
        description: '',
        isolation: 'shared',
        kind: 'stdio',
        command: 'npx',
        args: ['-y', '@modelcontextprotocol/server-github'],
        env: { GITHUB_PERSONAL_ACCESS_TOKEN: 'ghp_exampleexampleexample' },
        masked: [],
      },
    ]);
  });

  it("reads Toolport's own isolation key per server, and fails an entry with another value", () => {
    const [session, remote, shared, wrong] = parseBatchConfig({
      mcpServers: {
        a: { command: 'node', args: ['a.js'], isolation: 'session' },
        b: { url: 'https://mcp.example.com/mcp', isolation: 'session' },
        c: { command: 'node', args: ['c.js'], isolation: 'shared' },
        d: { command: 'node', args: ['d.js'], isolation: 'per-user' },
      },
    });
    expect(session).toMatchObject({ name: 'a', kind: 'stdio', isolation: 'session' });
    expect(remote).toMatchObject({ name: 'b', kind: 'remote', isolation: 'session' });
    expect(shared).toMatchObject({ name: 'c', kind: 'stdio', isolation: 'shared' });
    expect(wrong).toMatchObject({ name: 'd', kind: 'invalid', problem: '"isolation" must be "shared" or "session"' });
  });

  it('leaves out values an export masked and names them', () => {
    const [stdio, remote] = parseBatchConfig({
      mcpServers: {
        a: { command: 'npx', args: ['-y', 'x'], env: { KEY: '********', DIR: '/tmp' } },
        b: { url: 'https://example.com/mcp', headers: { Authorization: '********' } },
      },
    });
    expect(stdio).toMatchObject({ kind: 'stdio', env: { DIR: '/tmp' }, masked: ['KEY'] });
    expect(remote).toMatchObject({ kind: 'remote', headers: {}, masked: ['Authorization'] });
  });

  it('reads Cursor: a bare url is streamable HTTP unless its path ends in /sse', () => {
    const [, docs, events] = parseBatchConfig(fixture('cursor.json'));
    expect(docs).toMatchObject({
      name: 'remote-docs',
      kind: 'remote',
      transport: 'streamableHttp',
      headers: { 'X-Api-Key': 'YOUR_API_KEY' },
    });
    expect(events).toMatchObject({ name: 'legacy-events', kind: 'remote', transport: 'sse', url: 'http://127.0.0.1:8080/sse' });
  });

  it('reads Cherry Studio: baseUrl, the name field, and refuses its built-in servers', () => {
    const [everything, qcc, builtin] = parseBatchConfig(fixture('cherry-studio.json'));
    expect(everything).toMatchObject({ name: 'server-everything', displayName: 'server-everything', kind: 'stdio', command: 'npx' });
    expect(everything?.description).toBe('Exercises every feature of the protocol');
    expect(qcc).toMatchObject({
      name: 'QvC5kx2lTsTuSbaeEIkVG',
      displayName: '企查查企业信息 MCP',
      kind: 'remote',
      transport: 'streamableHttp',
      url: 'https://mcp.qcc.com/basic/stream',
    });
    expect(builtin).toMatchObject({ kind: 'invalid', problem: expect.stringContaining('built-in Cherry Studio server') });
  });

  it('reads VS Code: servers, type http, and refuses input variables only VS Code can fill in', () => {
    const [perplexity, github, fetch] = parseBatchConfig(fixture('vscode.json'));
    expect(perplexity).toMatchObject({ name: 'Perplexity', kind: 'invalid', problem: expect.stringContaining(`\${input:perplexity-key}`) });
    expect(github).toMatchObject({ kind: 'remote', transport: 'streamableHttp', url: 'https://api.githubcopilot.com/mcp/' });
    expect(fetch).toMatchObject({ kind: 'stdio', command: 'uvx' });
    const settings = parseBatchConfig({ mcp: { servers: { a: { command: 'uvx', args: ['x'] } } } });
    expect(settings).toMatchObject([{ name: 'a', kind: 'stdio' }]);
  });

  it('reads a bare map, the other type spellings and header lines', () => {
    const entries = parseBatchConfig({
      one: { command: '/usr/bin/env', args: ['node', 7] },
      two: { type: 'streamable-http', url: 'https://a.example/mcp', headers: ['Authorization: Bearer x', 'junk'] },
      three: { type: 'SSE', serverUrl: 'https://b.example/events' },
    });
    expect(entries).toMatchObject([
      { name: 'one', kind: 'stdio', args: ['node', '7'] },
      { name: 'two', kind: 'remote', transport: 'streamableHttp', headers: { Authorization: 'Bearer x' } },
      { name: 'three', kind: 'remote', transport: 'sse', url: 'https://b.example/events' },
    ]);
  });

  it('reports entries that cannot be imported and keeps the rest', () => {
    const entries = parseBatchConfig({
      mcpServers: {
        'no-command': { env: { A: '1' } },
        'bad type': { type: 'websocket', url: 'ws://x' },
        'remote-without-url': { type: 'sse' },
        ok: { command: 'npx', args: ['pkg'] },
        'not-an-object': 'npx pkg',
      },
    });
    expect(entries.map((e) => [e.name, e.kind])).toEqual([
      ['no-command', 'invalid'],
      ['bad-type', 'invalid'],
      ['remote-without-url', 'invalid'],
      ['ok', 'stdio'],
      ['not-an-object', 'invalid'],
    ]);
  });

  it('refuses documents that are not a configuration, empty ones and huge ones', () => {
    const reason = (doc: unknown) => {
      try {
        parseBatchConfig(doc);
        return 'parsed';
      } catch (err) {
        return err instanceof BatchFormatError ? err.reason : String(err);
      }
    };
    expect(reason([1, 2])).toBe('not_a_config');
    expect(reason({ hello: 'world' })).toBe('not_a_config');
    expect(reason({ command: 'npx', args: [] })).toBe('not_a_config');
    expect(reason({ mcpServers: {} })).toBe('empty');
    const many = Object.fromEntries(Array.from({ length: 201 }, (_, i) => [`s${i}`, { command: 'npx', args: ['p'] }]));
    expect(reason({ mcpServers: many })).toBe('too_many');
  });

  it('finds keys a JSON text repeats within one object, with where that object is', () => {
    const text = `{
      "mcpServers": {
        "a": { "command": "npx", "env": { "K": "1", "K": "2" } },
        "b\\"q": { "url": "http://x/{\\"a\\":1}", "args": [{ "a": 1 }, { "a": 2 }] },
        "a": { "command": "uvx" }
      },
      "mcpServers": {}
    }`;
    expect(repeatedKeys(text)).toEqual([
      { at: ['mcpServers', 'a', 'env'], key: 'K' },
      { at: ['mcpServers'], key: 'a' },
      { at: [], key: 'mcpServers' },
    ]);
    expect(repeatedKeys('{"mcpServers":{"a":{"command":"x"},"b":{"command":"y"}}}')).toEqual([]);
  });

  it('refuses a server name given twice, and only at the level of the servers', () => {
    const doc = (text: string) => {
      try {
        parseBatchConfig(JSON.parse(text), repeatedKeys(text));
        return 'parsed';
      } catch (err) {
        return err instanceof BatchFormatError ? `${err.reason}:${err.key}` : String(err);
      }
    };
    expect(doc('{"mcpServers":{"a":{"command":"x"},"a":{"command":"y"}}}')).toBe('duplicate_key:a');
    expect(doc('{"servers":{"s":{"url":"http://h/mcp"},"s":{"url":"http://h/mcp"}}}')).toBe('duplicate_key:s');
    expect(doc('{"mcp":{"servers":{"s":{"url":"http://h"},"s":{"url":"http://h"}}}}')).toBe('duplicate_key:s');
    expect(doc('{"a":{"command":"x"},"a":{"command":"y"}}')).toBe('duplicate_key:a');
    // A repeated variable inside one entry is the client's own business, not a lost server.
    expect(doc('{"mcpServers":{"a":{"command":"x","env":{"K":"1","K":"2"}}}}')).toBe('parsed');
  });
});
