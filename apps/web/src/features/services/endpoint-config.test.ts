import { describe, expect, it } from 'vitest';
import {
  authorizationHeaderText,
  clientSnippet,
  DEFAULT_ENDPOINT_TYPE,
  endpointUrl,
  gatewayHost,
  mcpServersConfig,
  openApiUrl,
  openWebUiConnection,
  urlWithKey,
} from './endpoint-config';

const KEY = 'tp_key123';

describe('endpoints (docs/console.md §2.6)', () => {
  it('defaults to streamable HTTP', () => {
    expect(DEFAULT_ENDPOINT_TYPE).toBe('streamableHttp');
  });

  it('uses the server address, else the console origin, without a trailing slash', () => {
    expect(gatewayHost('https://gw.example.com/', 'http://localhost:5173')).toBe('https://gw.example.com');
    expect(gatewayHost('', 'http://localhost:5173')).toBe('http://localhost:5173');
    expect(gatewayHost(undefined, 'http://localhost:5173/')).toBe('http://localhost:5173');
  });

  it('puts the OpenAPI face at {host}/openapi/{proxy|group}/{name}, and Open WebUI without a key gets no auth', () => {
    expect(openApiUrl('https://gw.test', 'proxy', 'a b')).toBe('https://gw.test/openapi/proxy/a%20b');
    expect(openApiUrl('https://gw.test', 'group', 'team')).toBe('https://gw.test/openapi/group/team');
    expect(JSON.parse(openWebUiConnection('https://gw.test/openapi/group/team', undefined))).toEqual([
      {
        type: 'openapi',
        url: 'https://gw.test/openapi/group/team',
        path: 'openapi.json',
        auth_type: 'none',
        key: '',
        config: { enable: true },
      },
    ]);
  });

  it('is {host}/proxy/{name}/mcp or /sse', () => {
    expect(endpointUrl('https://gw.test', 'everything', 'streamableHttp')).toBe('https://gw.test/proxy/everything/mcp');
    expect(endpointUrl('https://gw.test', 'everything', 'sse')).toBe('https://gw.test/proxy/everything/sse');
  });

  it('offers the header as Authorization=Bearer {token} and the key as a query parameter', () => {
    expect(authorizationHeaderText(KEY)).toBe('Authorization=Bearer tp_key123');
    expect(urlWithKey('https://gw.test/proxy/a/mcp', KEY)).toBe('https://gw.test/proxy/a/mcp?key=tp_key123');
    expect(urlWithKey('https://gw.test/proxy/a/mcp', undefined)).toBe('https://gw.test/proxy/a/mcp');
  });

  it('builds the config JSON with the bearer header only when there is a key', () => {
    expect(JSON.parse(mcpServersConfig('a', 'https://gw.test/proxy/a/sse', 'sse', KEY))).toEqual({
      mcpServers: { a: { type: 'sse', url: 'https://gw.test/proxy/a/sse', headers: { Authorization: 'Bearer tp_key123' } } },
    });
    expect(JSON.parse(mcpServersConfig('a', 'https://gw.test/proxy/a/mcp', 'streamableHttp', undefined))).toEqual({
      mcpServers: { a: { type: 'streamableHttp', url: 'https://gw.test/proxy/a/mcp' } },
    });
  });
});

describe('client snippets', () => {
  const url = 'https://gw.test/proxy/everything/mcp';

  it('Claude Desktop goes through mcp-remote with the key in a header from an environment variable', () => {
    const snippet = clientSnippet('claudeDesktop', 'everything', url, 'streamableHttp', KEY);
    expect(JSON.parse(snippet.text).mcpServers.everything).toEqual({
      command: 'npx',
      args: ['-y', 'mcp-remote', url, '--header', 'Authorization:$' + '{AUTH_HEADER}'],
      env: { AUTH_HEADER: 'Bearer tp_key123' },
    });
    // The key appears once, in env, and never in the URL mcp-remote logs.
    expect(snippet.text.split('tp_key123')).toHaveLength(2);
    const sse = JSON.parse(clientSnippet('claudeDesktop', 'everything', 'https://gw.test/proxy/everything/sse', 'sse', KEY).text);
    expect(sse.mcpServers.everything.args).toContain('sse-only');
    expect(sse.mcpServers.everything.args).not.toContain('--allow-http');
  });

  it('Claude Desktop adds --allow-http only for a plain-http address, and no header without a key', () => {
    const plain = JSON.parse(
      clientSnippet('claudeDesktop', 'everything', 'http://10.0.0.5:3000/proxy/everything/mcp', 'streamableHttp', undefined).text,
    );
    expect(plain.mcpServers.everything).toEqual({
      command: 'npx',
      args: ['-y', 'mcp-remote', 'http://10.0.0.5:3000/proxy/everything/mcp', '--allow-http'],
    });
  });

  it('Windsurf takes serverUrl and headers', () => {
    expect(JSON.parse(clientSnippet('windsurf', 'everything', url, 'streamableHttp', KEY).text)).toEqual({
      mcpServers: { everything: { serverUrl: url, headers: { Authorization: 'Bearer tp_key123' } } },
    });
  });

  it('Cursor takes url and headers', () => {
    expect(JSON.parse(clientSnippet('cursor', 'everything', url, 'streamableHttp', KEY).text)).toEqual({
      mcpServers: { everything: { url, headers: { Authorization: 'Bearer tp_key123' } } },
    });
  });

  it('VS Code uses `servers` with type http (or sse)', () => {
    expect(JSON.parse(clientSnippet('vscode', 'everything', url, 'streamableHttp', KEY).text)).toEqual({
      servers: { everything: { type: 'http', url, headers: { Authorization: 'Bearer tp_key123' } } },
    });
    expect(JSON.parse(clientSnippet('vscode', 'everything', url, 'sse', undefined).text).servers.everything).toEqual({ type: 'sse', url });
  });

  it('Claude Code is a claude mcp add command with the header', () => {
    const snippet = clientSnippet('claudeCode', 'everything', url, 'streamableHttp', KEY);
    expect(snippet.kind).toBe('shell');
    expect(snippet.text).toBe(`claude mcp add --transport http everything ${url} --header "Authorization: Bearer tp_key123"`);
    expect(clientSnippet('claudeCode', 'my tool', url, 'sse', undefined).text).toBe(`claude mcp add --transport sse "my tool" ${url}`);
  });

  it('Cherry Studio takes type, baseUrl and headers', () => {
    expect(JSON.parse(clientSnippet('cherryStudio', 'everything', url, 'streamableHttp', KEY).text).mcpServers.everything).toEqual({
      type: 'streamableHttp',
      name: 'everything',
      baseUrl: url,
      isActive: true,
      headers: { Authorization: 'Bearer tp_key123' },
    });
  });
});
