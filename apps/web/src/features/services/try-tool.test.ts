import { describe, expect, it } from 'vitest';
import { argumentsOf } from './try-tool';

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
