import { request as httpRequest } from 'node:http';
import { OptionKey, Role, UserStatus } from '@toolport/contract';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { UserRow } from '../../src/db/schema.js';
import { en } from '../../src/i18n/en.js';
import { zhCN } from '../../src/i18n/zh-CN.js';
import { hashPassword } from '../../src/infra/passwords.js';
import { issueApiKey } from '../../src/modules/users/api-keys.js';
import { type FakeRegistries, startFakeRegistries } from '../fake-registries.js';
import { ADMIN_PASSWORD, createTestApp, engines, type TestApp } from '../harness.js';
import {
  deepNesting,
  eachAssert,
  encode,
  fuzzOptions,
  hostileJson,
  hostileValue,
  hugeString,
  leaksInternals,
  malformedJsonText,
  Obj,
  printStats,
  queryValue,
  Raw,
  rawEscapes,
  runs,
  short,
  shown,
  TEST_TIMEOUT,
  tally,
  toJsonText,
  weirdString,
  within,
} from './generators.js';

/**
 * Property-based fuzzing of every /api route (issue 10, bad input): bodies, queries and path
 * parameters generated from the route's own schema (the OpenAPI document the zod schemas produce),
 * each field either plausible or hostile. Whatever arrives, the answer is a 2xx/3xx or a 4xx with the
 * JSON envelope and a message from the caller's language catalogue, never a 5xx, never a stack trace
 * or a server path, never a hang; /api/health still answers afterwards.
 *
 * Requests go as the super admin (so validation and the rules behind it are reached) and, on the
 * public routes, anonymously. Destructive routes meet throwaway users and services made for each
 * property; root and the preferences are put back after every run, so no run can lock the next out.
 */

interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: JsonSchema | boolean;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  format?: string;
  nullable?: boolean;
  default?: unknown;
}

interface Operation {
  parameters?: { in: string; name: string; schema?: JsonSchema }[];
  requestBody?: { content: Record<string, { schema: JsonSchema }> };
}

interface RouteUnderTest {
  method: string;
  url: string;
  auth: string;
  body?: JsonSchema;
  query: { name: string; schema: JsonSchema }[];
  params: { name: string; schema: JsonSchema }[];
}

/** The ids a run may name: throwaway rows of this property, and ids that exist nowhere. */
interface IdPool {
  users: number[];
  services: number[];
}

const DEFAULT_RUNS = 20;
const ANSWER_MS = 15_000;

/** Accept-Language headers and the catalogue each one must be answered from. */
const languages: [string | undefined, 'en' | 'zh-CN'][] = [
  ['zh-CN', 'zh-CN'],
  ['zh-CN,zh;q=0.9,en;q=0.8', 'zh-CN'],
  ['zh-TW', 'zh-CN'],
  ['en', 'en'],
  ['en-US,en;q=0.9', 'en'],
  [undefined, 'en'],
  ['fr-FR', 'en'],
  ['*;q=0.1, zh;q=0.5', 'zh-CN'],
  ['\u0000;q=NaN,,,;', 'en'],
];

const templateRegex = (template: string) =>
  new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{\w+\}/g, '[\\s\\S]*')}$`);
const catalogues = {
  en: Object.values(en).map(templateRegex),
  'zh-CN': Object.values(zhCN).map(templateRegex),
};

/** The message comes from the catalogue of the language asked for (zh-CN: the Chinese text). */
function isLocalised(message: string, locale: 'en' | 'zh-CN'): boolean {
  return catalogues[locale].some((re) => re.test(message));
}

// ---- requests generated from a route's schemas -------------------------------------------------

function plausible(schema: JsonSchema | undefined, ids: IdPool): fc.Arbitrary<unknown> {
  if (!schema || Object.keys(schema).length === 0) return hostileJson;
  const variants = schema.anyOf ?? schema.oneOf;
  if (variants) return fc.oneof(...variants.map((s) => plausible(s, ids)));
  if (schema.enum) return fc.constantFrom(...schema.enum);
  if (schema.const !== undefined) return fc.constant(schema.const);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  const inner = (() => {
    switch (type) {
      case 'string':
        return fc.oneof(
          fc.string({ minLength: schema.minLength ?? 0, maxLength: Math.min(schema.maxLength ?? 40, 40) }),
          fc.constantFrom('plain-name', 'fuzz.user_1', 'a@b.co', 'https://example.com/mcp', ''),
          fc.constantFrom(...ids.users, ...ids.services).map(String),
        );
      case 'integer':
      case 'number':
        return fc.oneof(
          fc.constantFrom(...ids.users, ...ids.services),
          fc.integer({ min: Math.max(schema.minimum ?? -1000, -(2 ** 31)), max: Math.min(schema.maximum ?? 1000, 2 ** 31 - 1) }),
        );
      case 'boolean':
        return fc.boolean();
      case 'array':
        return fc.array(plausible(schema.items, ids), { maxLength: 3 });
      case 'object':
        return plausibleObject(schema, ids);
      default:
        return hostileJson;
    }
  })();
  return schema.nullable ? fc.oneof(inner, fc.constant(null)) : inner;
}

/** Each field plausible (so the others pass and deeper rules are reached) or hostile; some missing, some extra. */
function plausibleObject(schema: JsonSchema, ids: IdPool): fc.Arbitrary<Obj> {
  const fields = Object.entries(schema.properties ?? {}).map(([name, s]) =>
    fc
      .oneof(
        { weight: 1, arbitrary: fc.constant(undefined) },
        { weight: 4, arbitrary: plausible(s, ids) },
        { weight: 3, arbitrary: hostileValue },
      )
      .map((v) => [name, v] as [string, unknown]),
  );
  const extra = typeof schema.additionalProperties === 'object' ? plausible(schema.additionalProperties, ids) : hostileJson;
  const extras = fc.array(
    fc.tuple(fc.oneof(fc.string({ maxLength: 10 }), fc.constantFrom('__proto__', 'constructor', 'id', 'role')), extra),
    {
      maxLength: 2,
    },
  );
  return fc.tuple(fc.tuple(...fields), extras).map(([pairs, more]) => new Obj([...pairs.filter(([, v]) => v !== undefined), ...more]));
}

interface Generated {
  url: string;
  payload?: string;
  contentType?: string;
  language: [string | undefined, 'en' | 'zh-CN'];
}

const otherContentTypes = [
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/json; charset=utf-16',
  'application/jsonx',
  'application/json, text/plain',
  'APPLICATION/JSON',
  'application/octet-stream',
  '',
];

function bodyArb(route: RouteUnderTest, ids: IdPool): fc.Arbitrary<{ payload?: string; contentType?: string }> {
  const valid = route.body ? plausible(route.body, ids).map(toJsonText) : fc.constant('{}');
  const text = fc.oneof(
    { weight: 6, arbitrary: valid },
    { weight: 2, arbitrary: hostileJson.map(toJsonText) },
    { weight: 1, arbitrary: deepNesting.map(toJsonText) },
    { weight: 2, arbitrary: malformedJsonText(valid) },
    { weight: 1, arbitrary: fc.constant('') },
  );
  const contentType = fc.oneof(
    { weight: 8, arbitrary: fc.constant('application/json') },
    { weight: 2, arbitrary: fc.constantFrom(...otherContentTypes) },
  );
  const withBody = fc.record({ payload: text, contentType });
  // Routes without a body mostly go without one; sometimes one arrives anyway.
  return route.body ? withBody : fc.oneof({ weight: 4, arbitrary: fc.constant({}) }, { weight: 1, arbitrary: withBody });
}

function queryArb(route: RouteUnderTest, ids: IdPool): fc.Arbitrary<string> {
  const one = (name: string, schema: JsonSchema) =>
    fc.oneof(
      { weight: 2, arbitrary: fc.constant<string[]>([]) },
      {
        weight: 3,
        arbitrary: plausible(schema, ids).map((v) => [`${name}=${encode(typeof v === 'string' ? v : (JSON.stringify(v) ?? ''))}`]),
      },
      { weight: 3, arbitrary: queryValue.map((v) => [`${name}=${encode(v)}`]) },
      { weight: 1, arbitrary: fc.array(queryValue, { minLength: 2, maxLength: 3 }).map((vs) => vs.map((v) => `${name}=${encode(v)}`)) },
      { weight: 1, arbitrary: rawEscapes.map((e) => [`${name}=${e}`]) },
      { weight: 1, arbitrary: fc.constant([name]) },
      { weight: 1, arbitrary: hugeString.map((h) => [`${name}=${encode(h)}`]) },
    );
  const extras = fc.array(
    fc
      .tuple(fc.oneof(weirdString, fc.constantFrom('__proto__', 'constructor[prototype]', 'a[b]', 'key')), queryValue)
      .map(([k, v]) => `${encode(k)}=${encode(v)}`),
    { maxLength: 2 },
  );
  return fc
    .tuple(fc.tuple(...route.query.map((q) => one(q.name, q.schema))), extras)
    .map(([parts, more]) => [...parts.flat(), ...more].join('&'));
}

function pathArb(route: RouteUnderTest, ids: IdPool): fc.Arbitrary<string> {
  const segment = fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...ids.users, ...ids.services).map(String) },
    { weight: 3, arbitrary: weirdString.filter((s) => s !== '').map(encode) },
    { weight: 1, arbitrary: rawEscapes },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '-1',
        '0',
        '-0',
        '1e3',
        '0x10',
        '1.0',
        '99999999999999999999',
        '2147483648',
        'NaN',
        '%20',
        'self',
        'github',
      ),
    },
    { weight: 1, arbitrary: fc.string({ minLength: 90, maxLength: 300 }).map(encode) },
  );
  const names = route.params.map((p) => p.name);
  return fc.tuple(...names.map(() => segment)).map((values) => {
    let url = route.url;
    names.forEach((name, i) => {
      url = url.replace(`:${name}`, values[i] as string);
    });
    return url;
  });
}

function requestArb(route: RouteUnderTest, ids: IdPool): fc.Arbitrary<Generated> {
  return fc
    .record({
      path: pathArb(route, ids),
      query: queryArb(route, ids),
      body: bodyArb(route, ids),
      language: fc.constantFrom(...languages),
    })
    .map(({ path, query, body, language }) => {
      const url = query ? `${path}?${query}` : path;
      const text = `${route.method} ${short(url, 200)} [${body.contentType ?? 'no content type'}] ${body.payload === undefined ? '' : short(body.payload)} (${language[0]})`;
      return shown({ url, ...body, language }, text);
    });
}

// ---- what every answer must look like ------------------------------------------------------------

/** Answers that are not the JSON envelope by design when they succeed: a file download, the docs. */
const nonEnvelopeOk = new Set([
  'GET /api/mcp_market/export',
  // Toolport's OAuth Client ID Metadata Document: authorization servers read it as the document itself.
  'GET /api/upstream_oauth/client_metadata.json',
  // The audit trail as JSON lines (application/x-ndjson), one entry per line for a SIEM.
  'GET /api/audit/export',
]);

/** Routes that ask a tool server through the gateway (the console's Tools tab, overrides and Try it). */
const talksToUpstream = new Set([
  'GET /api/mcp_services/:id/tools',
  // An override names a tool of the live list: without the list it cannot be checked.
  'PUT /api/mcp_services/:id/tools/:original_name',
  'POST /api/mcp_services/:id/tools/:original_name/call',
]);

function checkAnswer(
  route: RouteUnderTest,
  what: string,
  res: { statusCode: number; headers: Record<string, unknown>; body: string },
  locale: 'en' | 'zh-CN',
): void {
  const label = `${route.method} ${route.url} → ${res.statusCode} for ${what.slice(0, 300)}`;
  tally(`${res.statusCode}`);
  // Routes that ask the tool server itself answer 502 when it cannot be reached (the throwaway services
  // point at a closed port): the gateway's own answer about another server, never a 500 of ours.
  const upstreamDown = res.statusCode === 502 && talksToUpstream.has(`${route.method} ${route.url}`);
  if (!upstreamDown) expect(res.statusCode, `${label}\n${res.body.slice(0, 500)}`).toBeLessThan(500);
  // Success answers may carry what admins are meant to read (install logs name paths); errors carry nothing internal.
  const leak = res.statusCode >= 400 ? leaksInternals(res.body) : /\n\s+at\s/.exec(res.body)?.[0];
  expect(leak, `${label} leaks internals`).toBeUndefined();
  if (res.statusCode < 400 && nonEnvelopeOk.has(`${route.method} ${route.url}`)) return;
  if (res.statusCode >= 300 && res.statusCode < 400) return;
  expect(String(res.headers['content-type']), label).toMatch(/^application\/json/);
  const body = JSON.parse(res.body) as { success?: unknown; message?: unknown };
  if (res.statusCode < 300) {
    expect(body.success, label).toBe(true);
    return;
  }
  expect(body.success, `${label}\n${res.body.slice(0, 500)}`).toBe(false);
  expect(typeof body.message, label).toBe('string');
  expect(isLocalised(body.message as string, locale), `${label}: "${body.message}" is not from the ${locale} catalogue`).toBe(true);
}

// ---- the suite ---------------------------------------------------------------------------------

/** The routes of the app, with their schemas as the API document describes them. */
async function routesOf(t: TestApp): Promise<RouteUnderTest[]> {
  const doc = (await t.app.inject({ method: 'GET', url: '/api/docs/openapi.json' })).json() as {
    paths: Record<string, Record<string, Operation>>;
  };
  return t.routes
    .filter((r) => r.url.startsWith('/api/') && !r.url.startsWith('/api/docs'))
    .map((r) => {
      const op = doc.paths[r.url.replace(/:(\w+)/g, '{$1}')]?.[r.method.toLowerCase()] ?? {};
      const params = op.parameters ?? [];
      const of = (where: string) => params.filter((p) => p.in === where).map((p) => ({ name: p.name, schema: p.schema ?? {} }));
      const pathNames = [...r.url.matchAll(/:(\w+)/g)].map((m) => m[1] as string);
      return {
        method: r.method,
        url: r.url,
        auth: r.auth,
        body: op.requestBody?.content['application/json']?.schema,
        query: of('query'),
        params: pathNames.map((name) => ({ name, schema: of('path').find((p) => p.name === name)?.schema ?? {} })),
      };
    });
}

const rootFields = ['username', 'display_name', 'email', 'password_hash', 'role', 'status', 'auth_version'] as const;

// A long hunt (FUZZ_RUNS) outlasts the configured per-test limit.
vi.setConfig({ testTimeout: TEST_TIMEOUT });

describe.each(engines)('API fuzz on %s', (engine) => {
  let t: TestApp;
  let registries: FakeRegistries;
  let routes: RouteUnderTest[];
  let root: UserRow;
  let rootToken: string;
  let options: Map<OptionKey, string>;
  let throwaways = 0;
  let throwawayHash: string;

  beforeAll(async () => {
    registries = await startFakeRegistries();
    // Registries are the local fake: nothing generated here reaches the internet.
    t = await createTestApp(engine, registries.env);
    // Nothing a run creates starts a process on its own.
    await t.ctx.options.set('StdioServiceStartupStrategy', 'demand');
    await t.ctx.options.set('HealthCheckIntervalSeconds', 0);
    options = new Map(OptionKey.options.map((k) => [k, t.ctx.options.get(k)]));
    root = (await t.ctx.usersRepo.byUsername('root')) as UserRow;
    rootToken = (await t.ctx.auth.issue(root)).access_token;
    routes = await routesOf(t);
    throwawayHash = await hashPassword('throwaway-password');
  });
  afterAll(async () => {
    if (t)
      for (const task of await t.ctx.db.selectFrom('install_tasks').select(['kind', 'status']).execute())
        tally(`install task ${task.kind} ${task.status}`);
    printStats(`API fuzz on ${engine}`);
    await t?.close();
    await registries?.close();
  });

  /** Puts root and the preferences back if a run changed them. */
  async function restore(): Promise<void> {
    const now = (await t.ctx.usersRepo.byId(root.id)) as UserRow | undefined;
    expect(now, 'root must never be deleted').toBeDefined();
    if (now && rootFields.some((f) => now[f] !== root[f])) {
      await t.ctx.usersRepo.update(root.id, Object.fromEntries(rootFields.map((f) => [f, root[f]])));
      t.ctx.events.emit({ type: 'user.changed', userId: root.id });
    }
    for (const [key, value] of options) if (t.ctx.options.get(key) !== value) await t.ctx.options.set(key, value);
  }

  /** A user and a remote service (nothing listens on its URL) that one property may edit or delete. */
  async function throwawayIds(): Promise<IdPool> {
    throwaways += 1;
    const key = issueApiKey(t.ctx.secrets);
    const now = Date.now();
    const user = await t.ctx.usersRepo.insert({
      username: `throwaway${throwaways}`,
      display_name: 'Throwaway',
      email: '',
      password_hash: throwawayHash,
      role: Role.User,
      status: UserStatus.Enabled,
      api_key_hash: key.hash,
      api_key_enc: key.encrypted,
      created_at: now,
      updated_at: now,
    });
    const service = await t.app.inject({
      method: 'POST',
      url: '/api/mcp_market/custom_service',
      headers: { authorization: `Bearer ${rootToken}` },
      payload: { name: `throwaway-${throwaways}`, type: 'sse', url: 'http://127.0.0.1:9/sse' },
    });
    expect(service.statusCode, service.body).toBeLessThan(300);
    const serviceId = (service.json() as { data: { service_id: number } }).data.service_id;
    expect(Number.isInteger(serviceId), service.body).toBe(true);
    // Ids that name nothing: far past every row, and at the integer limits.
    return { users: [user.id], services: [serviceId, 987_654, 2 ** 31 - 1] };
  }

  async function fuzzRoute(route: RouteUnderTest, asRoot: boolean, numRuns: number): Promise<void> {
    const ids = await throwawayIds();
    await fc.assert(
      fc.asyncProperty(requestArb(route, ids), fc.ipV4(), async (req, ip) => {
        const headers: Record<string, string> = {};
        if (asRoot) headers.authorization = `Bearer ${rootToken}`;
        if (req.language[0] !== undefined) headers['accept-language'] = req.language[0];
        if (req.contentType !== undefined) headers['content-type'] = req.contentType;
        const what = `${req.url} ${req.contentType ?? ''} ${req.payload?.slice(0, 200) ?? ''}`;
        const res = await within(
          ANSWER_MS,
          what,
          t.app.inject({
            method: route.method as 'GET',
            url: req.url,
            headers,
            remoteAddress: ip,
            ...(req.payload !== undefined ? { payload: req.payload } : {}),
          }),
        );
        await restore();
        checkAnswer(route, what, res, req.language[1]);
      }),
      fuzzOptions(numRuns),
    );
  }

  const label = (r: RouteUnderTest) => `${r.method} ${r.url}`;

  it('answers generated bodies, queries and path parameters on every route as the super admin', async () => {
    expect(routes.length).toBeGreaterThan(30);
    expect(await eachAssert(routes, label, (route) => fuzzRoute(route, true, runs(DEFAULT_RUNS)))).toEqual([]);
    expect((await t.app.inject({ method: 'GET', url: '/api/health' })).statusCode).toBe(200);
  });

  it('answers generated input on the public routes without a token', async () => {
    const publicRoutes = routes.filter((r) => r.auth === 'public');
    expect(publicRoutes.length).toBeGreaterThan(5);
    expect(await eachAssert(publicRoutes, label, (route) => fuzzRoute(route, false, runs(DEFAULT_RUNS)))).toEqual([]);
    expect((await t.app.inject({ method: 'GET', url: '/api/health' })).statusCode).toBe(200);
  });

  it('refuses bodies over the 4 MiB limit with 413 on every route that takes one', async () => {
    const big = JSON.stringify({ username: 'x'.repeat(4 * 1024 * 1024 + 10) });
    for (const route of routes.filter((r) => r.body)) {
      const asked: [string, 'en' | 'zh-CN'][] = [
        ['zh-CN', 'zh-CN'],
        ['en', 'en'],
      ];
      for (const [language, locale] of asked) {
        const res = await t.app.inject({
          method: route.method as 'POST',
          url: route.url.replace(/:\w+/g, '1'),
          headers: { authorization: `Bearer ${rootToken}`, 'content-type': 'application/json', 'accept-language': language },
          payload: big,
        });
        checkAnswer(route, 'a 4 MiB body', res, locale);
        expect(res.statusCode, `${route.method} ${route.url}`).toBe(413);
      }
    }
  });

  it('answers the inputs the fuzz once found failing with the localised envelope', async () => {
    const zh = { authorization: `Bearer ${rootToken}`, 'accept-language': 'zh-CN' };
    const cases: { method: 'GET' | 'POST' | 'DELETE'; url: string; payload?: object; status: number; message: string }[] = [
      // NUL characters: PostgreSQL refused the query (a 500) before the guard.
      { method: 'GET', url: '/api/mcp_market/install_status/%00abc', status: 400, message: '{field} 的值无效：文本不能包含 NUL 字符' },
      { method: 'GET', url: '/api/user/search?keyword=%00', status: 400, message: '{field} 的值无效：文本不能包含 NUL 字符' },
      {
        method: 'POST',
        url: '/api/auth/login',
        payload: { username: 'ro\u0000ot', password: 'x' },
        status: 400,
        message: '{field} 的值无效：文本不能包含 NUL 字符',
      },
      // Refused by the router before any hook: Fastify's own shape before frameworkErrors.
      { method: 'DELETE', url: `/api/user/${'9'.repeat(150)}`, status: 414, message: zhCN['error.param_too_long'] },
      { method: 'GET', url: '/api/mcp_market/install_status/%E0%A4%A', status: 400, message: zhCN['error.bad_url'] },
    ];
    for (const c of cases) {
      const res = await t.app.inject({ method: c.method, url: c.url, headers: zh, ...(c.payload ? { payload: c.payload } : {}) });
      expect(res.statusCode, `${c.method} ${c.url}`).toBe(c.status);
      expect(res.json().success, c.url).toBe(false);
      expect(res.json().message, c.url).toMatch(templateRegex(c.message));
    }
  });

  it('keeps root able to sign in with its password after all of it', async () => {
    await restore();
    expect(await t.login('root', ADMIN_PASSWORD)).toBeTypeOf('string');
  });

  // ---- over a real socket: what inject would normalise ---------------------------------------

  describe('over a real socket', () => {
    let base: { host: string; port: number };
    beforeAll(async () => {
      await t.app.listen({ host: '127.0.0.1', port: 0 });
      const address = t.app.server.address();
      if (!address || typeof address === 'string') throw new Error('not listening');
      base = { host: '127.0.0.1', port: address.port };
    });

    /** One HTTP/1.1 request with exactly these bytes as the body (chunked when no length is given). */
    function send(
      method: string,
      path: string,
      headers: Record<string, string>,
      body: Buffer | undefined,
      chunked: boolean,
    ): Promise<{ statusCode: number; headers: Record<string, unknown>; body: string }> {
      return new Promise((resolve, reject) => {
        const req = httpRequest(
          { ...base, method, path, headers: { ...headers, ...(body && !chunked ? { 'content-length': String(body.length) } : {}) } },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () =>
              resolve({ statusCode: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
            );
            res.on('error', reject);
          },
        );
        req.on('error', reject);
        if (body && chunked) {
          // Several chunks, so the body arrives in pieces as a streaming client would send it.
          for (let i = 0; i < body.length; i += 65_536) req.write(body.subarray(i, i + 65_536));
        } else if (body) req.write(body);
        req.end();
      });
    }

    const bytes = (name: string, b: Buffer) => shown({ b }, name);
    const rawBodies = fc.oneof(
      malformedJsonText(fc.constant('{"username":"nobody","password":"x"}')).map((s) => bytes(JSON.stringify(s), Buffer.from(s))),
      fc.constantFrom(
        // Invalid UTF-8 inside a JSON string, a UTF-16 body, the start of a gzip stream.
        bytes(
          'invalid UTF-8',
          Buffer.concat([Buffer.from('{"username":"'), Buffer.from([0xff, 0xfe, 0xc0, 0xaf, 0xed, 0xa0, 0x80]), Buffer.from('"}')]),
        ),
        bytes('UTF-16', Buffer.from('{"username":"a"}', 'utf16le')),
        bytes('gzip magic', Buffer.from([0x1f, 0x8b, 0x08, 0x00])),
        bytes('4 MiB string', Buffer.from(`{"a":"${'y'.repeat(4 * 1024 * 1024)}"}`)),
        bytes('10k nested arrays', Buffer.from(toJsonText(new Raw(`${'['.repeat(10_000)}${']'.repeat(10_000)}`)))),
      ),
    );
    // Header values a real client can send (the NUL one cannot travel over HTTP).
    const wireLanguages = languages.filter(([l]) => l === undefined || /^[\x20-\x7e]*$/.test(l));
    const rawContentTypes = fc.constantFrom(
      'application/json',
      'application/json; charset=latin1',
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data',
      'application/xml',
      '',
    );

    it('answers malformed, oversized and mislabelled bodies sent as bytes with the envelope', async () => {
      const withBody = routes.filter((r) => r.body);
      expect(withBody.length).toBeGreaterThan(5);
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...withBody),
          rawBodies,
          rawContentTypes,
          fc.boolean(),
          fc.constantFrom(...wireLanguages),
          fc.constantFrom('identity', 'gzip', 'br', 'x-unknown', ''),
          async (route, { b: body }, contentType, chunked, [language, locale], encoding) => {
            const headers: Record<string, string> = { authorization: `Bearer ${rootToken}` };
            if (contentType) headers['content-type'] = contentType;
            if (language) headers['accept-language'] = language;
            if (encoding) headers['content-encoding'] = encoding;
            const path = route.url.replace(/:\w+/g, '1');
            const res = await within(ANSWER_MS, `${route.method} ${path}`, send(route.method, path, headers, body, chunked));
            await restore();
            checkAnswer(route, `${body.length} bytes as ${contentType} (${encoding}, chunked ${chunked})`, res, locale);
          },
        ),
        fuzzOptions(runs(50)),
      );
    });

    it('answers a request Node cannot parse with the envelope, in the language asked for', async () => {
      // A byte past ASCII in the request line: Node's parser refuses it before Fastify sees a request.
      const res = await send('GET', '/api/health/\u00e9', { 'accept-language': 'zh-CN' }, undefined, false);
      expect(res.statusCode).toBe(400);
      expect(String(res.headers['content-type'])).toMatch(/^application\/json/);
      expect(JSON.parse(res.body)).toEqual({ success: false, message: zhCN['error.bad_request'] });
    });

    it('answers paths and query strings with broken escapes and control characters', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...routes),
          fc.array(fc.oneof(rawEscapes, fc.constantFrom('..', '.', '//', ';', '%2F', '%5C', '<a>', '\u00e9', '~', '"')), {
            minLength: 1,
            maxLength: 3,
          }),
          fc.constantFrom(...wireLanguages),
          async (route, pieces, [language, locale]) => {
            const params = route.url.includes(':');
            const path = params ? route.url.replace(/:\w+/g, pieces.join('')) : `${route.url}?x=${pieces.join('')}&${pieces.join('')}`;
            const headers: Record<string, string> = { authorization: `Bearer ${rootToken}` };
            if (language) headers['accept-language'] = language;
            const res = await within(ANSWER_MS, path, send(route.method, path, headers, undefined, false));
            await restore();
            checkAnswer(route, path, res, locale);
          },
        ),
        fuzzOptions(runs(50)),
      );
      const health = await send('GET', '/api/health', {}, undefined, false);
      expect(health.statusCode).toBe(200);
    });
  });
});
