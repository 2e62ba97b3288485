import { describe, expect, it } from 'vitest';
import { normaliseTools, ToolListNormaliser } from './tool-schema.js';

describe('normaliseTools', () => {
  it('keeps a valid tool as the very same object', () => {
    const tool = { name: 'echo', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } };
    const { tools, notes } = normaliseTools([tool]);
    expect(tools[0]).toBe(tool);
    expect(notes).toEqual([]);
  });

  it('repairs what it can without changing what the tool takes', () => {
    const { tools, notes } = normaliseTools([
      { name: 'whoami', description: 'Identify the authenticated user in Sentry.', inputSchema: {} },
      { name: 'flags', inputSchema: { type: 'object', properties: { on: true, off: false }, required: ['on', 3] } },
      { name: 'bare' },
      { name: 'listy', inputSchema: { type: 'object' }, outputSchema: { type: 'array' }, title: 7, annotations: 'x' },
    ]);
    expect(tools).toEqual([
      { name: 'whoami', description: 'Identify the authenticated user in Sentry.', inputSchema: { type: 'object' } },
      { name: 'flags', inputSchema: { type: 'object', properties: { on: {}, off: { not: {} } }, required: ['on'] } },
      { name: 'bare', inputSchema: { type: 'object' } },
      { name: 'listy', inputSchema: { type: 'object' } },
    ]);
    expect(notes.map((n) => `${n.tool}: ${n.reason}`)).toEqual([
      'whoami: input schema had no type: taken as an object',
      'flags: input schema property "on" was true: written as an object schema',
      'flags: input schema property "off" was false: written as an object schema',
      'flags: input schema "required" was not a list of names: kept its names only',
      'bare: it had no input schema: takes an object',
      'listy: title was not valid: left out',
      'listy: annotations was not valid: left out',
      'listy: output schema is of type "array", where MCP asks for an object: output schema left out',
    ]);
    expect(notes.every((n) => n.action === 'repaired')).toBe(true);
  });

  it('leaves out what it cannot repair, and nothing else', () => {
    const { tools, notes } = normaliseTools([
      { name: 'text', inputSchema: { type: 'string' } },
      { name: 'odd', inputSchema: { type: 'object', properties: [1, 2] } },
      { name: 'odder', inputSchema: { type: 'object', properties: { a: 'string' } } },
      { description: 'nameless' },
      'not a tool',
      { name: 'fine', inputSchema: { type: 'object' } },
    ]);
    expect(tools.map((t) => t.name)).toEqual(['fine']);
    expect(notes.map((n) => `${n.action} ${n.tool}: ${n.reason}`)).toEqual([
      'dropped text: input schema is of type "string", where MCP asks for an object',
      'dropped odd: input schema has properties that are not an object',
      'dropped odder: input schema property "a" is not a schema',
      'dropped (unnamed): it has no name',
      'dropped (unnamed): it has no name',
    ]);
  });
});

describe('ToolListNormaliser', () => {
  it('rewrites only answers that need it, and tells each note once per service', () => {
    const told: string[] = [];
    const normaliser = new ToolListNormaliser((service, note) => told.push(`${service.name} ${note.tool}`));
    const good = { jsonrpc: '2.0', id: 1, result: { tools: [{ name: 'a', inputSchema: { type: 'object' } }] } };
    expect(normaliser.apply({ id: 1, name: 's' }, good)).toBe(good);
    const bad = { jsonrpc: '2.0', id: 2, result: { tools: [{ name: 'b', inputSchema: {} }], nextCursor: 'c' } };
    for (let i = 0; i < 3; i++)
      expect(normaliser.apply({ id: 1, name: 's' }, bad)).toEqual({
        ...bad,
        result: { tools: [{ name: 'b', inputSchema: { type: 'object' } }], nextCursor: 'c' },
      });
    normaliser.apply({ id: 2, name: 't' }, bad);
    expect(told).toEqual(['s b', 't b']);
    const error = { jsonrpc: '2.0', id: 3, error: { code: -1, message: 'x' } };
    expect(normaliser.apply({ id: 1, name: 's' }, error)).toBe(error);
  });
});
