import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { type Locale, translate } from '../../i18n/index.js';
import { FUSION_DEPTH, fuse, SEMANTIC_CONFIDENCE, type SemanticRanker } from './hybrid-search.js';
import { type SearchableTool, type ToolHit, ToolIndexCache } from './tool-search.js';

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
/** When the best hit matched a third of the query’s words and concepts or less, it is a weak match and the answer says so. */
export const WEAK_COVERAGE = 0.4;

const FOUND_TOOL = {
  type: 'object',
  properties: {
    name: { type: 'string', description: 'The namespaced name to pass to call_tool.' },
    description: { type: 'string' },
    inputSchema: { type: 'object', description: 'JSON Schema of the arguments call_tool passes on.' },
  },
  required: ['name', 'inputSchema'],
} as const;

/** A member of the group as the answer lists it when the search found nothing good: one line each. */
export interface ServiceLine {
  name: string;
  description: string;
}

/** A service in one line: its display name and the first line of its description, cut at 200 characters. */
export function serviceLine(spec: { name: string; displayName: string; description?: string }): string {
  const first = (spec.description ?? '').split('\n')[0]?.trim() ?? '';
  const title = spec.displayName && spec.displayName !== spec.name ? spec.displayName : '';
  const line = [title, first].filter(Boolean).join(': ');
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}

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
          service: {
            anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }],
            description: 'Search only the tools of this service (or these services): the part of a tool name before the separator.',
          },
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
        properties: {
          tools: { type: 'array', items: FOUND_TOOL },
          weak: { type: 'boolean', description: "True when nothing matched the query's words well: the tools, if any, are guesses." },
          note: { type: 'string', description: 'What to do next when nothing matched well.' },
          services: {
            type: 'array',
            description: "The group's services, one line each, when nothing matched well: search again with their words.",
            items: { type: 'object', properties: { name: { type: 'string' }, description: { type: 'string' } }, required: ['name'] },
          },
          mode: { type: 'string', enum: ['lexical', 'hybrid'], description: 'How the tools were ranked.' },
        },
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

export type SearchRequest = { query: string; limit: number; services?: string[] } | { refused: CallToolResult };

/** search_tools' arguments checked against the group's services; a mistake is a tool error the model can correct. */
export function searchRequest(args: unknown, members: readonly string[], locale: Locale = 'en'): SearchRequest {
  const a = (args && typeof args === 'object' ? args : {}) as Record<string, unknown>;
  if (typeof a.query !== 'string' || a.query.trim() === '') return { refused: toolError(translate(locale, 'discovery.query_missing')) };
  if (a.limit !== undefined && (typeof a.limit !== 'number' || !Number.isInteger(a.limit) || a.limit < 1 || a.limit > SEARCH_MAX_LIMIT))
    return { refused: toolError(translate(locale, 'discovery.limit_invalid', { max: SEARCH_MAX_LIMIT, given: JSON.stringify(a.limit) })) };
  const listed = members.join(', ');
  let services: string[] | undefined;
  if (a.service !== undefined) {
    const asked = Array.isArray(a.service) ? a.service : [a.service];
    if (asked.length === 0 || asked.some((x) => typeof x !== 'string'))
      return { refused: toolError(translate(locale, 'discovery.service_invalid', { services: listed })) };
    const unknown = (asked as string[]).find((x) => !members.includes(x));
    if (unknown !== undefined)
      return { refused: toolError(translate(locale, 'discovery.service_unknown', { service: unknown, services: listed })) };
    services = asked as string[];
  }
  // The query is read, not stored: a very long one is cut rather than refused.
  return {
    query: a.query.slice(0, 1000),
    limit: (a.limit as number | undefined) ?? SEARCH_DEFAULT_LIMIT,
    ...(services ? { services } : {}),
  };
}

/** The tools/call params of the tool `call_tool` names, keeping the request's `_meta` (progress token). */
export function unwrapCallTool(
  params: Record<string, unknown>,
  locale: Locale = 'en',
): { params: Record<string, unknown> } | { refused: CallToolResult } {
  const a = (params.arguments && typeof params.arguments === 'object' ? params.arguments : {}) as Record<string, unknown>;
  if (typeof a.name !== 'string' || a.name === '') return { refused: toolError(translate(locale, 'discovery.call_name_missing')) };
  if (a.arguments !== undefined && (typeof a.arguments !== 'object' || a.arguments === null || Array.isArray(a.arguments)))
    return { refused: toolError(translate(locale, 'discovery.call_arguments_invalid', { name: a.name })) };
  return {
    params: {
      ...(params._meta !== undefined ? { _meta: params._meta } : {}),
      name: a.name,
      arguments: a.arguments ?? {},
    },
  };
}

type Listed = SearchableTool & Record<string, unknown>;

/** What one search_tools answer is made of, beside the merged list. */
export interface SearchContext {
  query: string;
  limit: number;
  /** Only the tools of these services. */
  services?: string[];
  separator: string;
  /** The group's services, one line each: what each says of itself is searched too (the service field). */
  members: readonly ServiceLine[];
  locale: Locale;
}

/**
 * Rankers of the groups' merged lists: the lexical index, one per list (rebuilt when the list
 * changes), fused with the semantic ranking when an embeddings provider is set and answers in time.
 */
export class DiscoverySearch {
  readonly indexes = new ToolIndexCache<Listed>();

  constructor(private readonly semantic?: SemanticRanker) {}

  /** The answer as the JSON of a CallToolResult, ready to send (searchAnswerJson). */
  async answer(tools: readonly Listed[], ctx: SearchContext): Promise<string> {
    const about = new Map(ctx.members.map((m) => [m.name, m.description]));
    const only = ctx.services && new Set(ctx.services);
    const keep = (tool: Listed) => !only || only.has(tool.name.slice(0, tool.name.indexOf(ctx.separator)));
    const index = this.indexes.get(tools, { separator: ctx.separator, services: about });
    const lexical = index.search(ctx.query, this.semantic ? FUSION_DEPTH : ctx.limit, only && keep);
    // Whether the query's own words found anything good, whatever the fusion adds.
    const weak = !lexical[0] || lexical[0].coverage < WEAK_COVERAGE;
    const ranking = this.semantic ? await this.semantic.rank(tools, ctx.query) : undefined;
    if (!ranking || 'unavailable' in ranking || ranking.confidence < SEMANTIC_CONFIDENCE)
      return searchAnswerJson(lexical.slice(0, ctx.limit), ctx, 'lexical', weak);
    const hits = fuse(tools, lexical, ranking.order, keep, ctx.limit);
    return searchAnswerJson(hits, ctx, 'hybrid', weak);
  }
}

/** A hit as the answer carries it: the namespaced name, the description and the input schema. */
function foundTool(tool: Listed): { name: string; description: string; inputSchema: object } {
  return {
    name: tool.name,
    description: typeof tool.description === 'string' ? tool.description : '',
    inputSchema: tool.inputSchema && typeof tool.inputSchema === 'object' ? tool.inputSchema : { type: 'object' },
  };
}

/**
 * Each listed tool's hit, serialised once: the merged lists are cached and their tools never change in
 * place (group-face.ts builds a new list on every change), so a tool found again reuses its JSON.
 */
const hitJson = new WeakMap<Listed, string>();
function foundJson(tool: Listed): string {
  let json = hitJson.get(tool);
  if (json === undefined) {
    json = JSON.stringify(foundTool(tool));
    hitJson.set(tool, json);
  }
  return json;
}

/**
 * The answer an agent can act on: each hit's namespaced name, description and input schema; when
 * nothing or nothing good matched, it says so and lists the group's services, one line each, so the
 * agent can search again in their words or narrow the search to one of them. The structured answer
 * travels twice (as `structuredContent` and, for clients without structured output, as the text
 * block): it is serialised once, from the hits' own serialised parts, and the text is that string.
 * Serialises exactly as `JSON.stringify` of the CallToolResult would.
 */
export function searchAnswerJson(hits: readonly ToolHit<Listed>[], ctx: SearchContext, mode: 'lexical' | 'hybrid', weak: boolean): string {
  let structured = `{"tools":[${hits.map(({ tool }) => foundJson(tool)).join(',')}],"mode":${JSON.stringify(mode)}`;
  if (weak) {
    const note = translate(ctx.locale, hits.length === 0 ? 'discovery.nothing_found' : 'discovery.weak_match', { query: ctx.query });
    structured += `,"weak":true,"note":${JSON.stringify(note)},"services":${JSON.stringify(ctx.members)}`;
  }
  structured += '}';
  return `{"content":[{"type":"text","text":${JSON.stringify(structured)}}],"structuredContent":${structured}}`;
}
