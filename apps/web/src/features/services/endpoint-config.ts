/** What the configuration dialog shows and copies (docs/console.md §2.6): endpoint URLs and client configs. */

export type EndpointType = 'streamableHttp' | 'sse';
export const DEFAULT_ENDPOINT_TYPE: EndpointType = 'streamableHttp';

/** The gateway's public address: the server address preference, else the console's own origin; no trailing slash. */
export const gatewayHost = (serverAddress: string | undefined, origin: string): string =>
  (serverAddress?.trim() || origin).replace(/\/+$/, '');

/** `{host}/proxy/{name}/mcp` for streamable HTTP, `{host}/proxy/{name}/sse` for SSE. */
export const endpointUrl = (host: string, name: string, type: EndpointType): string =>
  `${host}/proxy/${encodeURIComponent(name)}/${type === 'sse' ? 'sse' : 'mcp'}`;

/**
 * The OpenAPI face of a service (`proxy`) or group (decision 0053): `{host}/openapi/{kind}/{name}`, the
 * server URL its operations are relative to (what Open WebUI and mcpo clients are given), with the
 * document at `/openapi.json` below it.
 */
export const openApiUrl = (host: string, kind: 'proxy' | 'group', name: string): string =>
  `${host}/openapi/${kind}/${encodeURIComponent(name)}`;

/**
 * Open WebUI's tool server connection for the OpenAPI face: one entry of its TOOL_SERVER_CONNECTIONS
 * setting, the same fields its Add Connection form asks for (URL, path of the document, bearer key).
 */
export function openWebUiConnection(url: string, token: string | undefined): string {
  return pretty([
    {
      type: 'openapi',
      url,
      path: 'openapi.json',
      auth_type: token ? 'bearer' : 'none',
      key: token ?? '',
      config: { enable: true },
    },
  ]);
}

/** The header line the dialog offers for SSE clients that take headers as KEY=VALUE. */
export const authorizationHeaderText = (token: string): string => `Authorization=Bearer ${token}`;

/** The URL with the key as a query parameter, for clients that cannot send headers. */
export const urlWithKey = (url: string, token: string | undefined): string => (token ? `${url}?key=${encodeURIComponent(token)}` : url);

const bearer = (token: string | undefined) => (token ? { headers: { Authorization: `Bearer ${token}` } } : {});

const pretty = (value: unknown): string => JSON.stringify(value, null, 2);

/** The dialog's own config box: an `mcpServers` entry of the chosen type, with the bearer header when there is a key. */
export function mcpServersConfig(name: string, url: string, type: EndpointType, token: string | undefined): string {
  return pretty({ mcpServers: { [name]: { type, url, ...bearer(token) } } });
}

export type ClientId = 'claudeDesktop' | 'cursor' | 'vscode' | 'claudeCode' | 'windsurf' | 'cherryStudio';
export const clientIds: readonly ClientId[] = ['claudeDesktop', 'cursor', 'vscode', 'claudeCode', 'windsurf', 'cherryStudio'];

export interface ClientSnippet {
  client: ClientId;
  /** 'json' goes into the client's configuration file; 'shell' is a command to run. */
  kind: 'json' | 'shell';
  text: string;
}

/** A shell word in double quotes; keys and URLs hold no quotes, but a name might. */
const shellQuote = (word: string): string => (/^[\w@%+=:,./-]+$/.test(word) ? word : `"${word.replace(/(["\\$`])/g, '\\$1')}"`);

/** mcp-remote's own placeholder: it substitutes the environment variable into the header itself. */
const AUTH_HEADER_ARG = ['Authorization:$', '{AUTH_HEADER}'].join('');

/** mcp-remote refuses a plain-http address other than localhost unless told `--allow-http`. */
const isPlainHttp = (url: string): boolean => /^http:\/\//i.test(url);

/**
 * Ready configurations for common MCP clients, for the chosen endpoint. Claude Desktop speaks only stdio,
 * so it reaches the gateway through `mcp-remote`. The key travels in a header taken from an environment
 * variable, never in the URL: mcp-remote logs the full URL, and the `${AUTH_HEADER}` form keeps the space of
 * "Bearer <key>" out of the args, which some platforms split.
 */
export function clientSnippet(client: ClientId, name: string, url: string, type: EndpointType, token: string | undefined): ClientSnippet {
  switch (client) {
    case 'claudeDesktop': {
      const args = [
        '-y',
        'mcp-remote',
        url,
        ...(type === 'sse' ? ['--transport', 'sse-only'] : []),
        ...(isPlainHttp(url) ? ['--allow-http'] : []),
        ...(token ? ['--header', AUTH_HEADER_ARG] : []),
      ];
      const env = token ? { env: { AUTH_HEADER: `Bearer ${token}` } } : {};
      return { client, kind: 'json', text: pretty({ mcpServers: { [name]: { command: 'npx', args, ...env } } }) };
    }
    case 'cursor':
      return { client, kind: 'json', text: pretty({ mcpServers: { [name]: { url, ...bearer(token) } } }) };
    case 'vscode':
      return {
        client,
        kind: 'json',
        text: pretty({ servers: { [name]: { type: type === 'sse' ? 'sse' : 'http', url, ...bearer(token) } } }),
      };
    case 'claudeCode': {
      const header = token ? ` --header ${shellQuote(`Authorization: Bearer ${token}`)}` : '';
      const transport = type === 'sse' ? 'sse' : 'http';
      return { client, kind: 'shell', text: `claude mcp add --transport ${transport} ${shellQuote(name)} ${shellQuote(url)}${header}` };
    }
    case 'windsurf':
      // Windsurf's mcp_config.json names the remote address `serverUrl`.
      return { client, kind: 'json', text: pretty({ mcpServers: { [name]: { serverUrl: url, ...bearer(token) } } }) };
    case 'cherryStudio':
      return {
        client,
        kind: 'json',
        text: pretty({ mcpServers: { [name]: { type, name, baseUrl: url, isActive: true, ...bearer(token) } } }),
      };
  }
}
