import type { EndpointType } from '../services';

/** `{host}/group/{name}/mcp` for streamable HTTP, `{host}/group/{name}/sse` for SSE (docs/console.md §2.9b). */
export const groupEndpointUrl = (host: string, name: string, type: EndpointType): string =>
  `${host}/group/${encodeURIComponent(name)}/${type === 'sse' ? 'sse' : 'mcp'}`;
