import { validate } from '@readme/openapi-parser';
import { describe, expect, it } from 'vitest';
import { buildDocument, callAnswer, toolPath } from './openapi-document.js';

const base = { name: 'svc', title: 'Svc', kind: 'proxy' as const, serverUrl: 'http://127.0.0.1:1/openapi/proxy/svc' };
type Paths = Record<
  string,
  { post: { operationId: string; requestBody: { content: { 'application/json': { schema: { $ref: string } } } } } }
>;
const schemaKey = (doc: Record<string, unknown>, path: string) =>
  (doc.paths as Paths)[path]?.post.requestBody.content['application/json'].schema.$ref.split('/').pop() as string;

describe('the OpenAPI document of a tool list', () => {
  it('moves each input schema into the components and points its local $refs below it, so the document validates', async () => {
    const doc = buildDocument({
      ...base,
      tools: [
        {
          name: 'tree',
          inputSchema: {
            $schema: 'http://json-schema.org/draft-07/schema#',
            $id: 'urn:elsewhere',
            type: 'object',
            properties: { root: { $ref: '#/definitions/node' } },
            definitions: { node: { type: 'object', properties: { children: { type: 'array', items: { $ref: '#/definitions/node' } } } } },
          },
        },
      ],
    });
    const schemas = (doc.components as { schemas: Record<string, Record<string, unknown>> }).schemas;
    const key = schemaKey(doc, '/tree');
    expect(schemas[key]).not.toHaveProperty('$id');
    expect(JSON.stringify(schemas[key])).toContain(`"#/components/schemas/${key}/definitions/node"`);
    expect(await validate(structuredClone(doc) as never)).toMatchObject({ valid: true });
  });

  it('keeps tool names that are not component keys apart, and paths that are not templates', async () => {
    const tools = [
      { name: 'a b', inputSchema: { type: 'object', properties: { x: { type: 'string' } } } },
      { name: 'a_b', inputSchema: { type: 'object', properties: { y: { type: 'string' } } } },
      { name: 'toolport.Error', inputSchema: { type: 'object' } },
      { name: 'x{y}', inputSchema: { type: 'object' } },
      { name: 'dup', inputSchema: { type: 'object' } },
      { name: 'dup', inputSchema: { type: 'string' } },
    ];
    const doc = buildDocument({ ...base, tools });
    const paths = doc.paths as Paths;
    expect(Object.keys(paths)).toEqual(['/a%20b', '/a_b', '/toolport.Error', '/x%7By%7D', '/dup']);
    expect(Object.values(paths).map((p) => p.post.operationId)).toEqual(['a b', 'a_b', 'toolport.Error', 'x{y}', 'dup']);
    expect(new Set(Object.keys(paths).map((p) => schemaKey(doc, p))).size).toBe(5);
    // The document's own error schema is not taken by a tool of the same name.
    expect(schemaKey(doc, '/toolport.Error')).not.toBe('toolport.Error');
    expect(toolPath('../x')).toBe('/..%2Fx');
    expect(await validate(structuredClone(doc) as never)).toMatchObject({ valid: true });
  });

  it('copies a hostile, very deep schema only so deep, without overflowing', () => {
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 50_000; i++) deep = { type: 'object', properties: { n: deep } };
    const doc = buildDocument({ ...base, tools: [{ name: 'deep', inputSchema: deep }] });
    expect(JSON.stringify(doc).length).toBeLessThan(10_000);
  });

  it('describes a tool with an output schema by it', () => {
    const doc = buildDocument({
      ...base,
      tools: [{ name: 'w', inputSchema: { type: 'object' }, outputSchema: { type: 'object', properties: { t: { type: 'number' } } } }],
    });
    const ok = (doc.paths as Record<string, { post: { responses: Record<string, { content?: Record<string, { schema: unknown }> }> } }>)[
      '/w'
    ]?.post.responses['200'];
    expect(ok?.content?.['application/json']?.schema).toEqual({ $ref: '#/components/schemas/w.output' });
  });
});

describe('the HTTP answer of a tools/call answer', () => {
  const result = (r: unknown) => ({ jsonrpc: '2.0' as const, id: 1, result: r as Record<string, unknown> });
  const error = (code: number, message: string) => ({ jsonrpc: '2.0' as const, id: 1, error: { code, message } });

  it('answers content as mcpo does: JSON text as its value, one item alone, several as an array, images as data URLs', () => {
    expect(callAnswer(result({ content: [{ type: 'text', text: 'plain' }] }), undefined, 'en')).toEqual({ status: 200, body: 'plain' });
    expect(callAnswer(result({ content: [{ type: 'text', text: '{"a":1}' }] }), undefined, 'en').body).toEqual({ a: 1 });
    expect(
      callAnswer(
        result({
          content: [
            { type: 'text', text: 'x' },
            { type: 'image', data: 'AAA', mimeType: 'image/png' },
            { type: 'resource_link', uri: 'file:///a', name: 'a' },
            { type: 'resource', resource: { uri: 'r', text: 'inside' } },
          ],
        }),
        undefined,
        'en',
      ).body,
    ).toEqual(['x', 'data:image/png;base64,AAA', 'file:///a', 'inside']);
    expect(callAnswer(result({ content: [] }), undefined, 'en').body).toEqual([]);
    // Structured content wins over its text twin.
    expect(callAnswer(result({ content: [{ type: 'text', text: '{}' }], structuredContent: { t: 1 } }), undefined, 'en').body).toEqual({
      t: 1,
    });
  });

  it('maps errors to the statuses the document names', () => {
    const isError = callAnswer(result({ isError: true, content: [{ type: 'text', text: 'boom' }] }), undefined, 'en');
    expect(isError).toEqual({
      status: 422,
      body: { detail: { code: 'tool_error', message: 'The tool reported an error: boom', content: [{ type: 'text', text: 'boom' }] } },
    });
    expect(callAnswer(error(-32602, 'bad args'), undefined, 'en').status).toBe(422);
    expect(callAnswer(error(-32603, 'Upstream unavailable: gone'), undefined, 'zh-CN').body).toEqual({
      detail: { code: 'upstream_error', message: '工具服务器无法应答：Upstream unavailable: gone' },
    });
    expect(callAnswer(error(-32000, 'session closed: x'), undefined, 'en').status).toBe(503);
    expect(callAnswer(error(-32000, 'daily request limit exceeded: 5/5'), 429, 'en').body).toEqual({
      detail: { code: 'daily_limit', message: 'Daily request limit reached: 5/5' },
    });
    expect(callAnswer(error(-32000, 'too many calls in progress for this service: 8'), 429, 'en').body).toMatchObject({
      detail: { code: 'too_many_calls' },
    });
    expect(callAnswer(error(-32603, 'metering away'), 503, 'en').status).toBe(503);
  });
});
