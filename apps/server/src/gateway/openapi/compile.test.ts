import { describe, expect, it } from 'vitest';
import { buildRequest } from './call.js';
import { compileDocument, OpenApiError, parseDocument, toolName } from './compile.js';

const base = (paths: unknown, components: unknown = {}) => ({
  openapi: '3.1.0',
  info: { title: 't', version: '1' },
  servers: [{ url: 'https://api.example.com/v1' }],
  paths,
  components,
});
const compile = (data: Record<string, unknown>, filter = {}) => compileDocument({ data, sourceUrl: '', document: '', baseUrl: '', filter });
const refusal = async (p: Promise<unknown>) => {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(OpenApiError);
  return (err as OpenApiError).key;
};

describe('OpenAPI compilation', () => {
  it('makes tool names fit the MCP rules', () => {
    expect(toolName('get pet by id!')).toBe('get_pet_by_id');
    expect(toolName('pets/{id}:read')).toBe('pets_id_read');
    expect(toolName('宠物')).toBe('');
    expect(toolName('x'.repeat(200))).toHaveLength(64);
  });

  it('names by method and path without an operation id, and keeps names unique', async () => {
    const plan = await compile(
      base({
        '/a/{id}': { get: { responses: { '200': { description: 'ok' } } } },
        '/b': {
          get: { operationId: 'same', responses: { '200': { description: 'ok' } } },
          post: { operationId: 'same', responses: { '200': { description: 'ok' } } },
        },
      }),
    );
    expect(plan.operations.map((o) => o.name)).toEqual(['get_a_id', 'same', 'same_2']);
    expect(plan.baseUrl).toBe('https://api.example.com/v1');
  });

  it('never follows a reference outside the document, and turns cycles into open schemas', async () => {
    const plan = await compile(
      base(
        {
          '/n': {
            post: {
              operationId: 'node',
              requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/Node' } } } },
              responses: { '200': { description: 'ok' } },
            },
          },
        },
        {
          schemas: {
            Node: {
              type: 'object',
              properties: { child: { $ref: '#/components/schemas/Node' }, far: { $ref: 'http://169.254.169.254/x.json' } },
            },
          },
        },
      ),
    );
    const properties = plan.operations[0]?.inputSchema.properties as Record<
      string,
      { properties: Record<string, { description: string }> }
    >;
    const body = properties.body;
    expect(body?.properties.far?.description).toContain('unresolved reference outside the document: http://169.254.169.254/x.json');
    expect(body?.properties.child?.description).toBe('recursive: the same schema as an enclosing one');
    expect(JSON.stringify(plan)).not.toContain('"$ref"');
  });

  it('refuses a reference bomb that would expand past the schema budget', async () => {
    const schemas: Record<string, unknown> = { L0: { type: 'string' } };
    for (let i = 1; i <= 12; i++) {
      schemas[`L${i}`] = {
        type: 'object',
        properties: Object.fromEntries(['a', 'b', 'c', 'd'].map((k) => [k, { $ref: `#/components/schemas/L${i - 1}` }])),
      };
    }
    const doc = base(
      {
        '/bomb': {
          post: {
            operationId: 'bomb',
            requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/L12' } } } },
            responses: { '200': { description: 'ok' } },
          },
        },
      },
      { schemas },
    );
    expect(await refusal(compile(doc))).toBe('openapi_service.too_expanded');
  });

  it('refuses depth before parsing, YAML aliases past the limit, and Swagger 2.0', async () => {
    expect(() => parseDocument(`{"a":${'['.repeat(101)}${']'.repeat(101)}}`)).toThrow(OpenApiError);
    const aliases = `a: &a [x]\nb: [${Array.from({ length: 200 }, () => '*a').join(',')}]\n`;
    expect(() => parseDocument(aliases)).toThrow(/neither valid JSON nor valid YAML/);
    expect(await refusal(compile({ swagger: '2.0', info: { title: 't', version: '1' }, paths: {} }))).toBe('openapi_service.not_openapi');
  });

  it('builds requests: path escaped, arrays repeated, secrets placed, configured headers winning', async () => {
    const plan = await compile(
      base({
        '/items/{id}': {
          put: {
            operationId: 'put',
            parameters: [
              { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
              { name: 'tags', in: 'query', schema: { type: 'array', items: { type: 'string' } } },
              { name: 'X-Trace', in: 'header', schema: { type: 'string' } },
            ],
            requestBody: { required: true, content: { 'application/json': { schema: { type: 'object' } } } },
            responses: { '200': { description: 'ok' } },
          },
        },
      }),
    );
    const op = plan.operations[0];
    if (!op) throw new Error('no operation');
    const setup = {
      baseUrl: plan.baseUrl,
      headers: { 'x-trace': 'fixed' },
      variables: { OPENAPI_BASIC_USERNAME: 'u', OPENAPI_BASIC_PASSWORD: 'p', key: 'k' },
      fetch,
    };
    const built = buildRequest(op, { id: 'a/b c', tags: ['x', 'y'], 'X-Trace': 'mine', body: { n: 1 } }, setup);
    if (typeof built === 'string') throw new Error(built);
    expect(built.url.href).toBe('https://api.example.com/v1/items/a%2Fb%20c?tags=x&tags=y&key=k');
    const headers = built.init.headers as Headers;
    expect(headers.get('x-trace')).toBe('fixed');
    expect(headers.get('authorization')).toBe(`Basic ${Buffer.from('u:p').toString('base64')}`);
    expect(built.init.body).toBe('{"n":1}');
    expect(buildRequest(op, { body: {} }, setup)).toBe('missing required argument "id"');
    expect(buildRequest(op, { id: '1', 'X-Trace': 'a\r\nb: c', body: {} }, setup)).toBe(
      'argument "X-Trace" cannot be an HTTP header value',
    );
  });
});
