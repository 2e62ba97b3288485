import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ADMIN_PASSWORD, engines } from '../harness.js';
import { connect, connectUrl, type McpClient, textOf } from './clients.js';
import { type PetsRest, petsJson31, petsYaml, startPetsRest } from './fixtures/pets-rest.js';
import { addUser, addUserWithToken, type LiveGateway, startGateway } from './gateway-harness.js';

/**
 * OpenAPI services (issue 30 items 2-4, decision 0056): a REST API on loopback described by a real
 * OpenAPI document (3.0 YAML fetched by URL, 3.1 JSON uploaded), its operations called as tools through
 * /proxy, a group and discovery mode with the official SDK clients; bad documents refused, nothing created.
 */
describe.each(engines)('OpenAPI services on %s', (engine) => {
  let gw: LiveGateway;
  let rest: PetsRest;
  let token: string;
  let key: string;
  const open: McpClient[] = [];

  beforeAll(async () => {
    rest = await startPetsRest(petsYaml);
    gw = await startGateway(engine);
    key = (await addUser(gw.ctx, 'alice')).key;
    const login = await gw.app.inject({ method: 'POST', url: '/api/auth/login', payload: { username: 'root', password: ADMIN_PASSWORD } });
    token = login.json().data.access_token;
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((c) => c.close().catch(() => undefined)));
  });
  afterAll(async () => {
    await gw?.close();
    await rest?.close();
  });

  const admin = (lang = 'en') => ({ authorization: `Bearer ${token}`, 'accept-language': lang });
  const create = (payload: Record<string, unknown>, lang = 'en') =>
    gw.app.inject({
      method: 'POST',
      url: '/api/mcp_market/custom_service',
      headers: admin(lang),
      payload: { type: 'openapi', ...payload },
    });
  const serviceCount = async () => (await gw.ctx.db.selectFrom('services').select('id').execute()).length;
  const client = async (service: string) => {
    const c = await connect(gw.url, service, key, { sdk: 'v1', wire: 'http' });
    open.push(c);
    return c;
  };

  it('previews the tools of a 3.0 YAML document fetched by URL, $refs resolved, creating nothing', async () => {
    const before = await serviceCount();
    const res = await create({ name: 'pets', url: `${rest.origin}/openapi.yaml`, preview: true });
    expect(res.statusCode).toBe(201);
    expect(res.json().message).toBe('OpenAPI document checked: it makes 5 tools (nothing was created)');
    const data = res.json().data;
    expect(data.status).toBe('preview');
    expect(data.service_id).toBe(0);
    expect(data.base_url).toBe(`${rest.origin}/api`);
    const byName = Object.fromEntries((data.tools as { name: string }[]).map((t) => [t.name, t])) as Record<
      string,
      Record<string, unknown>
    >;
    // Names: the operation id sanitised to the MCP tool-name rules, else method and path.
    expect(Object.keys(byName).sort()).toEqual(['createPet', 'get_boom', 'get_pet_by_id', 'hello', 'listPets']);
    expect(byName.listPets).toMatchObject({
      method: 'GET',
      path: '/pets',
      description: 'List pets\n\nEvery pet in the store, optionally by tag.',
      input_schema: {
        type: 'object',
        properties: { limit: { type: 'integer', description: 'How many at most' }, tag: { type: 'string' } },
      },
    });
    expect(byName.createPet?.input_schema).toEqual({
      type: 'object',
      properties: {
        body: {
          type: 'object',
          required: ['name'],
          properties: { name: { type: 'string', description: "The pet's name" }, tag: { type: 'string' } },
        },
      },
      required: ['body'],
    });
    expect(byName.get_pet_by_id?.input_schema).toMatchObject({ required: ['petId'] });
    expect(JSON.stringify(data.tools)).not.toContain('$ref');
    expect(await serviceCount()).toBe(before);
    // Without a name (the console's edit dialog previews a service that has one): the same tools, no name asked for.
    const unnamed = await create({ name: '', url: `${rest.origin}/openapi.yaml`, preview: true });
    expect(unnamed.statusCode).toBe(201);
    expect(unnamed.json().data).toMatchObject({ status: 'preview', service_id: 0, name: '', base_url: `${rest.origin}/api` });
    expect(unnamed.json().data.tools).toEqual(data.tools);
    const notOpenApi = await create({ name: '', type: 'streamableHttp', url: 'https://example.com/mcp', preview: true });
    expect(notOpenApi.statusCode).toBe(400);
    expect(notOpenApi.json().message).toBe('A preview is for OpenAPI services only (type "openapi")');
    expect(await serviceCount()).toBe(before);
  });

  it('serves the operations as tools through /proxy: JSON, text, the API key, and REST errors as tool errors', async () => {
    const res = await create({ name: 'pets', url: `${rest.origin}/openapi.yaml`, headers: { 'x-api-key': 'secret-key' } });
    expect(res.statusCode).toBe(201);
    const created = res.json().data;
    expect(created.health_status).toBe('healthy');
    expect(created.health_details).toMatch(/^document loaded, 5 operations, base URL answers/);

    const c = await client('pets');
    const { tools } = await c.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['createPet', 'get_boom', 'get_pet_by_id', 'hello', 'listPets']);

    const pet = await c.callTool('get_pet_by_id', { petId: 1 });
    expect(pet.isError).toBeFalsy();
    expect(pet.structuredContent).toEqual({ id: 1, name: 'Rex', tag: 'dog' });
    expect(JSON.parse(textOf(pet))).toEqual({ id: 1, name: 'Rex', tag: 'dog' });

    const list = await c.callTool('listPets', { tag: 'cat', limit: 5 });
    expect(list.structuredContent).toEqual({ result: [{ id: 2, name: 'Tom', tag: 'cat' }] });
    expect(rest.hits.at(-1)?.url).toBe('/api/pets?limit=5&tag=cat');

    const made = await c.callTool('createPet', { body: { name: 'Nemo', tag: 'fish' } });
    expect(made.isError).toBeFalsy();
    expect(made.structuredContent).toMatchObject({ name: 'Nemo', tag: 'fish' });
    const post = rest.hits.at(-1);
    expect(post?.method).toBe('POST');
    expect(post?.headers['x-api-key']).toBe('secret-key');
    expect(post?.headers['content-type']).toBe('application/json');
    expect(JSON.parse(post?.body ?? '')).toEqual({ name: 'Nemo', tag: 'fish' });

    expect(textOf(await c.callTool('hello', { who: 'world' }))).toBe('hello world');

    const missing = await c.callTool('get_pet_by_id', { petId: 99 });
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toBe('HTTP 404 Not Found: pet 99 not found');
    const boom = await c.callTool('get_boom', {});
    expect(boom.isError).toBe(true);
    expect(textOf(boom)).toBe('HTTP 500 Internal Server Error: the kennel exploded');
    const invalid = await c.callTool('createPet', { body: {} });
    expect(invalid.isError).toBe(true);
    expect(textOf(invalid)).toContain('HTTP 400');
    expect(textOf(invalid)).toContain('name is required');

    // The secret header is masked in the export, which names the document's URL and type.
    const exported = await gw.app.inject({ method: 'GET', url: '/api/mcp_market/export', headers: admin() });
    expect(exported.statusCode).toBe(200);
    const entry = (exported.json().data ?? exported.json()).mcpServers.pets;
    expect(entry).toEqual({
      type: 'openapi',
      url: `${rest.origin}/openapi.yaml`,
      base_url: `${rest.origin}/api`,
      headers: { 'x-api-key': '********' },
    });
  });

  it('takes an uploaded 3.1 JSON document with a tag filter, bearer and query credentials, in a group and in discovery mode', async () => {
    const document = JSON.stringify(petsJson31(rest.origin));
    const res = await create({
      name: 'pets31',
      document,
      operation_filter: { tags: ['read'] },
      environments: { OPENAPI_BEARER_TOKEN: 'tok-123', api_key: 'q-456' },
    });
    expect(res.statusCode).toBe(201);
    const serviceId = res.json().data.service_id;
    expect(
      res
        .json()
        .data.tools.map((t: { name: string }) => t.name)
        .sort(),
    ).toEqual(['readPet', 'whoami']);

    const c = await client('pets31');
    const who = await c.callTool('whoami', {});
    expect(who.structuredContent).toEqual({ authorization: 'Bearer tok-123', query: '?api_key=q-456' });
    expect((await c.callTool('readPet', { petId: 2 })).structuredContent).toEqual({ id: 2, name: 'Tom', tag: 'cat' });

    for (const mode of ['all', 'discovery'] as const) {
      const name = `rest-${mode}`;
      const group = await gw.app.inject({
        method: 'POST',
        url: '/api/groups',
        headers: admin(),
        payload: { name, mode, members: [{ service_id: serviceId }] },
      });
      expect(group.statusCode).toBe(201);
      const g = await connectUrl(new URL(`${gw.url}/group/${name}/mcp`), key, { sdk: 'v2', wire: 'http' });
      open.push(g);
      const names = (await g.listTools()).tools.map((t) => t.name).sort();
      if (mode === 'all') {
        expect(names).toEqual(['pets31__readPet', 'pets31__whoami']);
        expect((await g.callTool('pets31__readPet', { petId: 1 })).structuredContent).toEqual({ id: 1, name: 'Rex', tag: 'dog' });
      } else {
        expect(names).toEqual(['call_tool', 'search_tools']);
        const found = await g.callTool('search_tools', { query: 'read a pet' });
        expect(JSON.stringify(found.structuredContent)).toContain('pets31__readPet');
        const called = await g.callTool('call_tool', { name: 'pets31__readPet', arguments: { petId: 99 } });
        expect(called.isError).toBe(true);
        expect(textOf(called)).toBe('HTTP 404 Not Found: pet 99 not found');
      }
    }
  });

  it('exports an uploaded document with its filter and masked variables, and imports it back as a working service', async () => {
    const exported = await gw.app.inject({ method: 'GET', url: '/api/mcp_market/export', headers: admin() });
    const doc = exported.json().data ?? exported.json();
    const entry = doc.mcpServers.pets31;
    expect(entry).toMatchObject({
      type: 'openapi',
      document: JSON.stringify(petsJson31(rest.origin)),
      base_url: `${rest.origin}/api`,
      operation_filter: { tags: ['read'] },
      env: { OPENAPI_BEARER_TOKEN: '********', api_key: '********' },
    });
    expect(entry.url).toBeUndefined();
    // Imported under another name, the masked values left out (the report names them).
    const started = await gw.app.inject({
      method: 'POST',
      url: '/api/mcp_market/batch-import',
      headers: admin(),
      payload: { mcpServers: { 'pets-again': entry } },
    });
    expect(started.statusCode).toBe(200);
    const taskId = started.json().data.task_id;
    let status: { status: string; logs: string[] } | undefined;
    await vi.waitFor(
      async () => {
        const r = await gw.app.inject({ method: 'GET', url: `/api/mcp_market/install_status/${taskId}`, headers: admin() });
        status = r.json().data;
        expect(status?.status).toBe('completed');
      },
      { timeout: 30_000, interval: 200 },
    );
    const item = (status?.logs ?? []).map((l) => JSON.parse(l)).find((e) => e.name === 'pets-again');
    expect(item).toMatchObject({ status: 'success' });
    expect(item.message).toContain('Created pets-again from an OpenAPI document: 2 tools');
    expect(item.message).toContain('OPENAPI_BEARER_TOKEN');
    const c = await client('pets-again');
    // The masked bearer token was not imported: the request goes without it.
    expect((await c.callTool('whoami', {})).structuredContent).toEqual({ authorization: null, query: '' });
  });

  it('edits the base URL, the filter and the document URL: the document is read again, the link and its health follow', async () => {
    const other = await startPetsRest(petsYaml);
    try {
      const res = await create({ name: 'movable', url: `${rest.origin}/openapi.yaml`, headers: { 'x-api-key': 'secret-key' } });
      expect(res.statusCode).toBe(201);
      const id = res.json().data.service_id as number;
      const edit = (payload: Record<string, unknown>, lang = 'en', headers = admin(lang)) =>
        gw.app.inject({ method: 'PUT', url: `/api/mcp_services/${id}`, headers, payload });
      const row = async () =>
        (
          (await gw.app.inject({ method: 'GET', url: '/api/mcp_market/installed', headers: admin() })).json().data as {
            name: string;
            command: string;
            openapi?: Record<string, unknown>;
          }[]
        ).find((s) => s.name === 'movable');
      const health = async () =>
        (await gw.app.inject({ method: 'POST', url: `/api/mcp_services/${id}/health/check`, headers: admin() })).json().data as {
          health_status: string;
          health_details: string;
          tool_count: number;
        };
      expect(await row()).toMatchObject({
        command: `${rest.origin}/openapi.yaml`,
        openapi: { uploaded: false, title: 'Pets', base_url: `${rest.origin}/api`, base_url_override: '', operations: 5 },
      });
      const c = await client('movable');
      expect((await c.callTool('get_pet_by_id', { petId: 1 })).structuredContent).toMatchObject({ name: 'Rex' });
      expect(rest.hits.at(-1)?.url).toBe('/api/pets/1');

      // The base URL: the open session's next call goes to the other server, and the health check says so.
      const moved = await edit({ base_url: `${other.origin}/api` });
      expect(moved.statusCode).toBe(200);
      expect((await row())?.openapi).toMatchObject({ base_url: `${other.origin}/api`, base_url_override: `${other.origin}/api` });
      const before = rest.hits.length;
      await vi.waitFor(
        async () => {
          expect((await c.callTool('get_pet_by_id', { petId: 2 })).structuredContent).toMatchObject({ name: 'Tom' });
          expect(other.hits.at(-1)?.url).toBe('/api/pets/2');
        },
        { timeout: 10_000, interval: 200 },
      );
      expect(rest.hits.slice(before).filter((h) => h.url.startsWith('/api/pets'))).toEqual([]);
      expect(await health()).toMatchObject({ health_status: 'healthy', tool_count: 5 });

      // The filter: fewer tools, listed at once and counted by the health check.
      expect((await edit({ operation_filter: { tags: ['pets'] } })).statusCode).toBe(200);
      const fresh = await client('movable');
      expect((await fresh.listTools()).tools.map((t) => t.name).sort()).toEqual(['createPet', 'get_pet_by_id', 'listPets']);
      const checked = await health();
      expect(checked).toMatchObject({ health_status: 'healthy', tool_count: 3 });
      expect(checked.health_details).toMatch(/^document loaded, 3 operations, base URL answers/);

      // A base URL where nothing answers: saved, and the health check says the service is down.
      const closed = http.createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      const deadPort = (closed.address() as AddressInfo).port;
      await new Promise<void>((resolve) => closed.close(() => resolve()));
      expect((await edit({ base_url: `http://127.0.0.1:${deadPort}/api` })).statusCode).toBe(200);
      await vi.waitFor(async () => expect((await health()).health_status).toBe('unhealthy'), { timeout: 15_000, interval: 300 });

      // The document's URL, the override cleared: the other server's own document and its server.
      const fetchedBefore = other.hits.filter((h) => h.url === '/openapi.yaml').length;
      expect((await edit({ command: `${other.origin}/openapi.yaml`, base_url: '' })).statusCode).toBe(200);
      expect(other.hits.filter((h) => h.url === '/openapi.yaml').length).toBe(fetchedBefore + 1);
      expect(await row()).toMatchObject({
        command: `${other.origin}/openapi.yaml`,
        openapi: { base_url: `${other.origin}/api`, base_url_override: '', operation_filter: { tags: ['pets'] }, operations: 3 },
      });
      await vi.waitFor(async () => expect(await health()).toMatchObject({ health_status: 'healthy', tool_count: 3 }), {
        timeout: 15_000,
        interval: 300,
      });
      // An edit of the name alone reads nothing again.
      expect((await edit({ display_name: 'Movable pets', command: `${other.origin}/openapi.yaml` })).statusCode).toBe(200);
      expect(other.hits.filter((h) => h.url === '/openapi.yaml').length).toBe(fetchedBefore + 1);

      // Refused edits change nothing, in the caller's language.
      const stored = async () =>
        await gw.ctx.db.selectFrom('services').select(['command', 'openapi_json']).where('id', '=', id).executeTakeFirst();
      const kept = await stored();
      const refusedEdit = async (payload: Record<string, unknown>, en: RegExp, zh: RegExp, field?: string) => {
        const a = await edit(payload);
        expect(a.statusCode).toBe(400);
        expect(a.json().message).toMatch(en);
        // The field the console shows the refusal beside (decision 0058); the document's own faults name none.
        expect(a.json().field).toBe(field);
        const b = await edit(payload, 'zh-CN');
        expect(b.statusCode).toBe(400);
        expect(b.json().message).toMatch(zh);
        expect(await stored()).toEqual(kept);
      };
      await refusedEdit({ command: `${other.origin}/missing.yaml` }, /answered HTTP 404 instead of the OpenAPI document/, /404/);
      await refusedEdit({ document: '{"openapi": "3.0.0", ' }, /neither valid JSON nor valid YAML/, /既不是有效的 JSON/);
      await refusedEdit(
        { operation_filter: { tags: ['nope'] } },
        /keeps none of the document's 5 operations/,
        /5 个操作/,
        'operation_filter',
      );
      await refusedEdit({ base_url: 'ftp://example.com' }, /Please enter a valid URL/, /请输入有效的 URL/, 'base_url');

      // An uploaded document replaces the URL.
      const uploaded = await edit({ document: JSON.stringify(petsJson31(other.origin)), operation_filter: {} });
      expect(uploaded.statusCode).toBe(200);
      expect(await row()).toMatchObject({ command: '', openapi: { uploaded: true, title: 'Pets 3.1', operations: 3 } });
      const third = await client('movable');
      expect((await third.listTools()).tools.map((t) => t.name).sort()).toEqual(['addPet', 'readPet', 'whoami']);

      // Someone who is not an admin cannot move the service anywhere.
      const user = await addUserWithToken(gw.ctx, 'mover');
      const sneaky = await edit({ base_url: 'http://127.0.0.1:9/api' }, 'en', {
        authorization: `Bearer ${user.token}`,
        'accept-language': 'en',
      });
      expect(sneaky.statusCode).toBe(403);
      expect((await row())?.openapi).toMatchObject({ base_url: `${other.origin}/api` });
    } finally {
      await other.close();
    }
  });

  it('refuses a user who is not an admin, before any fetch', async () => {
    const user = await addUserWithToken(gw.ctx, 'mallory');
    const before = rest.hits.length;
    for (const preview of [true, false]) {
      const res = await gw.app.inject({
        method: 'POST',
        url: '/api/mcp_market/custom_service',
        headers: { authorization: `Bearer ${user.token}` },
        payload: { type: 'openapi', name: 'sneaky', url: `${rest.origin}/openapi.yaml`, preview },
      });
      expect(res.statusCode).toBe(403);
    }
    expect(rest.hits.length).toBe(before);
  });

  describe('bad input', () => {
    const refused = async (payload: Record<string, unknown>, en: RegExp, zh: RegExp, field?: string) => {
      const before = await serviceCount();
      const a = await create({ name: 'bad', ...payload });
      expect(a.statusCode).toBe(400);
      expect(a.json().message).toMatch(en);
      expect(a.json().field).toBe(field);
      const b = await create({ name: 'bad', ...payload }, 'zh-CN');
      expect(b.statusCode).toBe(400);
      expect(b.json().message).toMatch(zh);
      expect(await serviceCount()).toBe(before);
    };
    const doc = (paths: unknown) =>
      JSON.stringify({ openapi: '3.0.3', info: { title: 't', version: '1' }, servers: [{ url: `${rest.origin}/api` }], paths });

    it('refuses a document that does not parse, is not OpenAPI 3, or is not valid', async () => {
      await refused({ document: '{"openapi": "3.0.0", ' }, /neither valid JSON nor valid YAML/, /既不是有效的 JSON/);
      await refused(
        { document: 'swagger: "2.0"\ninfo: {title: t, version: "1"}\npaths: {}' },
        /not an OpenAPI 3\.0 or 3\.1/,
        /不是 OpenAPI 3\.0 或 3\.1/,
      );
      await refused(
        { document: JSON.stringify({ openapi: '3.0.3', info: { title: 't' }, paths: {} }) },
        /is not valid: [\s\S]*version/,
        /OpenAPI 文档无效/,
      );
      await refused({}, /its URL or its text/, /文档的 URL 或文档内容/);
    });

    it('refuses a document without operations, and a filter that keeps none', async () => {
      await refused({ document: doc({}) }, /describes no operations/, /没有任何操作/);
      const one = doc({ '/x': { get: { operationId: 'x', responses: { '200': { description: 'ok' } } } } });
      await refused(
        { document: one, operation_filter: { tags: ['nope'] } },
        /keeps none of the document's 1 operations/,
        /1 个操作/,
        'operation_filter',
      );
    });

    it('refuses operations that cannot become tools, naming them', async () => {
      const upload = doc({
        '/upload': {
          post: {
            operationId: 'uploadFile',
            requestBody: { content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } },
            responses: { '200': { description: 'ok' } },
          },
        },
      });
      await refused(
        { document: upload },
        /Operation uploadFile \(POST \/upload\) cannot become a tool: .*application\/octet-stream/,
        /操作 uploadFile/,
      );
    });

    it('refuses a 100,000-level nested document and a huge one with a clear message', async () => {
      const deep = `{"openapi":"3.0.3","x":${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
      await refused({ document: deep }, /nested too deeply \(at most 100 levels\)/, /嵌套层级过深/);
      const deepYaml = `openapi: 3.0.3\nx: ${'['.repeat(100_000)}${']'.repeat(100_000)}`;
      await refused({ document: deepYaml }, /nested too deeply/, /嵌套层级过深/);
      const huge = doc({
        '/x': { get: { operationId: 'x', description: 'y'.repeat(3 * 1024 * 1024), responses: { '200': { description: 'ok' } } } },
      });
      await refused({ document: huge }, /too large \(at most 2097152 bytes\)/, /文档过大/);
    });

    it('refuses a document URL on a private address while private networks are off, reaching nothing', async () => {
      let hits = 0;
      const counting: Server = http.createServer((_req, res) => {
        hits++;
        res.end(petsYaml(rest.origin));
      });
      await new Promise<void>((resolve) => counting.listen(0, '127.0.0.1', resolve));
      const port = (counting.address() as AddressInfo).port;
      const setPreference = async (value: boolean) => {
        const r = await gw.app.inject({
          method: 'PUT',
          url: '/api/option/',
          headers: admin(),
          payload: { key: 'AllowPrivateNetworkUpstreams', value },
        });
        expect(r.statusCode).toBe(200);
      };
      try {
        await setPreference(false);
        await refused({ url: `http://127.0.0.1:${port}/openapi.yaml` }, /127\.0\.0\.1 is not allowed/, /127\.0\.0\.1/);
        await refused({ url: `http://localhost:${port}/openapi.yaml` }, /is not allowed/, /localhost/);
        // An uploaded document whose server is on loopback is refused the same way.
        await refused({ document: petsYaml(`http://127.0.0.1:${port}`) }, /127\.0\.0\.1 is not allowed/, /127\.0\.0\.1/, 'base_url');
        expect(hits).toBe(0);
        await setPreference(true);
        const ok = await create({ name: 'counted', url: `http://127.0.0.1:${port}/openapi.yaml`, preview: true });
        expect(ok.statusCode).toBe(201);
        expect(ok.json().data.status).toBe('preview');
        expect(hits).toBe(1);
        // A $ref to a URL is never followed: the document cannot make the gateway fetch anything.
        const far = doc({
          '/far': {
            post: {
              operationId: 'far',
              requestBody: { content: { 'application/json': { schema: { $ref: `http://127.0.0.1:${port}/schema.json` } } } },
              responses: { '200': { description: 'ok' } },
            },
          },
        });
        const previewed = await create({ name: 'far', document: far, preview: true });
        expect(previewed.statusCode).toBe(201);
        expect(hits).toBe(1);
      } finally {
        await setPreference(true);
        counting.closeAllConnections();
        await new Promise<void>((resolve) => counting.close(() => resolve()));
      }
    });
  });
});
