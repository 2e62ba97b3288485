import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, engines, type TestApp } from './harness.js';

/** The generated API document: what client generators and people read to call the API. */
interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string };
  paths: Record<string, Record<string, { responses?: object; requestBody?: { content: Record<string, { schema: JsonSchema }> } }>>;
}
interface JsonSchema {
  type?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
}

const httpMethods = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head'];

describe.each(engines)('OpenAPI document on %s', (engine) => {
  let t: TestApp;
  let doc: OpenApiDocument;
  beforeAll(async () => {
    t = await createTestApp(engine);
    const res = await t.app.inject({ method: 'GET', url: '/api/docs/openapi.json' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    doc = res.json();
  });
  afterAll(async () => t?.close());

  it('is an OpenAPI 3 document without a token, the same one the docs page shows', async () => {
    expect(doc.openapi).toMatch(/^3\.\d+\.\d+$/);
    expect(doc.info).toMatchObject({ title: 'Toolport API', version: t.ctx.version });
    for (const [route, operations] of Object.entries(doc.paths)) {
      expect(route).toMatch(/^\//);
      for (const [method, operation] of Object.entries(operations)) {
        if (!httpMethods.includes(method)) continue;
        expect(operation.responses, `${method} ${route}`).toBeTypeOf('object');
      }
    }
    const fromPlugin = await t.app.inject({ method: 'GET', url: '/api/docs/json' });
    expect(fromPlugin.json()).toEqual(doc);
  });

  it('describes sign-in with its request body schema', () => {
    const body = doc.paths['/api/auth/login']?.post?.requestBody;
    const schema = body?.content['application/json']?.schema;
    expect(schema?.type).toBe('object');
    expect(Object.keys(schema?.properties ?? {})).toEqual(expect.arrayContaining(['username', 'password']));
    expect(schema?.required).toEqual(expect.arrayContaining(['username', 'password']));
  });

  it('lists every API route the server serves', () => {
    const missing = t.routes
      .filter((r) => r.url.startsWith('/api/') && !r.url.startsWith('/api/docs'))
      .filter((r) => !doc.paths[r.url.replace(/:(\w+)/g, '{$1}')]?.[r.method.toLowerCase()])
      .map((r) => `${r.method} ${r.url}`);
    expect(missing).toEqual([]);
  });

  it('serves the interactive docs page as HTML', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/docs' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toMatch(/<html/i);
  });
});
