import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './harness.js';
import { rawRequest } from './kits/raw-socket.js';

/**
 * HTTP hygiene (issue 24): requests whose meaning depends on who parses them are refused with 400 in the
 * shape of the path they were meant for, and the console is served to clients that accept anything. Over a
 * raw socket, so nothing tidies the bytes on the way (inject and fetch would).
 */
describe('HTTP hygiene', () => {
  let t: TestApp;
  let port: number;

  beforeAll(async () => {
    t = await createTestApp('sqlite');
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    port = (t.app.server.address() as AddressInfo).port;
  });
  afterAll(async () => t?.close());

  const get = (path: string, headers: string) => rawRequest(port, `GET ${path} HTTP/1.1\r\n${headers}Connection: close\r\n\r\n`);

  it('refuses two Host headers with 400 on every kind of path, in that path’s shape', async () => {
    const twoHosts = 'Host: 127.0.0.1\r\nHost: evil.example\r\n';
    const api = await get('/api/status', twoHosts);
    expect([api.status, JSON.parse(api.body)]).toEqual([400, { success: false, message: 'The request carries more than one Host header' }]);
    const oauth = await get('/.well-known/oauth-authorization-server', twoHosts);
    expect([oauth.status, JSON.parse(oauth.body)]).toEqual([
      400,
      { error: 'invalid_request', error_description: 'The request carries more than one Host header' },
    ]);
    const zh = await get('/oauth2/authorize?client_id=x', `${twoHosts}Accept-Language: zh-CN\r\n`);
    expect([zh.status, JSON.parse(zh.body).error_description]).toEqual([400, '请求包含多个 Host 头']);
    const proxy = await get('/proxy/nothing/mcp', twoHosts);
    expect([proxy.status, JSON.parse(proxy.body).error.message]).toEqual([
      400,
      'Bad Request: The request carries more than one Host header',
    ]);
    // The same host twice is no less ambiguous to whoever counts headers: refused too.
    expect((await get('/api/status', 'Host: 127.0.0.1\r\nHost: 127.0.0.1\r\n')).status).toBe(400);
    // One Host is fine.
    expect((await get('/api/status', 'Host: 127.0.0.1\r\n')).status).toBe(200);
  });

  it('refuses conflicting or duplicate Content-Length and Transfer-Encoding (Node’s parser), answered in the path’s shape', async () => {
    const post = (path: string, headers: string, body: string) =>
      rawRequest(port, `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n${headers}\r\n${body}`);
    const cases: [string, string, string][] = [
      ['Content-Length and Transfer-Encoding', 'Content-Length: 2\r\nTransfer-Encoding: chunked\r\n', '2\r\n{}\r\n0\r\n\r\n'],
      ['Transfer-Encoding and Content-Length', 'Transfer-Encoding: chunked\r\nContent-Length: 2\r\n', '2\r\n{}\r\n0\r\n\r\n'],
      ['two different Content-Lengths', 'Content-Length: 2\r\nContent-Length: 40\r\n', '{}'],
      ['two equal Content-Lengths', 'Content-Length: 2\r\nContent-Length: 2\r\n', '{}'],
      ['a list as Content-Length', 'Content-Length: 2, 40\r\n', '{}'],
      ['a Content-Length that is no number', 'Content-Length: 2x\r\n', '{}'],
      ['a Transfer-Encoding that does not end in chunked', 'Transfer-Encoding: chunked, gzip\r\n', '{}'],
      ['an unknown Transfer-Encoding', 'Transfer-Encoding: xchunked\r\n', '{}'],
      ['a space before the colon', 'Transfer-Encoding : chunked\r\nContent-Length: 2\r\n', '{}'],
    ];
    for (const [what, headers, body] of cases) {
      const api = await post('/api/auth/login', headers, body);
      expect([api.status, JSON.parse(api.body)], what).toEqual([400, { success: false, message: 'The HTTP request could not be read' }]);
      const oauth = await post('/oauth2/register', headers, body);
      expect([oauth.status, JSON.parse(oauth.body)], what).toEqual([
        400,
        { error: 'invalid_request', error_description: 'The HTTP request could not be read' },
      ]);
    }
  });

  it('serves the console to clients that accept anything, and JSON 404s where the console does not belong or JSON is preferred', async () => {
    for (const path of ['/', '/services', '/oauth/consent?request=x', '/users/7']) {
      for (const accept of ['', 'Accept: */*\r\n', 'Accept: text/html\r\n', 'Accept: text/*\r\n']) {
        const res = await get(path, `Host: 127.0.0.1\r\n${accept}`);
        expect([res.status, res.headers['content-type']], `${path} ${accept}`).toEqual([200, 'text/html; charset=utf-8']);
      }
    }
    for (const accept of ['Accept: application/json\r\n', 'Accept: application/json, */*\r\n', 'Accept: text/event-stream\r\n']) {
      const res = await get('/services', `Host: 127.0.0.1\r\n${accept}`);
      expect([res.status, JSON.parse(res.body)], accept).toEqual([404, { success: false, message: 'Nothing here: GET /services' }]);
    }
    for (const path of ['/api/nothing', '/proxy/x/mpc', '/group/x/mpc', '/.well-known/mcp-unknown', '/metrics/x']) {
      const res = await get(path, 'Host: 127.0.0.1\r\nAccept: */*\r\n');
      expect([res.status, res.headers['content-type']], path).toEqual([404, 'application/json; charset=utf-8']);
    }
    const oauth = await get('/oauth2/nothing', 'Host: 127.0.0.1\r\n');
    expect([oauth.status, JSON.parse(oauth.body)]).toEqual([
      404,
      { error: 'invalid_request', error_description: 'Nothing here: GET /oauth2/nothing' },
    ]);
  });
});
