import { describe, expect, it } from 'vitest';
import { responseIdOf } from './json-head.js';

describe('responseIdOf', () => {
  it('reads the top-level id of a response from its first bytes', () => {
    expect(responseIdOf('{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"hhhh')).toBe(42);
    expect(responseIdOf('{"id": "abc" , "jsonrpc":"2.0","error":{')).toBe('abc');
    expect(responseIdOf('{"jsonrpc":"2.0","result":{"id":7,"x":"}"},"id":-3}')).toBe(-3);
    expect(responseIdOf('{"jsonrpc":"2.0","id":5,"result":{"content":[oops')).toBe(5);
  });

  it('finds nothing in a request, a notification, an id inside a result, or text that is not an object', () => {
    expect(responseIdOf('{"jsonrpc":"2.0","method":"tools/call","id":3')).toBeUndefined();
    expect(responseIdOf('{"jsonrpc":"2.0","result":{"id":7,"text":"\\"id\\":8')).toBeUndefined();
    expect(responseIdOf('yyyyyyyy "id":9')).toBeUndefined();
    expect(responseIdOf('{"jsonrpc":"2.0","id"')).toBeUndefined();
  });
});
