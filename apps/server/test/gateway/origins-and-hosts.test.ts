import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addService, addUser, type LiveGateway, startGateway } from './gateway-harness.js';
import { ACCEPT_BOTH, initializeBody, post, raw } from './raw-http.js';

/** A request with a Host header of our choosing (fetch does not let a caller set Host). */
function withHost(url: string, host: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  const body = JSON.stringify(initializeBody());
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        headers: { host, accept: ACCEPT_BOTH, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * DNS-rebinding protection and CORS on the MCP endpoints (origin-policy.ts), and the JSON 404s of
 * paths the console does not own or of requests that prefer JSON (http/static.ts).
 */
describe('MCP endpoints: allowed hosts and origins', () => {
  let gw: LiveGateway;
  let alice: { id: number; key: string };
  let mcp: string;
  let port: string;

  beforeAll(async () => {
    gw = await startGateway('sqlite', { ALLOWED_HOSTS: 'mcp.internal', ALLOWED_ORIGINS: 'https://app.example.com' });
    alice = await addUser(gw.ctx, 'alice');
    await addService(gw.ctx, { name: 'everything' });
    mcp = `${gw.url}/proxy/everything/mcp`;
    port = new URL(gw.url).port;
  });
  afterAll(async () => gw?.close());

  it('refuses a DNS name it does not know with 403 and serves IP literals, localhost, ALLOWED_HOSTS and the server address', async () => {
    const auth = { authorization: `Bearer ${alice.key}` };
    const rebound = await withHost(mcp, `evil.example:${port}`, auth);
    expect(rebound.status).toBe(403);
    expect(JSON.parse(rebound.body)).toMatchObject({ error: { code: -32000, message: expect.stringContaining('Host') } });
    for (const host of [`127.0.0.1:${port}`, `[::1]:${port}`, '192.168.1.10:3000', `localhost:${port}`, 'mcp.internal', 'MCP.Internal.']) {
      expect((await withHost(mcp, host, auth)).status, host).toBe(200);
    }
    expect((await withHost(mcp, 'tools.example.com', auth)).status).toBe(403);
    await gw.ctx.options.set('ServerAddress', 'https://tools.example.com');
    expect((await withHost(mcp, 'tools.example.com', auth)).status).toBe(200);
    expect((await withHost(mcp, 'evil.tools.example.com', auth)).status).toBe(403);
    await gw.ctx.options.set('ServerAddress', '');
    // The legacy SSE endpoint is guarded the same way (refused before anything streams).
    const sse = await withHost(`${gw.url}/proxy/everything/message?sessionId=x`, 'evil.example', auth);
    expect(sse.status).toBe(403);
  });

  it('answers a preflight from an allowed origin with the methods and MCP headers, and refuses any other origin', async () => {
    const preflight = (origin: string, url = mcp) =>
      raw(url, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, mcp-session-id' },
      });
    const ok = await preflight('https://app.example.com');
    expect(ok.status).toBe(204);
    expect(ok.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    expect(ok.headers.get('access-control-allow-methods')).toBe('GET, POST, DELETE');
    const allowed = (ok.headers.get('access-control-allow-headers') ?? '').toLowerCase();
    for (const h of ['authorization', 'content-type', 'mcp-session-id', 'mcp-protocol-version', 'last-event-id'])
      expect(allowed).toContain(h);
    expect(ok.headers.get('access-control-expose-headers')).toContain('Mcp-Session-Id');
    expect(ok.headers.get('vary')).toBe('Origin');
    expect((await preflight('https://app.example.com', `${gw.url}/proxy/everything/sse`)).headers.get('access-control-allow-methods')).toBe(
      'GET',
    );

    const refused = await preflight('https://evil.example');
    expect(refused.status).toBe(403);
    expect(refused.headers.get('access-control-allow-origin')).toBeNull();
    // Not a preflight: 405 with Allow, as before.
    const plain = await raw(mcp, { method: 'OPTIONS' });
    expect(plain.status).toBe(405);
    expect(plain.headers.get('allow')).toBe('GET, POST, DELETE');
  });

  it('lets an admin allow an origin in the preferences, at once, and takes it back', async () => {
    const from = (origin: string) => post(mcp, alice.key, initializeBody(), { origin });
    expect((await from('https://console.partner.example')).status).toBe(403);
    await gw.ctx.options.set('AllowedOrigins', 'https://console.partner.example');
    const ok = await from('https://console.partner.example');
    expect(ok.status).toBe(200);
    expect(ok.headers.get('access-control-allow-origin')).toBe('https://console.partner.example');
    expect(ok.headers.get('access-control-expose-headers')).toContain('Mcp-Session-Id');
    expect(ok.headers.get('mcp-session-id')).toBeTruthy();
    // A browser client on an allowed origin can read the 401 text too.
    const noKey = await post(mcp, undefined, initializeBody(), { origin: 'https://console.partner.example' });
    expect(noKey.status).toBe(401);
    expect(noKey.headers.get('access-control-allow-origin')).toBe('https://console.partner.example');
    expect(noKey.headers.get('access-control-expose-headers')).toContain('WWW-Authenticate');
    await gw.ctx.options.set('AllowedOrigins', '');
    const gone = await from('https://console.partner.example');
    expect(gone.status).toBe(403);
    expect(gone.headers.get('access-control-allow-origin')).toBeNull();
    // Same-origin and non-browser requests get no CORS headers.
    expect((await post(mcp, alice.key, initializeBody())).headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('paths the console does not own answer JSON 404s', () => {
  let gw: LiveGateway;
  beforeAll(async () => {
    gw = await startGateway('sqlite');
  });
  afterAll(async () => gw?.close());

  const get = (path: string, accept: string) => raw(`${gw.url}${path}`, { headers: { accept } });
  const html = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

  it('answers the OAuth metadata probes of mcp-remote and the SDK with JSON, never the page', async () => {
    // The metadata Toolport publishes as an OAuth server (modules/authorization-server) is JSON whatever the client accepts.
    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-authorization-server']) {
      for (const accept of ['application/json', '*/*', html]) {
        const res = await get(path, accept);
        expect(res.status, `${path} ${accept}`).toBe(200);
        expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      }
    }
    // Any other well-known path is a JSON 404, in the language asked for; under the OAuth metadata paths in
    // the OAuth format (decision 0041).
    for (const [path, body] of [
      ['/.well-known/mcp-unknown', { success: false, message: 'Nothing here: GET /.well-known/mcp-unknown' }],
      [
        '/.well-known/oauth-protected-resource/nowhere/x/mcp',
        { error: 'invalid_request', error_description: 'Nothing here: GET /.well-known/oauth-protected-resource/nowhere/x/mcp' },
      ],
    ] as const) {
      for (const accept of ['application/json', '*/*', html]) {
        const res = await get(path, accept);
        expect(res.status, `${path} ${accept}`).toBe(404);
        expect(res.headers.get('content-type')).toMatch(/^application\/json/);
        expect(res.json()).toEqual(body);
      }
    }
    const zh = await raw(`${gw.url}/.well-known/mcp-unknown`, { headers: { 'accept-language': 'zh-CN' } });
    expect(zh.json()).toEqual({ success: false, message: '此处没有内容：GET /.well-known/mcp-unknown' });
  });

  it('answers typos under /proxy and /group, and requests that prefer JSON, with JSON; anything else gets the console', async () => {
    for (const path of ['/proxy/everything/mpc', '/proxy', '/group/team/mpc', '/group']) {
      const res = await get(path, html);
      expect(res.status, path).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    }
    for (const accept of ['application/json', 'text/event-stream']) {
      const res = await get('/services', accept);
      expect(res.status, accept).toBe(404);
      expect(res.json()).toEqual({ success: false, message: 'Nothing here: GET /services' });
    }
    // Browsers, and clients that accept anything (curl, uptime monitors, link previews), get the console (issue 24).
    for (const accept of [html, '*/*']) {
      const page = await get('/services', accept);
      expect(page.status, accept).toBe(200);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    }
  });
});
