import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { ParamHeaderIndex, paramHeaderMismatch, paramHeadersOf, paramHeadersOfRequest } from './param-headers.js';

const req = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;
const schema = (properties: Record<string, unknown>) => ({ type: 'object', properties });

describe('Mcp-Param headers (x-mcp-header)', () => {
  it('finds the declarations reachable through properties, nested ones included', () => {
    expect(
      paramHeadersOf(
        schema({
          region: { type: 'string', 'x-mcp-header': 'Region' },
          options: { type: 'object', properties: { tier: { type: 'integer', 'x-mcp-header': 'Tier' } } },
          plain: { type: 'string' },
        }),
      ),
    ).toEqual([
      { path: ['region'], header: 'Region', type: 'string' },
      { path: ['options', 'tier'], header: 'Tier', type: 'integer' },
    ]);
  });

  it('treats a tool whose declarations the revision forbids as declaring none', () => {
    const invalid = [
      schema({ a: { type: 'object', 'x-mcp-header': 'A' } }),
      schema({ a: { type: 'string', 'x-mcp-header': 'Has Space' } }),
      schema({ a: { type: 'string', 'x-mcp-header': 'Dup' }, b: { type: 'string', 'x-mcp-header': 'dup' } }),
      schema({ list: { type: 'array', items: { type: 'string', 'x-mcp-header': 'Item' } }, ok: { type: 'string', 'x-mcp-header': 'Ok' } }),
      { type: 'string', 'x-mcp-header': 'Root' },
    ];
    // The array case is not invalid by `properties` alone: its item is simply not reachable, so only `ok` counts.
    expect(invalid.map((s) => paramHeadersOf(s).map((d) => d.header))).toEqual([[], [], [], ['Ok'], []]);
  });

  it('requires each declared argument present in the body to be mirrored, equal after decoding', () => {
    const declared = paramHeadersOf(
      schema({ region: { type: 'string', 'x-mcp-header': 'Region' }, count: { type: 'number', 'x-mcp-header': 'Count' } }),
    );
    expect(paramHeaderMismatch(declared, { region: 'eu' }, req({ 'mcp-param-region': 'eu' }))).toBeUndefined();
    expect(paramHeaderMismatch(declared, { region: 'eu' }, req({ 'mcp-param-region': '  eu  ' }))).toBeUndefined();
    expect(paramHeaderMismatch(declared, {}, req({}))).toBeUndefined();
    expect(paramHeaderMismatch(declared, { region: null }, req({}))).toBeUndefined();
    expect(paramHeaderMismatch(declared, { region: 'eu' }, req({}))).toMatch(/Mcp-Param-Region header is absent/);
    expect(paramHeaderMismatch(declared, { region: 'eu' }, req({ 'mcp-param-region': 'us' }))).toMatch(/decodes to "us"/);
    const b64 = `=?base64?${Buffer.from('東京').toString('base64')}?=`;
    expect(paramHeaderMismatch(declared, { region: '東京' }, req({ 'mcp-param-region': b64 }))).toBeUndefined();
    expect(paramHeaderMismatch(declared, { region: 'x' }, req({ 'mcp-param-region': '=?base64?SGVsbG8?=' }))).toMatch(/invalid Base64/);
    // Numbers compare as numbers: 42.0 and 42 are the same value.
    expect(paramHeaderMismatch(declared, { count: 42 }, req({ 'mcp-param-count': '42.0' }))).toBeUndefined();
    expect(paramHeaderMismatch(declared, { count: 42 }, req({ 'mcp-param-count': '43' }))).toMatch(/Mcp-Param-Count/);
  });

  it('passes on only well-formed Mcp-Param headers of a request', () => {
    expect(paramHeadersOfRequest(req({ 'mcp-param-region': ' eu ', 'mcp-name': 'x', authorization: 'Bearer k' }))).toEqual({
      'mcp-param-region': 'eu',
    });
    expect(paramHeadersOfRequest(req({ accept: 'application/json' }))).toBeUndefined();
  });

  it('learns each service’s tools from its list, page by page', () => {
    const index = new ParamHeaderIndex();
    expect(index.declared(1, 'routed')).toBeUndefined();
    index.learn(1, [{ name: 'routed', inputSchema: schema({ r: { type: 'string', 'x-mcp-header': 'R' } }) }], true);
    index.learn(1, [{ name: 'plain', inputSchema: schema({}) }], false);
    expect(index.declared(1, 'routed')?.map((d) => d.header)).toEqual(['R']);
    expect(index.declared(1, 'plain')).toEqual([]);
    // A tool the list did not name declares nothing (the call goes on; the upstream answers for the name).
    expect(index.declared(1, 'missing')).toEqual([]);
    index.learn(1, [{ name: 'plain', inputSchema: schema({}) }], true);
    expect(index.declared(1, 'routed')).toEqual([]);
    expect(index.declared(2, 'plain')).toBeUndefined();
  });
});
