import { describe, expect, it } from 'vitest';
import { argumentsOf, missingRequired, protocolErrorOf } from './try-tool';

describe('Try it arguments from the form', () => {
  const properties = {
    text: { type: 'string' },
    count: { type: 'integer' },
    flag: { type: 'boolean' },
    mode: { enum: [1, 2] },
    tags: { type: 'array' },
  };

  it('turns each field into its schema type and leaves empty ones out', () => {
    expect(argumentsOf(properties, { text: 'hi', count: '3', flag: 'false', mode: '2', tags: '["a"]' })).toEqual({
      text: 'hi',
      count: 3,
      flag: false,
      mode: 2,
      tags: ['a'],
    });
    expect(argumentsOf(properties, {})).toEqual({});
  });

  it('names a field whose JSON does not parse', () => {
    expect(argumentsOf(properties, { tags: '[oops' })).toBe('tags');
  });
});

describe('Try it checks and answers', () => {
  it('names the required fields left empty, in the schema order', () => {
    const properties = { a: { type: 'string' }, b: { type: 'number' }, c: { type: 'string' } };
    expect(missingRequired(properties, new Set(['c', 'a']), { a: '  ', b: '' })).toEqual(['a', 'c']);
    expect(missingRequired(properties, new Set(['a']), { a: 'x' })).toEqual([]);
  });

  it('reads an SDK server’s "MCP error N: …" error result as a protocol error, and nothing else', () => {
    const result = (text: string, is_error = true) => ({ is_error, content: [{ type: 'text', text }], duration_ms: 1 });
    expect(protocolErrorOf(result('MCP error -32602: Input validation error: bad'))).toEqual({
      code: -32602,
      message: 'Input validation error: bad',
    });
    expect(protocolErrorOf(result('disk full'))).toBeNull();
    expect(protocolErrorOf(result('MCP error -32602: bad', false))).toBeNull();
    expect(protocolErrorOf({ ...result('MCP error -1: x'), content: [] })).toBeNull();
  });
});
