import { describe, expect, it } from 'vitest';
import { DiscoverySearch, type SearchContext, searchAnswerJson } from './group-discovery.js';

/** The answer as it was built before it was serialised from parts: JSON.stringify of the whole CallToolResult. */
function reference(
  tools: { name: string; description?: unknown; inputSchema?: unknown }[],
  ctx: SearchContext,
  mode: string,
  weak: boolean,
  note?: string,
) {
  const structured = {
    tools: tools.map((t) => ({
      name: t.name,
      description: typeof t.description === 'string' ? t.description : '',
      inputSchema: t.inputSchema && typeof t.inputSchema === 'object' ? t.inputSchema : { type: 'object' },
    })),
    mode,
    ...(weak ? { weak: true, note, services: ctx.members } : {}),
  };
  return JSON.stringify({ content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured });
}

const ctx = (query: string): SearchContext => ({
  query,
  limit: 5,
  separator: '__',
  members: [
    { name: 'files', description: 'Files: "quoted", a\nnew line' },
    { name: 'git', description: '' },
  ],
  locale: 'en',
});

// Strings JSON must escape: quotes, backslashes, control characters, line separators, lone surrogates, markup.
const awkward = 'Say "hi" \\ back\n\ttab \u2028 \u0001 \ud800 </script> 读取文件';
const tools = [
  {
    name: 'files__read_file',
    description: `Read a file. ${awkward}`,
    inputSchema: { type: 'object', properties: { path: { type: 'string', description: awkward } }, required: ['path'] },
  },
  { name: 'files__list', description: 42, inputSchema: 'not a schema' },
  { name: 'git__commit', inputSchema: { type: 'object', properties: { message: { type: 'string' } } } },
];

describe('search_tools answers, serialised from parts', () => {
  it('serialise exactly as JSON.stringify of the whole answer, with and without the weak note', () => {
    const hits = tools.map((tool, i) => ({ tool, score: 3 - i, coverage: 1 }));
    expect(searchAnswerJson(hits, ctx('read file'), 'lexical', false)).toBe(reference(tools, ctx('read file'), 'lexical', false));
    const weak = searchAnswerJson(hits.slice(0, 1), ctx(`x "${awkward}"`), 'hybrid', true);
    const note = (JSON.parse(weak) as { structuredContent: { note: string } }).structuredContent.note;
    expect(note).toContain(awkward);
    expect(weak).toBe(reference(tools.slice(0, 1), ctx(`x "${awkward}"`), 'hybrid', true, note));
    const none = searchAnswerJson([], ctx('nothing'), 'lexical', true);
    const nothing = (JSON.parse(none) as { structuredContent: { note: string } }).structuredContent.note;
    expect(none).toBe(reference([], ctx('nothing'), 'lexical', true, nothing));
    expect(nothing).not.toBe(note);
  });

  it('carry the same answer as text and as structured content', () => {
    const answer = JSON.parse(
      searchAnswerJson([{ tool: tools[0] as (typeof tools)[0], score: 1, coverage: 1 }], ctx('read'), 'lexical', false),
    );
    expect(JSON.parse(answer.content[0].text)).toEqual(answer.structuredContent);
    expect(answer.structuredContent.tools[0].inputSchema.properties.path.description).toBe(awkward);
  });

  it('never answer an earlier list’s words for a tool of a changed list', async () => {
    const search = new DiscoverySearch();
    const context = { ...ctx('read file'), members: [] };
    const first = JSON.parse(await search.answer(tools, context)).structuredContent.tools;
    expect(first[0]).toMatchObject({ name: 'files__read_file', description: `Read a file. ${awkward}` });
    // A change of the group builds a new merged list of new objects: the answer follows it.
    const changed = tools.map((t) =>
      t.name === 'files__read_file' ? { ...t, description: 'Read a file, now in other words.' } : { ...t },
    );
    const again = JSON.parse(await search.answer(changed, context)).structuredContent.tools;
    expect(again[0]).toEqual({
      name: 'files__read_file',
      description: 'Read a file, now in other words.',
      inputSchema: tools[0]?.inputSchema,
    });
  });
});
