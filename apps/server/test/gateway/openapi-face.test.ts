import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { validate } from '@readme/openapi-parser';
import { Role } from '@toolport/contract';
import createClient from 'openapi-fetch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consent, pkce } from '../authorization-server/oauth-kit.js';
import { engines } from '../harness.js';
import { sendThenReset } from '../kits/raw-socket.js';
import { connect, connectUrl } from './clients.js';
import { addService, addUserWithToken, apiCall, type LiveGateway, startGateway } from './gateway-harness.js';

const require = createRequire(import.meta.url);
const memoryEntry = path.join(path.dirname(require.resolve('@modelcontextprotocol/server-memory/package.json')), 'dist/index.js');

type Doc = {
  openapi: string;
  servers: { url: string }[];
  paths: Record<string, { post: { operationId: string; requestBody: { content: Record<string, { schema: { $ref: string } }> } } }>;
  components: { schemas: Record<string, Record<string, unknown>> };
};
type ErrorBody = { detail: { code: string; message: string; content?: unknown[] } };

/**
 * The client's view of the tools these tests call, written by hand from the document's shape
 * (openapi-fetch takes its paths as a type; generating them with openapi-typescript at test time
 * would not type anything the compiler sees).
 */
interface EverythingPaths {
  '/echo': { post: { requestBody: { content: { 'application/json': { message: string } } }; responses: Answers<string> } };
  '/say': { post: { requestBody: { content: { 'application/json': { message: string } } }; responses: Answers<string> } };
  '/get-sum': { post: { requestBody: { content: { 'application/json': { a?: number; b?: number } } }; responses: Answers<string> } };
  '/get-tiny-image': { post: { requestBody: { content: { 'application/json': Record<string, never> } }; responses: Answers<unknown[]> } };
  '/get-structured-content': {
    post: {
      requestBody: { content: { 'application/json': { location: string } } };
      responses: Answers<{ temperature: number; conditions: string; humidity: number }>;
    };
  };
}
interface Answers<T> {
  200: { content: { 'application/json': T } };
  422: { content: { 'application/json': ErrorBody } };
  429: { content: { 'application/json': ErrorBody } };
}

/**
 * The OpenAPI face (issue 30 item 1, decision 0053) against real servers: server-everything and
 * server-memory behind the gateway, the document checked by a standard validator, calls through
 * openapi-fetch, the same access, overrides, limits and metering as /proxy, hostile input. Both engines.
 */
describe.each(engines)('the OpenAPI face on %s', (engine) => {
  let gw: LiveGateway;
  let memoryDir: string;
  let everything: number;
  let memory: number;
  let limited: number;
  let admin: { id: number; key: string; token: string };
  let alice: { id: number; key: string; token: string };
  let bob: { id: number; key: string; token: string };

  const face = (kind: 'proxy' | 'group', name: string) => `${gw.url}/openapi/${kind}/${name}`;
  const getDoc = (url: string, key: string, lang = 'en') =>
    fetch(`${url}/openapi.json`, { headers: { authorization: `Bearer ${key}`, 'accept-language': lang } });
  const post = (url: string, key: string | undefined, body: string | undefined, headers: Record<string, string> = {}) =>
    fetch(url, {
      method: 'POST',
      headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), 'content-type': 'application/json', ...headers },
      body,
    });
  const api = (method: string, url: string, body?: unknown) => apiCall(gw.url, admin.token, method, url, body);
  const mcpNames = async (url: URL, key: string) => {
    const client = await connectUrl(url, key, { sdk: 'v1', wire: 'http' });
    try {
      return (await client.listTools()).tools.map((t) => t.name).sort();
    } finally {
      await client.close();
    }
  };
  const operationIds = (doc: Doc) =>
    Object.values(doc.paths)
      .map((p) => p.post.operationId)
      .sort();
  /** The user's daily counter on a service, as stored after the journal is folded. */
  const counted = async (serviceId: number, userId: number) => {
    await gw.ctx.meter.flush();
    const rows = await gw.ctx.db
      .selectFrom('daily_counters')
      .select('request_count')
      .where('service_id', '=', serviceId)
      .where('user_id', '=', userId)
      .execute();
    return rows.reduce((n, r) => n + Number(r.request_count), 0);
  };

  beforeAll(async () => {
    gw = await startGateway(engine);
    memoryDir = mkdtempSync(path.join(tmpdir(), 'toolport-memory-'));
    everything = await addService(gw.ctx, { name: 'everything' });
    memory = await addService(gw.ctx, { name: 'memory', args: [memoryEntry], env: { MEMORY_FILE_PATH: path.join(memoryDir, 'm.jsonl') } });
    limited = await addService(gw.ctx, { name: 'limited', rpdLimit: 3 });
    admin = await addUserWithToken(gw.ctx, 'admin1', Role.Admin);
    alice = await addUserWithToken(gw.ctx, 'alice');
    bob = await addUserWithToken(gw.ctx, 'bob');
    expect((await api('PUT', `/mcp_services/${memory}`, { access: { restricted: true, user_ids: [bob.id] } })).status).toBe(200);
    const group = await api('POST', '/groups', { name: 'team', members: [{ service_id: everything }, { service_id: memory }] });
    expect(group.status).toBe(201);
  });
  afterAll(async () => {
    await gw?.close();
    rmSync(memoryDir, { recursive: true, force: true });
  });

  it('serves a valid OpenAPI 3.1 document with one POST per tool, named as the MCP endpoint names them', async () => {
    const res = await getDoc(face('proxy', 'everything'), alice.key);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as Doc;
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.servers).toEqual([{ url: `${gw.url}/openapi/proxy/everything` }]);
    // The standard validator (structure against the OpenAPI 3.1 schema, then the references and operation ids).
    await expect(validate(structuredClone(doc) as never)).resolves.toMatchObject({ valid: true });
    expect(operationIds(doc)).toEqual(await mcpNames(new URL(`${gw.url}/proxy/everything/mcp`), alice.key));
    expect(doc.paths['/get-sum']?.post.operationId).toBe('get-sum');
    // The request body is the tool's input schema.
    const sumSchema =
      doc.components.schemas[doc.paths['/get-sum']?.post.requestBody.content['application/json']?.schema.$ref.split('/').pop() ?? ''];
    expect(sumSchema).toMatchObject({ type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } });

    // A group's document: members' tools under {service}__{tool}; the restricted member's only for those on its list.
    const aliceGroup = (await (await getDoc(face('group', 'team'), alice.key)).json()) as Doc;
    await expect(validate(structuredClone(aliceGroup) as never)).resolves.toMatchObject({ valid: true });
    expect(operationIds(aliceGroup)).toEqual(await mcpNames(new URL(`${gw.url}/group/team/mcp`), alice.key));
    expect(operationIds(aliceGroup)).toContain('everything__echo');
    expect(operationIds(aliceGroup).some((n) => n.startsWith('memory__'))).toBe(false);
    const bobGroup = (await (await getDoc(face('group', 'team'), bob.key)).json()) as Doc;
    expect(operationIds(bobGroup)).toContain('memory__read_graph');
    expect(operationIds(bobGroup)).toEqual(await mcpNames(new URL(`${gw.url}/group/team/mcp`), bob.key));
  });

  it('calls tools through a generated client: text, JSON text, images, structured content, and tool errors as 422', async () => {
    const client = createClient<EverythingPaths>({
      baseUrl: face('proxy', 'everything'),
      headers: { authorization: `Bearer ${alice.key}` },
    });
    const echo = await client.POST('/echo', { body: { message: 'hi' } });
    expect([echo.response.status, echo.data]).toEqual([200, 'Echo: hi']);
    const sum = await client.POST('/get-sum', { body: { a: 1, b: 2 } });
    expect(sum.data).toBe('The sum of 1 and 2 is 3.');
    const weather = await client.POST('/get-structured-content', { body: { location: 'Chicago' } });
    expect(weather.data).toEqual({ temperature: 36, conditions: 'Light rain / drizzle', humidity: 82 });
    const image = await client.POST('/get-tiny-image', { body: {} });
    expect(image.response.status).toBe(200);
    expect((image.data as unknown[]).some((v) => typeof v === 'string' && v.startsWith('data:image/png;base64,'))).toBe(true);
    // The tool's own error (isError: true): 422 with its content, in the caller's language.
    const bad = await client.POST('/get-sum', { body: {}, headers: { 'accept-language': 'zh-CN' } });
    expect(bad.response.status).toBe(422);
    expect(bad.error?.detail.code).toBe('tool_error');
    expect(bad.error?.detail.message).toMatch(/^工具报告了错误：/);
    expect(bad.error?.detail.content?.length).toBeGreaterThan(0);
    // No body at all is no arguments (a tool without parameters, as Open WebUI may call it).
    const bare = await fetch(`${face('proxy', 'everything')}/get-tiny-image`, {
      method: 'POST',
      headers: { authorization: `Bearer ${alice.key}` },
    });
    expect(bare.status).toBe(200);
    // ?key= works as on /proxy.
    const byQuery = await post(`${face('proxy', 'everything')}/echo?key=${alice.key}`, undefined, JSON.stringify({ message: 'q' }));
    expect([byQuery.status, await byQuery.json()]).toEqual([200, 'Echo: q']);
  });

  it('applies tool overrides: an alias is the operation, a disabled tool is absent and refused 404', async () => {
    expect((await api('PUT', `/mcp_services/${everything}/tools/echo`, { alias: 'say' })).status).toBe(200);
    expect((await api('PUT', `/mcp_services/${everything}/tools/get-env`, { enabled: false })).status).toBe(200);
    try {
      const doc = (await (await getDoc(face('proxy', 'everything'), alice.key)).json()) as Doc;
      expect(operationIds(doc)).toContain('say');
      expect(operationIds(doc)).not.toContain('echo');
      expect(operationIds(doc)).not.toContain('get-env');
      const client = createClient<EverythingPaths>({
        baseUrl: face('proxy', 'everything'),
        headers: { authorization: `Bearer ${alice.key}` },
      });
      expect((await client.POST('/say', { body: { message: 'x' } })).data).toBe('Echo: x');
      for (const gone of ['echo', 'get-env']) {
        const res = await post(`${face('proxy', 'everything')}/${gone}`, alice.key, '{}');
        expect([gone, res.status, ((await res.json()) as ErrorBody).detail]).toEqual([
          gone,
          404,
          { code: 'unknown_tool', message: `Unknown tool: ${gone}` },
        ]);
      }
      // In the group too, under the member's prefix.
      const group = (await (await getDoc(face('group', 'team'), alice.key)).json()) as Doc;
      expect(operationIds(group)).toContain('everything__say');
      expect(operationIds(group)).not.toContain('everything__get-env');
      const viaGroup = await post(`${face('group', 'team')}/everything__say`, alice.key, JSON.stringify({ message: 'g' }));
      expect([viaGroup.status, await viaGroup.json()]).toEqual([200, 'Echo: g']);
    } finally {
      await api('PUT', `/mcp_services/${everything}/tools/echo`, { alias: null });
      await api('PUT', `/mcp_services/${everything}/tools/get-env`, { enabled: null });
    }
  });

  it('refuses a user off a restricted service 403 on the document and the call, also through an open group', async () => {
    const doc = await getDoc(face('proxy', 'memory'), alice.key, 'zh-CN');
    expect([doc.status, ((await doc.json()) as ErrorBody).detail]).toEqual([403, { code: 'no_access', message: '您无权使用 memory' }]);
    const call = await post(`${face('proxy', 'memory')}/read_graph`, alice.key, '{}');
    expect([call.status, ((await call.json()) as ErrorBody).detail]).toEqual([
      403,
      { code: 'no_access', message: 'You do not have access to memory' },
    ]);
    const viaGroup = await post(`${face('group', 'team')}/memory__read_graph`, alice.key, '{}');
    expect([viaGroup.status, ((await viaGroup.json()) as ErrorBody).detail.code]).toEqual([403, 'no_access']);
    // Bob, on the list, gets through both doors.
    expect((await getDoc(face('proxy', 'memory'), bob.key)).status).toBe(200);
    const bobs = await post(`${face('proxy', 'memory')}/read_graph`, bob.key, '{}');
    expect(bobs.status).toBe(200);
    expect(await bobs.json()).toMatchObject({ entities: [], relations: [] });
    expect((await post(`${face('group', 'team')}/memory__read_graph`, bob.key, '{}')).status).toBe(200);
    // What Bob's calls listed is his: Alice, after him, is still refused, and her document still lacks the member.
    expect((await post(`${face('group', 'team')}/memory__read_graph`, alice.key, '{}')).status).toBe(403);
    const aliceDoc = (await (await getDoc(face('group', 'team'), alice.key)).json()) as Doc;
    expect(operationIds(aliceDoc).some((n) => n.startsWith('memory__'))).toBe(false);
    // No key, a bad key: 401 with the MCP endpoint's challenge.
    const none = await post(`${face('proxy', 'everything')}/echo`, undefined, '{}');
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toContain('Bearer');
    expect((await getDoc(face('proxy', 'everything'), 'not-a-key')).status).toBe(401);
    // Unknown service and group: 404 in the caller's words.
    const unknown = await getDoc(face('group', 'nope'), alice.key);
    expect([unknown.status, ((await unknown.json()) as ErrorBody).detail.code]).toEqual([404, 'unknown_group']);
  });

  it('takes an OAuth access token bound to the service’s MCP endpoint, and refuses it on every other face', async () => {
    const redirect = 'http://127.0.0.1:7777/cb';
    const registered = await fetch(`${gw.url}/oauth2/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'OpenAPI face test', redirect_uris: [redirect] }),
    });
    expect(registered.status).toBe(201);
    const clientId = ((await registered.json()) as { client_id: string }).client_id;
    const { verifier, challenge } = pkce();
    const authorize = new URL(`${gw.url}/oauth2/authorize`);
    for (const [k, v] of Object.entries({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: redirect,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      resource: `${gw.url}/proxy/everything/mcp`,
    }))
      authorize.searchParams.set(k, v);
    const back = await consent(authorize, alice.token);
    const issued = await fetch(`${gw.url}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: back.searchParams.get('code') ?? '',
        code_verifier: verifier,
        client_id: clientId,
        redirect_uri: redirect,
      }),
    });
    const token = ((await issued.json()) as { access_token: string }).access_token;
    expect(token.split('.')).toHaveLength(3);
    expect((await getDoc(face('proxy', 'everything'), token)).status).toBe(200);
    const call = await post(`${face('proxy', 'everything')}/echo`, token, JSON.stringify({ message: 'token' }));
    expect([call.status, await call.json()]).toEqual([200, 'Echo: token']);
    // Bound to that service: another service, or a group holding it, refuses it with the MCP endpoint's challenge.
    for (const url of [`${face('proxy', 'limited')}/echo`, `${face('group', 'team')}/everything__echo`]) {
      const refused = await post(url, token, JSON.stringify({ message: 'token' }));
      expect([url, refused.status]).toEqual([url, 401]);
      expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"');
    }
    const challenged = await post(`${face('group', 'team')}/everything__echo`, token, '{}');
    expect(challenged.headers.get('www-authenticate')).toContain(
      `resource_metadata="${gw.url}/.well-known/oauth-protected-resource/group/team/mcp"`,
    );
  });

  it('counts each call as the same call over MCP and stops at the daily limit with 429', async () => {
    const carol = await addUserWithToken(gw.ctx, 'carol');
    const client = createClient<EverythingPaths>({ baseUrl: face('proxy', 'limited'), headers: { authorization: `Bearer ${carol.key}` } });
    // Reading the document lists tools: nothing counted.
    expect((await getDoc(face('proxy', 'limited'), carol.key)).status).toBe(200);
    expect(await counted(limited, carol.id)).toBe(0);
    expect((await client.POST('/echo', { body: { message: '1' } })).response.status).toBe(200);
    expect((await client.POST('/get-sum', { body: { a: 1, b: 1 } })).response.status).toBe(200);
    expect(await counted(limited, carol.id)).toBe(2);
    // One over MCP: the same counter.
    const mcp = await connect(gw.url, 'limited', carol.key, { sdk: 'v1', wire: 'http' });
    try {
      await mcp.callTool('echo', { message: 'mcp' });
    } finally {
      await mcp.close();
    }
    expect(await counted(limited, carol.id)).toBe(3);
    const over = await client.POST('/echo', { body: { message: '4' }, headers: { 'accept-language': 'zh-CN' } });
    expect([over.response.status, over.error?.detail]).toEqual([429, { code: 'daily_limit', message: '已达到每日请求上限：3/3' }]);
    // Over MCP the same refusal, in its own words.
    const again = await connect(gw.url, 'limited', carol.key, { sdk: 'v1', wire: 'http' });
    try {
      await expect(again.callTool('echo', { message: 'mcp' })).rejects.toThrow('daily request limit exceeded: 3/3');
    } finally {
      await again.close();
    }
    // Neither refusal nor an unknown tool (which never reaches the meter) is counted.
    expect((await post(`${face('proxy', 'limited')}/no-such-tool`, carol.key, '{}')).status).toBe(404);
    expect(await counted(limited, carol.id)).toBe(3);
  });

  it('cancels a call upstream when its client leaves, and records it ended', async () => {
    const dave = await addUserWithToken(gw.ctx, 'dave');
    const leaving = new AbortController();
    const call = fetch(`${face('proxy', 'everything')}/trigger-long-running-operation`, {
      method: 'POST',
      headers: { authorization: `Bearer ${dave.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ duration: 20, steps: 20 }),
      signal: leaving.signal,
    });
    setTimeout(() => leaving.abort(), 500);
    await expect(call).rejects.toThrow();
    // Well before the 20 s operation would have ended: one record, an error (cancelled), nothing left waiting.
    await expect
      .poll(
        async () => {
          await gw.ctx.meter.flush();
          return gw.ctx.db.selectFrom('request_records').select(['target', 'outcome']).where('user_id', '=', dave.id).execute();
        },
        { timeout: 10_000, interval: 250 },
      )
      .toEqual([{ target: 'trigger-long-running-operation', outcome: 'error' }]);
  });

  it('makes no call for a client that left while its call was being checked', async () => {
    const erin = await addUserWithToken(gw.ctx, 'erin');
    const body = JSON.stringify({ duration: 1, steps: 1 });
    const request =
      `POST /openapi/proxy/everything/trigger-long-running-operation HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
      `Authorization: Bearer ${erin.key}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    // The whole request, then a reset a moment later: the gateway is still checking the caller and listing the tools.
    await sendThenReset(Number(new URL(gw.url).port), request);
    // The operation would have ended after 1 s and been recorded answered; it was never started (or, had the gateway
    // been quicker than the reset, cancelled).
    await new Promise((r) => setTimeout(r, 2_500));
    await gw.ctx.meter.flush();
    const records = await gw.ctx.db.selectFrom('request_records').select('outcome').where('user_id', '=', erin.id).execute();
    expect(records.filter((r) => r.outcome === 'ok')).toEqual([]);
  });

  it('answers hostile input with a clear 4xx, never a 500', async () => {
    const url = face('proxy', 'everything');
    for (const tool of ['%2E%2E%2Fmcp', '..%2F..%2Fapi%2Fstatus', '%2F', '__proto__', 'constructor', 'toString', '%00', 'a%7Bb%7D']) {
      const res = await post(`${url}/${tool}`, alice.key, '{}');
      const body = (await res.json()) as ErrorBody;
      expect([tool, res.status, body.detail.code]).toEqual([tool, 404, 'unknown_tool']);
    }
    const protoService = await getDoc(face('proxy', '__proto__'), alice.key);
    expect(protoService.status).toBe(404);
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const nested = await post(`${url}/echo`, alice.key, `{"message":${deep}}`);
    expect([nested.status, ((await nested.json()) as ErrorBody).detail.code]).toEqual([400, 'too_deep']);
    const cases: [string, string, Record<string, string>, number, string][] = [
      ['not JSON', '{"message":', {}, 400, 'invalid_json'],
      ['an array', '[1,2]', {}, 400, 'not_an_object'],
      ['a string', '"x"', {}, 400, 'not_an_object'],
      ['null', 'null', {}, 400, 'not_an_object'],
      ['text/plain', '{}', { 'content-type': 'text/plain' }, 415, 'unsupported_media_type'],
      ['5 MiB', JSON.stringify({ message: 'x'.repeat(5 * 1024 * 1024) }), {}, 413, 'too_large'],
    ];
    for (const [label, body, headers, status, code] of cases) {
      const res = await post(`${url}/echo`, alice.key, body, headers);
      const answer = await res.text();
      expect([label, res.status, (JSON.parse(answer) as ErrorBody).detail.code]).toEqual([label, status, code]);
      expect(answer).not.toMatch(/at .*\.(ts|js):\d+/);
    }
    const zh = await post(`${url}/echo`, alice.key, '[]', { 'accept-language': 'zh-CN' });
    expect(((await zh.json()) as ErrorBody).detail.message).toBe('请求体必须是包含工具参数的 JSON 对象');
    // The wrong method: 405 naming the right one.
    const get = await fetch(`${url}/echo`, { headers: { authorization: `Bearer ${alice.key}` } });
    expect([get.status, get.headers.get('allow')]).toEqual([405, 'POST']);
    // The gateway is still well.
    const echo = await post(`${url}/echo`, alice.key, JSON.stringify({ message: 'still here' }));
    expect(await echo.json()).toBe('Echo: still here');
  });
});
