import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addService } from '../gateway/gateway-harness.js';
import { bearer, createTestApp, engines, type TestApp } from '../harness.js';
import { type Answer, ask, type Expected, expectAnswer } from './hostile-kit.js';
import { fixtureServer, pkce } from './oauth-kit.js';

const HOST = 'toolport.test';
const BASE = `http://${HOST}`;
const REDIRECT = 'http://127.0.0.1:7777/cb';

type Route = '/oauth2/token' | '/oauth2/revoke' | '/oauth2/register';
const ROUTES: Route[] = ['/oauth2/token', '/oauth2/revoke', '/oauth2/register'];
const JSON_TYPE = 'application/json';
const FORM = 'application/x-www-form-urlencoded';

const deepArray = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
const deepObject = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;

/**
 * Hostile bodies for the three POST endpoints: what is sent, and what each endpoint answers (status and
 * code; registration speaks RFC 7591's invalid_client_metadata where the others say invalid_request).
 */
const BODIES: [name: string, type: string | undefined, payload: string, answers: Record<Route, Expected | 'ok'>][] = [
  ['malformed JSON', JSON_TYPE, '{"grant_type":', each(400)],
  ['an empty JSON body', JSON_TYPE, '', each(400)],
  ['JSON null', JSON_TYPE, 'null', each(400)],
  ['a JSON array where an object goes', JSON_TYPE, '[{"grant_type":"refresh_token"}]', each(400)],
  ['a JSON string', JSON_TYPE, '"grant_type"', each(400)],
  ['a number too large for a double', JSON_TYPE, '1e309', each(400)],
  // Fastify reads text/plain as a string: not a form, not a JSON object.
  ['text/plain', 'text/plain', 'grant_type=refresh_token', each(400)],
  ['application/xml', 'application/xml', '<grant_type/>', each(415)],
  ['a 100,000-deep array', JSON_TYPE, deepArray(100_000), { ...each(400), '/oauth2/register': err(413, 'invalid_client_metadata') }],
  ['a 100,000-deep object', JSON_TYPE, deepObject(100_000), { ...each(400), '/oauth2/register': err(413, 'invalid_client_metadata') }],
  [
    'a 6,000-deep object inside client metadata',
    JSON_TYPE,
    `{"redirect_uris":["${REDIRECT}"],"extra":${deepObject(6000)}}`,
    { ...each(400), '/oauth2/register': err(400, 'invalid_client_metadata') },
  ],
  ['a 5 MiB JSON body', JSON_TYPE, JSON.stringify({ grant_type: 'x'.repeat(5 * 1024 * 1024) }), each(413)],
  ['a 100 KiB form', FORM, `grant_type=${'x'.repeat(100 * 1024)}`, each(413)],
  ['a __proto__ key', JSON_TYPE, '{"__proto__":{"admin":true},"grant_type":"refresh_token"}', each(400)],
  ['a constructor.prototype key', JSON_TYPE, '{"constructor":{"prototype":{"admin":true}}}', each(400)],
  [
    'a __proto__ form field',
    FORM,
    '__proto__=x&grant_type=password&token=x',
    { '/oauth2/token': err(400, 'unsupported_grant_type'), '/oauth2/revoke': 'ok', '/oauth2/register': err(400, 'invalid_redirect_uri') },
  ],
  [
    'lone surrogates',
    JSON_TYPE,
    `{"grant_type":"\\ud800","token":"\\udc00x","client_name":"\\ud800","redirect_uris":["${REDIRECT}\\ud800"]}`,
    { '/oauth2/token': err(400, 'unsupported_grant_type'), '/oauth2/revoke': 'ok', '/oauth2/register': err(400, 'invalid_redirect_uri') },
  ],
  [
    'NUL in a value',
    JSON_TYPE,
    `{"grant_type":"refresh\\u0000","token":"a\\u0000","redirect_uris":["${REDIRECT}"],"client_name":"\\u0000"}`,
    each(400),
  ],
  ['NUL in a key', JSON_TYPE, `{"redirect_uris":["${REDIRECT}"],"a\\u0000":1}`, each(400)],
  ['NUL in a form field', FORM, 'grant_type=%00&token=%00', each(400)],
  [
    'a form field given twice',
    FORM,
    'grant_type=authorization_code&grant_type=refresh_token&token=a&token=b',
    { ...each(400), '/oauth2/register': err(400, 'invalid_redirect_uri') },
  ],
  [
    'broken percent-escapes',
    FORM,
    'grant_type=%E0%A4%A&token=%zz',
    { '/oauth2/token': err(400, 'unsupported_grant_type'), '/oauth2/revoke': 'ok', '/oauth2/register': err(400, 'invalid_redirect_uri') },
  ],
];

/** The same status on every route, with each route's own code for a body it cannot take. */
function each(status: number): Record<Route, Expected> {
  return {
    '/oauth2/token': err(status, 'invalid_request'),
    '/oauth2/revoke': err(status, 'invalid_request'),
    '/oauth2/register': err(status, 'invalid_client_metadata'),
  };
}
function err(status: number, error: string): Expected {
  return { status, error };
}

/**
 * Authorization requests of a client anyone registered and nobody approved: every refusal stays with the
 * browser (400/401 JSON for programs, Toolport's error page for people), never the client's redirect URI.
 */
const AUTHORIZE: [name: string, over: Record<string, string | string[] | undefined>, status: number, error: string, reason: string][] = [
  ['no client_id', { client_id: undefined }, 400, 'invalid_request', 'missing_param'],
  ['an unknown client', { client_id: 'tpc_nobody' }, 401, 'invalid_client', 'unknown_client'],
  ['client_id given twice', { client_id: ['tpc_a', 'tpc_b'] }, 400, 'invalid_request', 'missing_param'],
  ['client_id with NUL', { client_id: 'tpc_\u0000' }, 400, 'invalid_request', 'nul_character'],
  ['client_id with a lone surrogate', { client_id: 'tpc_\ud800' }, 401, 'invalid_client', 'unknown_client'],
  ['a 5,000-character client_id', { client_id: 'x'.repeat(5000) }, 401, 'invalid_client', 'unknown_client'],
  ['a javascript: client_id', { client_id: 'javascript:alert(1)' }, 401, 'invalid_client', 'unknown_client'],
  ['a foreign redirect_uri', { redirect_uri: 'https://evil.example/cb' }, 400, 'invalid_request', 'redirect_mismatch'],
  ['a javascript: redirect_uri', { redirect_uri: 'javascript:alert(1)//' }, 400, 'invalid_request', 'redirect_mismatch'],
  ['the redirect_uri with a fragment', { redirect_uri: `${REDIRECT}#x` }, 400, 'invalid_request', 'redirect_mismatch'],
  [
    'the redirect_uri with another query',
    { redirect_uri: `${REDIRECT}?next=https://evil.example` },
    400,
    'invalid_request',
    'redirect_mismatch',
  ],
  ['userinfo pointing elsewhere', { redirect_uri: 'http://127.0.0.1:7777@evil.example/cb' }, 400, 'invalid_request', 'redirect_mismatch'],
  ['response_type=token', { response_type: 'token' }, 400, 'unsupported_response_type', 'response_type_code'],
  ['no response_type', { response_type: undefined }, 400, 'unsupported_response_type', 'response_type_code'],
  ['no code_challenge', { code_challenge: undefined }, 400, 'invalid_request', 'pkce_required'],
  ['code_challenge_method=plain', { code_challenge_method: 'plain' }, 400, 'invalid_request', 'pkce_s256'],
  ['a malformed code_challenge', { code_challenge: 'short' }, 400, 'invalid_request', 'bad_challenge'],
  ['a resource on another origin', { resource: 'https://evil.example/proxy/echo/mcp' }, 400, 'invalid_target', 'bad_resource'],
  ['two resources', { resource: [`${BASE}/proxy/echo/mcp`, `${BASE}/`] }, 400, 'invalid_target', 'one_resource'],
  ['a resource outside the MCP paths', { resource: `${BASE}/api/user/self` }, 400, 'invalid_target', 'bad_resource'],
  ['a 3,000-character state', { state: 's'.repeat(3000) }, 400, 'invalid_request', 'state_too_long'],
  ['NUL in response_type', { response_type: 'code\u0000' }, 400, 'invalid_request', 'nul_character'],
];

/** Paths and methods the OAuth server does not serve: 404 and 405 in the OAuth format too. */
const UNKNOWN: [method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH', path: string, status: number][] = [
  ['GET', '/oauth2/token', 405],
  ['PUT', '/oauth2/token', 405],
  ['DELETE', '/oauth2/register', 405],
  ['GET', '/oauth2/revoke', 405],
  ['POST', '/oauth2/authorize', 405],
  ['POST', '/.well-known/oauth-authorization-server', 405],
  ['PATCH', '/.well-known/openid-configuration', 405],
  ['DELETE', '/.well-known/oauth-protected-resource', 405],
  ['POST', '/.well-known/oauth-protected-resource/proxy/echo/mcp', 405],
  ['GET', '/oauth2', 404],
  ['GET', '/oauth2/nothing', 404],
  ['POST', '/oauth2/token/extra', 404],
  ['GET', '/.well-known/oauth-authorization-server/issuer/path', 404],
  ['GET', '/.well-known/openid-configuration/x', 404],
  ['GET', '/.well-known/oauth-protected-resource/nowhere', 404],
  ['GET', '/.well-known/oauth-protected-resource/proxy/%E0%A4%A/mcp', 400],
  ['GET', `/.well-known/oauth-protected-resource/proxy/${'x'.repeat(300)}/mcp`, 414],
];

/** Every protocol route, to be called with a Host the gateway does not answer to. */
const EVERY_ROUTE: [method: 'GET' | 'POST', path: string][] = [
  ['GET', '/.well-known/oauth-authorization-server'],
  ['GET', '/.well-known/openid-configuration'],
  ['GET', '/.well-known/oauth-protected-resource'],
  ['GET', '/.well-known/oauth-protected-resource/proxy/echo/mcp'],
  ['GET', '/.well-known/oauth-protected-resource/proxy/echo/sse'],
  ['GET', '/.well-known/oauth-protected-resource/group/team/mcp'],
  ['GET', '/oauth2/authorize?client_id=tpc_x'],
  ['POST', '/oauth2/token'],
  ['POST', '/oauth2/register'],
  ['POST', '/oauth2/revoke'],
];
const FOREIGN_HOSTS = ['evil.example', 'EVIL.example.:8443', 'toolport.test.evil.example', 'toolport.test@evil.example'];

/**
 * The OAuth server against hostile input (issue 24, decision 0041), on SQLite and PostgreSQL: whatever
 * arrives, the answer is an OAuth error with the RFC's code and a fitting status (never a 5xx, never the
 * console's envelope, never a stack trace), no refusal is sent to an untrusted redirect URI, and no URL
 * is built on a Host the gateway does not answer to. Fetches strangers cause: hostile-fetches.test.ts.
 */
describe.each(engines)('OAuth server against hostile input (%s)', (engine) => {
  let t: TestApp;
  let app: FastifyInstance;
  let clientId: string;
  let adminClientId: string;
  let user: { id: number; token: string };

  const authorizeUrl = (over: Record<string, string | string[] | undefined> = {}, id = clientId) => {
    const q = new URLSearchParams();
    const params: Record<string, string | string[] | undefined> = {
      response_type: 'code',
      client_id: id,
      redirect_uri: REDIRECT,
      code_challenge: pkce().challenge,
      code_challenge_method: 'S256',
      state: 'st',
      resource: `${BASE}/proxy/echo/mcp`,
      ...over,
    };
    for (const [k, v] of Object.entries(params)) for (const one of v === undefined ? [] : [v].flat()) q.append(k, one);
    return `/oauth2/authorize?${q}`;
  };
  const authorize = (url: string, headers: Record<string, string> = {}): Promise<Answer> =>
    ask(app, { method: 'GET', url, headers: { host: HOST, accept: 'application/json', ...headers } });

  beforeAll(async () => {
    t = await createTestApp(engine, { ALLOWED_HOSTS: HOST });
    app = t.app;
    await addService(t.ctx, { name: 'echo', args: [fixtureServer] });
    user = await t.createUser();
    const register = async (headers: Record<string, string>) => {
      const res = await app.inject({
        method: 'POST',
        url: '/oauth2/register',
        headers: { host: HOST, ...headers },
        payload: { client_name: 'Hostile Suite', redirect_uris: [REDIRECT] },
        remoteAddress: '10.9.9.9',
      });
      expect(res.statusCode).toBe(201);
      return res.json().client_id as string;
    };
    clientId = await register({});
    adminClientId = await register(bearer(await t.rootToken()));
  }, 60_000);
  afterAll(async () => t?.close());

  describe('bodies the token, revocation and registration endpoints cannot take', () => {
    const cases = BODIES.flatMap(([name, type, payload, answers]) =>
      ROUTES.map((route) => ({ name, type, payload, route, expected: answers[route] })),
    );
    it.each(cases)('$route, $name', async ({ name, type, payload, route, expected }) => {
      const answer = await ask(app, {
        method: 'POST',
        url: route,
        headers: { host: HOST, ...(type ? { 'content-type': type } : {}) },
        payload,
        // Each case from its own address: the registration limit is not what is tested here.
        remoteAddress: `10.1.${cases.findIndex((c) => c.name === name && c.route === route) % 250}.1`,
      });
      if (expected === 'ok') {
        expect([answer.status, answer.body]).toEqual([200, '{}']);
        return;
      }
      expectAnswer(answer, expected, `${route} ${name}`);
    });
  });

  describe('authorization requests of a client nobody approved', () => {
    it.each(AUTHORIZE)('%s: an OAuth error for programs, never the redirect URI', async (name, over, status, error) => {
      expectAnswer(await authorize(authorizeUrl(over)), { status, error }, name);
    });
    it.each(AUTHORIZE)('%s: Toolport’s error page for a browser', async (name, over, _status, error, reason) => {
      const answer = await authorize(authorizeUrl(over), { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' });
      expectAnswer(answer, { status: 303, location: `/oauth/error?error=${error}&reason=${reason}` }, name);
      // Exactly Toolport's own page with two names from fixed lists: nothing of the request is reflected.
      expect(answer.headers.location).toBe(`/oauth/error?error=${error}&reason=${reason}`);
    });
  });

  describe('redirect URIs that are trusted', () => {
    it('sends an admin-registered client its errors, with the state encoded, never raw', async () => {
      const answer = await authorize(authorizeUrl({ response_type: 'token', state: '"><script>alert(1)</script>' }, adminClientId));
      expectAnswer(answer, { status: 302, location: `${REDIRECT}?error=unsupported_response_type&` }, 'admin client');
      const location = new URL(String(answer.headers.location));
      expect(location.searchParams.get('state')).toBe('"><script>alert(1)</script>');
      expect(String(answer.headers.location)).not.toContain('<');
      expect(location.searchParams.get('iss')).toBe(BASE);
    });

    it('trusts a redirect URI this browser’s user approved, until the approval is revoked; a forged cookie is nothing', async () => {
      const start = await authorize(authorizeUrl());
      const id = new URL(String(start.headers.location)).searchParams.get('request') as string;
      const decided = await app.inject({
        method: 'POST',
        url: `/api/oauth-server/requests/${id}`,
        headers: { host: HOST, ...bearer(user.token) },
        payload: { allow: true },
      });
      expect(decided.statusCode).toBe(200);
      const setCookie = String(decided.headers['set-cookie']);
      expect(setCookie).toMatch(/; Path=\/oauth2\/authorize; Max-Age=\d+; HttpOnly; SameSite=Lax$/);
      const cookie = setCookie.split(';')[0] as string;
      const bad = authorizeUrl({ code_challenge: undefined });
      // Approved in this browser: the error goes back to the client (any loopback port, as the redirect may).
      expectAnswer(await authorize(bad, { cookie }), { status: 302, location: `${REDIRECT}?error=invalid_request&` }, 'approved');
      const otherPort = authorizeUrl({ code_challenge: undefined, redirect_uri: 'http://127.0.0.1:7778/cb' });
      expectAnswer(await authorize(otherPort, { cookie }), { status: 302, location: 'http://127.0.0.1:7778/cb?error=' }, 'other port');
      // The same cookie does not vouch for another client, nor a tampered one for anything.
      expectAnswer(
        await authorize(authorizeUrl({ code_challenge: undefined }, 'tpc_other'), { cookie }),
        err(401, 'invalid_client'),
        'other',
      );
      const [name, value = ''] = cookie.split('=');
      const forged = `${name}=${value.replace(/^\d+/, (id) => String(Number(id) + 1000))}`;
      expectAnswer(await authorize(bad, { cookie: forged }), err(400, 'invalid_request'), 'forged grant id');
      expectAnswer(await authorize(bad, { cookie: `${name}=${value.slice(0, -2)}AA` }), err(400, 'invalid_request'), 'forged MAC');
      // Revoked under Profile → Connected apps: no longer trusted.
      const apps = await app.inject({ method: 'GET', url: '/api/oauth-server/grants', headers: { host: HOST, ...bearer(user.token) } });
      for (const grant of apps.json().data as { id: number }[]) {
        const revoked = await app.inject({
          method: 'DELETE',
          url: `/api/oauth-server/grants/${grant.id}`,
          headers: { host: HOST, ...bearer(user.token) },
        });
        expect(revoked.statusCode).toBe(200);
      }
      expectAnswer(await authorize(bad, { cookie }), err(400, 'invalid_request'), 'revoked');
    });
  });

  describe('hosts: nothing is built on a Host the gateway does not answer to', () => {
    const cases = FOREIGN_HOSTS.flatMap((host) => EVERY_ROUTE.map(([method, path]) => ({ host, method, path })));
    it.each(cases)('$method $path with Host $host: 421', async ({ host, method, path }) => {
      const answer = await ask(app, {
        method,
        url: path,
        headers: { host, 'content-type': FORM },
        payload: method === 'POST' ? 'grant_type=refresh_token&token=x&redirect_uris=x' : undefined,
      });
      expectAnswer(answer, err(421, 'invalid_request'), `${method} ${path} ${host}`);
      expect(answer.body).not.toContain('"http');
    });

    it.each(['toolport.test', 'localhost:3000', '127.0.0.1:8080', '[::1]:3000', '192.168.1.10'])(
      'names an allowed host %s, and says no cache may keep it for another',
      async (host) => {
        for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/oauth-protected-resource/proxy/echo/mcp']) {
          // X-Forwarded-Host from a peer TRUST_PROXY does not name is not believed.
          const answer = await ask(app, {
            method: 'GET',
            url: path,
            headers: { host, 'x-forwarded-host': 'evil.example' },
            remoteAddress: '203.0.113.5',
          });
          expect(answer.status).toBe(200);
          const body = JSON.parse(answer.body) as { issuer?: string; authorization_servers?: string[] };
          expect(body.issuer ?? body.authorization_servers?.[0]).toBe(`http://${host}`);
          expect([answer.headers['cache-control'], answer.headers.vary]).toEqual(['no-store', 'Host']);
        }
      },
    );

    it('refuses a foreign X-Forwarded-Host from a proxy TRUST_PROXY believes (loopback by default)', async () => {
      const answer = await ask(app, {
        method: 'GET',
        url: '/.well-known/oauth-authorization-server',
        headers: { host: HOST, 'x-forwarded-host': 'evil.example' },
        remoteAddress: '127.0.0.1',
      });
      expectAnswer(answer, err(421, 'invalid_request'), 'forwarded host');
    });

    it('names only the server address once one is set, whatever the Host', async () => {
      await t.ctx.options.set('ServerAddress', 'https://mcp.example.com');
      try {
        for (const host of ['evil.example', HOST]) {
          const answer = await ask(app, { method: 'GET', url: '/.well-known/oauth-protected-resource', headers: { host } });
          expect([answer.status, JSON.parse(answer.body).authorization_servers]).toEqual([200, ['https://mcp.example.com']]);
        }
      } finally {
        await t.ctx.options.set('ServerAddress', '');
      }
    });
  });

  describe('paths and methods the OAuth server does not serve', () => {
    it.each(UNKNOWN)('%s %s: %i in the OAuth format', async (method, path, status) => {
      const answer = await ask(app, { method, url: path, headers: { host: HOST } });
      expectAnswer(answer, err(status, 'invalid_request'), `${method} ${path}`);
      if (status === 405) expect(answer.headers.allow).toMatch(/^(GET|POST)/);
    });
  });

  it('limits registrations per address: 429 with Retry-After, in the OAuth format', async () => {
    const register = () =>
      ask(app, {
        method: 'POST',
        url: '/oauth2/register',
        headers: { host: HOST },
        payload: { redirect_uris: [REDIRECT] },
        remoteAddress: '2001:db8:1:2::7',
      });
    for (let i = 0; i < 10; i++) expect((await register()).status).toBe(201);
    const refused = await register();
    expectAnswer(refused, err(429, 'invalid_request'), 'registration flood');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    // Another address of the same /64 is the same subscriber: still refused.
    const sameNet = await ask(app, {
      method: 'POST',
      url: '/oauth2/register',
      headers: { host: HOST },
      payload: { redirect_uris: [REDIRECT] },
      remoteAddress: '2001:db8:1:2::8',
    });
    expect(sameNet.status).toBe(429);
  });
});
