import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { type SearchableTool, ToolIndexCache } from './tool-search.js';

/**
 * Discovery mode of a group (issue 17, item 2; docs/decisions/0033): instead of every member tool,
 * `tools/list` offers two meta-tools. `search_tools` ranks the group's merged tool list (the list an
 * `all` group would show) with the lexical ranker of tool-search.ts; `call_tool` is unwrapped into
 * the `tools/call` of the namespaced tool and takes the very path a direct call takes in `all` mode.
 */
export const SEARCH_TOOLS = 'search_tools';
export const CALL_TOOL = 'call_tool';
export const SEARCH_DEFAULT_LIMIT = 5;
export const SEARCH_MAX_LIMIT = 20;

const FOUND_TOOL = {
  type: 'object',
  properties: {
    name: { type: 'string', description: 'The namespaced name to pass to call_tool.' },
    description: { type: 'string' },
    inputSchema: { type: 'object', description: 'JSON Schema of the arguments call_tool passes on.' },
  },
  required: ['name', 'inputSchema'],
} as const;

/** The two tools a discovery group lists. */
export function discoveryTools(groupTitle: string): Tool[] {
  return [
    {
      name: SEARCH_TOOLS,
      title: 'Search tools',
      description:
        `Search the tools of ${groupTitle} by what they do. Answers the best matching tools, best first, ` +
        'each with its name, description and input schema. Then call one with call_tool. ' +
        'Queries may be in English or Chinese; use a few keywords (for example "read file", "git commit", "查询余票").',
      inputSchema: {
        type: 'object',
        properties: {
          query: { type: 'string', description: 'What the tool should do, in a few words.' },
          limit: {
            type: 'integer',
            minimum: 1,
            maximum: SEARCH_MAX_LIMIT,
            description: `How many tools to answer at most (default ${SEARCH_DEFAULT_LIMIT}).`,
          },
        },
        required: ['query'],
      },
      outputSchema: {
        type: 'object',
        properties: { tools: { type: 'array', items: FOUND_TOOL } },
        required: ['tools'],
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    {
      name: CALL_TOOL,
      title: 'Call a tool',
      description:
        `Call one of the tools of ${groupTitle} by the name search_tools gave, with arguments that follow ` +
        'its input schema. Answers exactly what that tool answers.',
      inputSchema: {
        type: 'object',
        properties: {
          name: { type: 'string', description: 'The tool name as search_tools gave it.' },
          arguments: { type: 'object', description: "The tool's arguments, following its input schema.", additionalProperties: true },
        },
        required: ['name'],
      },
    },
  ];
}

/** A tool call's own mistake, told to the model as a tool error it can correct (not a protocol error). */
export function toolError(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

export type SearchRequest = { query: string; limit: number } | { refused: CallToolResult };

export function searchRequest(args: unknown): SearchRequest {
  const a = (args && typeof args === 'object' ? args : {}) as Record<string, unknown>;
  if (typeof a.query !== 'string' || a.query.trim() === '')
    return { refused: toolError('search_tools needs a "query": a few words saying what the tool should do.') };
  if (a.limit !== undefined && (typeof a.limit !== 'number' || !Number.isFinite(a.limit) || a.limit < 1))
    return { refused: toolError(`"limit" must be a number from 1 to ${SEARCH_MAX_LIMIT}.`) };
  const limit = a.limit === undefined ? SEARCH_DEFAULT_LIMIT : Math.min(SEARCH_MAX_LIMIT, Math.floor(a.limit as number));
  // The query is read, not stored: a very long one is cut rather than refused.
  return { query: a.query.slice(0, 1000), limit };
}

/** The tools/call params of the tool `call_tool` names, keeping the request's `_meta` (progress token). */
export function unwrapCallTool(params: Record<string, unknown>): { params: Record<string, unknown> } | { refused: CallToolResult } {
  const a = (params.arguments && typeof params.arguments === 'object' ? params.arguments : {}) as Record<string, unknown>;
  if (typeof a.name !== 'string' || a.name === '')
    return { refused: toolError('call_tool needs a "name": the tool name as search_tools gave it.') };
  if (a.arguments !== undefined && (typeof a.arguments !== 'object' || a.arguments === null || Array.isArray(a.arguments)))
    return { refused: toolError(`"arguments" of call_tool must be an object (the arguments of ${a.name}).`) };
  return {
    params: {
      ...(params._meta !== undefined ? { _meta: params._meta } : {}),
      name: a.name,
      arguments: a.arguments ?? {},
    },
  };
}

/** Rankers of the groups' merged lists, one index per list (rebuilt when the list changes). */
export class DiscoverySearch {
  readonly indexes = new ToolIndexCache<SearchableTool & Record<string, unknown>>();

  answer(tools: readonly (SearchableTool & Record<string, unknown>)[], query: string, limit: number): CallToolResult {
    const found = this.indexes
      .get(tools)
      .search(query, limit)
      .map(({ tool }) => ({
        name: tool.name,
        description: typeof tool.description === 'string' ? tool.description : '',
        inputSchema: tool.inputSchema && typeof tool.inputSchema === 'object' ? tool.inputSchema : { type: 'object' },
      }));
    const structured = { tools: found };
    return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
  }
}
