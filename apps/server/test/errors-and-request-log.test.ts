import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BuiltApp, buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/db.js';
import { createLogger } from '../src/infra/logger.js';
import { addUser } from './gateway/gateway-harness.js';
import { ADMIN_PASSWORD, createPgDatabase, engines } from './harness.js';

/**
 * The edges every request passes through: the error envelope, its languages, body limits, and the
 * one log line per request. The app is built here rather than by the harness so that a route which
 * fails on purpose can be added before it is ready, and so that its log can be read.
 */
const SECRET_IN_ERROR = 'connection password is hunter2';

describe.each(engines)('errors and request log on %s', (engine) => {
  let built: BuiltApp;
  let cleanup: () => Promise<void>;
  const logLines: string[] = [];
  const log = () => logLines.join('');

  beforeAll(async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'toolport-errors-'));
    const pgDb = engine === 'postgres' ? await createPgDatabase() : undefined;
    const config = loadConfig({
      DATA_DIR: dataDir,
      ADMIN_PASSWORD,
      SECRET_KEY: 'test-secret-key-that-is-long-enough-0123456789',
      LOG_LEVEL: 'info',
      ...(pgDb ? { DATABASE_URL: pgDb.url } : {}),
    });
    const database = openDatabase(config);
    const logger = createLogger(config.logLevel, { write: (line: string) => void logLines.push(line) });
    built = await buildApp({ config, database, logger, print: () => undefined });
    built.app.get('/api/test/explode', { config: { auth: 'public' } }, async () => {
      throw new Error(SECRET_IN_ERROR);
    });
    await built.app.ready();
    cleanup = async () => {
      await built.app.close();
      await database.db.destroy();
      await pgDb?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    };
  });
  afterAll(async () => cleanup?.());

  const login = (payload: string, headers: Record<string, string> = {}) =>
    built.app.inject({ method: 'POST', url: '/api/auth/login', headers: { 'content-type': 'application/json', ...headers }, payload });

  it('answers an unknown API route with a JSON 404, even to a browser', async () => {
    const res = await built.app.inject({ method: 'GET', url: '/api/no/such/route?x=1', headers: { accept: 'text/html' } });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json()).toEqual({ success: false, message: 'No API route GET /api/no/such/route' });

    const zh = await built.app.inject({ method: 'DELETE', url: '/api/no/such/route', headers: { 'accept-language': 'zh-CN' } });
    expect(zh.statusCode).toBe(404);
    expect(zh.json().message).toBe('没有 API 路由 DELETE /api/no/such/route');
  });

  it('leaves other unknown GET paths to the console page', async () => {
    const res = await built.app.inject({ method: 'GET', url: '/some/console/page', headers: { accept: 'text/html' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
  });

  it('answers a body that is not JSON with 400 invalid_json', async () => {
    const res = await login('{"username": "root",');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ success: false, code: 'invalid_json', message: 'The request body is not valid JSON' });
    const zh = await login('{', { 'accept-language': 'zh-CN' });
    expect(zh.json().message).toBe('请求体不是有效的 JSON');
  });

  it('names the field that failed validation', async () => {
    const res = await login(JSON.stringify({ username: 'root' }));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ success: false, code: 'validation_error', message: expect.stringContaining('password') });
  });

  it('refuses a body over 4 MiB with 413 and reads one just under it', async () => {
    const big = JSON.stringify({ username: 'x'.repeat(4 * 1024 * 1024), password: 'y' });
    const res = await login(big, { 'accept-language': 'zh-CN' });
    expect(res.statusCode).toBe(413);
    expect(res.json()).toEqual({ success: false, code: 'body_too_large', message: '请求体过大' });

    // Under the limit the body is parsed, and the schema then refuses the overlong username.
    const under = await login(JSON.stringify({ username: 'x'.repeat(4 * 1024 * 1024 - 100), password: 'y' }));
    expect(under.statusCode).toBe(400);
    expect(under.json().code).toBe('validation_error');
  });

  it('answers an unexpected error with a generic 500 and logs the details instead', async () => {
    const res = await built.app.inject({ method: 'GET', url: '/api/test/explode' });
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({ success: false, message: 'Internal server error, please try again later' });
    expect(res.body).not.toContain('hunter2');
    expect(res.body).not.toMatch(/\bat .+:\d+:\d+/);

    const zh = await built.app.inject({ method: 'GET', url: '/api/test/explode', headers: { 'accept-language': 'zh-CN,zh;q=0.9' } });
    expect(zh.json()).toEqual({ success: false, message: '服务器错误，请稍后重试' });

    const entry = logLines.map((l) => JSON.parse(l)).find((l) => l.msg === 'unhandled error');
    expect(entry?.err?.message).toBe(SECRET_IN_ERROR);
    expect(entry?.err?.stack).toContain('errors-and-request-log.test.ts');
  });

  it('writes one line per request without API keys or bearer tokens', async () => {
    const apiKey = 'tpk_request-log-api-key-value';
    const bearerToken = 'request-log-bearer-token-value';
    await built.app.inject({ method: 'GET', url: `/proxy/demo/sse?key=${apiKey}&x=1` });
    await built.app.inject({ method: 'GET', url: '/api/option/', headers: { authorization: `Bearer ${bearerToken}` } });

    // Whatever the gateway answers a key it does not know, the line is written with the key hidden.
    const requests = logLines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request');
    expect(requests.map((r) => r.url)).toEqual(expect.arrayContaining(['/proxy/demo/sse?key=[REDACTED]&x=1', '/api/option/']));
    expect(requests.find((r) => r.url === '/api/option/')?.status).toBe(401);
    expect(log()).not.toContain(apiKey);
    expect(log()).not.toContain(bearerToken);
  });

  it('writes no line for a group face call answered well, as for a service, and one for a refused one', async () => {
    const { key } = await addUser(built.ctx, 'log-quiet');
    const now = Date.now();
    await built.ctx.db
      .insertInto('groups')
      .values({
        name: 'quiet',
        display_name: 'quiet',
        description: '',
        mode: 'discovery',
        separator: '__',
        created_at: now,
        updated_at: now,
      })
      .execute();
    const post = (name: string) =>
      built.app.inject({
        method: 'POST',
        url: `/group/${name}/mcp`,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        payload: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'log', version: '1' } },
        }),
      });
    expect((await post('quiet')).statusCode).toBe(200);
    expect((await post('no-such-group')).statusCode).toBe(404);
    const requests = logLines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request');
    expect(requests.filter((r) => String(r.url).startsWith('/group/')).map((r) => [r.url, r.status])).toEqual([
      ['/group/no-such-group/mcp', 404],
    ]);
  });
});
