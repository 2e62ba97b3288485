import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addService } from '../gateway/gateway-harness.js';
import { ACCEPT_BOTH, initializeBody } from '../gateway/raw-http.js';
import { bearer, createTestApp, engines, type TestApp } from '../harness.js';
import { fixtureServer, pkce } from './oauth-kit.js';

const HOST = 'toolport.test';
const BASE = `http://${HOST}`;
const REDIRECT = 'http://127.0.0.1:7777/cb';

/**
 * Consent and tokens follow the access lists (issue 24, decision 0040): the consent page is told why Allow is
 * not offered; an Allow sent anyway (the decision API called directly) gets access_denied; and the token
 * endpoint issues nothing, for a code or a refresh token, bound to an endpoint its user may not use now. On
 * SQLite and PostgreSQL, through `inject` with a Host as a client would send it.
 */
describe.each(engines)('consent and tokens honour access lists (%s)', (engine) => {
  let t: TestApp;
  let app: FastifyInstance;
  let root: string;
  let alice: { id: number; token: string };
  let bob: { id: number; token: string };
  let vault: number;
  let groupId: number;
  let clientId: string;

  const admin = async (method: 'PUT' | 'POST', url: string, payload: unknown) => {
    const res = await app.inject({ method, url: `/api${url}`, headers: { host: HOST, ...bearer(root) }, payload: payload as object });
    expect(res.statusCode, res.body).toBeLessThan(300);
  };
  const restrictVault = (userIds: number[]) => admin('PUT', `/mcp_services/${vault}`, { access: { restricted: true, user_ids: userIds } });
  const restrictTeam = (userIds: number[]) =>
    admin('PUT', `/groups/${groupId}`, {
      name: 'team',
      members: [{ service_id: vault }],
      access: { restricted: true, user_ids: userIds },
    });

  /** An authorization request for `resource`, as the consent page sees it for `user`, and the decision API's answer to Allow. */
  const askFor = async (user: { token: string }, resource: string) => {
    const { verifier, challenge } = pkce();
    const q = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: REDIRECT,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: 'st',
      resource: `${BASE}${resource}`,
    });
    const start = await app.inject({ method: 'GET', url: `/oauth2/authorize?${q}`, headers: { host: HOST } });
    expect(start.statusCode).toBe(302);
    const id = new URL(String(start.headers.location)).searchParams.get('request') as string;
    const view = await app.inject({
      method: 'GET',
      url: `/api/oauth-server/requests/${id}`,
      headers: { host: HOST, ...bearer(user.token) },
    });
    const allow = await app.inject({
      method: 'POST',
      url: `/api/oauth-server/requests/${id}`,
      headers: { host: HOST, ...bearer(user.token) },
      payload: { allow: true },
    });
    expect(allow.statusCode).toBe(200);
    return { view: view.json().data, back: new URL(allow.json().data.redirect_to), verifier };
  };

  const token = (form: Record<string, string>, lang = 'en') =>
    app.inject({
      method: 'POST',
      url: '/oauth2/token',
      headers: { host: HOST, 'content-type': 'application/x-www-form-urlencoded', 'accept-language': lang },
      payload: new URLSearchParams({ client_id: clientId, ...form }).toString(),
    });
  const exchange = (code: string, verifier: string, lang?: string) =>
    token({ grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: REDIRECT }, lang);
  const refresh = (refreshToken: string, lang?: string) => token({ grant_type: 'refresh_token', refresh_token: refreshToken }, lang);
  const initialize = (accessToken: string, path: string) =>
    app
      .inject({
        method: 'POST',
        url: path,
        headers: { host: HOST, authorization: `Bearer ${accessToken}`, accept: ACCEPT_BOTH, 'content-type': 'application/json' },
        payload: initializeBody(),
      })
      .then((r) => r.statusCode);

  beforeAll(async () => {
    t = await createTestApp(engine, { ALLOWED_HOSTS: HOST });
    app = t.app;
    root = await t.rootToken();
    vault = await addService(t.ctx, { name: 'vault', args: [fixtureServer] });
    alice = await t.createUser({ username: 'alice' });
    bob = await t.createUser({ username: 'bob' });
    const group = await app.inject({
      method: 'POST',
      url: '/api/groups',
      headers: { host: HOST, ...bearer(root) },
      payload: { name: 'team', members: [{ service_id: vault }], access: { restricted: true, user_ids: [bob.id] } },
    });
    expect(group.statusCode, group.body).toBe(201);
    groupId = group.json().data.id;
    await restrictVault([bob.id]);
    const res = await app.inject({
      method: 'POST',
      url: '/oauth2/register',
      headers: { host: HOST },
      payload: { client_name: 'Access Client', redirect_uris: [REDIRECT] },
    });
    expect(res.statusCode).toBe(201);
    clientId = res.json().client_id;
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  it('tells the consent page why, and turns an Allow sent anyway into access_denied with no code and no grant', async () => {
    for (const [resource, endpoint] of [
      ['/proxy/vault/mcp', { kind: 'proxy', name: 'vault' }],
      ['/group/team/mcp', { kind: 'group', name: 'team' }],
    ] as const) {
      const forged = await askFor(alice, resource);
      expect(forged.view).toMatchObject({ allowed: false, refusal: 'no_access', endpoint });
      // RFC 6749 §4.1.2.1: the error goes back to the client with its state and the issuer (RFC 9207), never a code.
      expect(Object.fromEntries(forged.back.searchParams)).toEqual({
        error: 'access_denied',
        error_description: 'the user may not use this endpoint',
        state: 'st',
        iss: BASE,
      });
      const offered = await askFor(bob, resource);
      expect(offered.view).toMatchObject({ allowed: true, endpoint });
      expect(offered.view.refusal).toBeUndefined();
      expect(offered.back.searchParams.get('code')).toBeTruthy();
    }
    const gone = await askFor(alice, '/proxy/nowhere/mcp');
    expect(gone.view).toMatchObject({ allowed: false, refusal: 'unknown_endpoint', endpoint: { kind: 'proxy', name: 'nowhere' } });
    const apps = await app.inject({ method: 'GET', url: '/api/oauth-server/grants', headers: { host: HOST, ...bearer(alice.token) } });
    expect(apps.json().data).toEqual([]);
  });

  it('issues no token for a code whose user may no longer use its endpoint (invalid_target, en and zh-CN), and the code survives', async () => {
    const approved = await askFor(bob, '/proxy/vault/mcp');
    const code = approved.back.searchParams.get('code') as string;
    await restrictVault([]);
    const refused = await exchange(code, approved.verifier);
    expect(refused.statusCode).toBe(400);
    expect(refused.headers['cache-control']).toBe('no-store');
    expect(refused.json()).toEqual({
      error: 'invalid_target',
      error_description:
        'The user may not use this endpoint (it is restricted to other users, or it no longer exists): no token is issued for it',
    });
    expect((await exchange(code, approved.verifier, 'zh-CN')).json()).toEqual({
      error: 'invalid_target',
      error_description: '该用户无权使用此端点（仅限其他用户使用，或已不存在），不会为其签发令牌',
    });
    // The refusal spent nothing: with access back, the same code is exchanged once.
    await restrictVault([bob.id]);
    const issued = await exchange(code, approved.verifier);
    expect(issued.statusCode).toBe(200);
    expect(await initialize(issued.json().access_token, '/proxy/vault/mcp')).toBe(200);
  });

  it('refreshes no token for an endpoint its user lost, for a service and for a group, and the proxy refuses the token in hand', async () => {
    for (const [resource, restrict] of [
      ['/proxy/vault/mcp', restrictVault],
      ['/group/team/mcp', restrictTeam],
    ] as const) {
      const approved = await askFor(bob, resource);
      const first = await exchange(approved.back.searchParams.get('code') as string, approved.verifier);
      expect(first.statusCode).toBe(200);
      const { access_token: accessToken, refresh_token: refreshToken } = first.json();
      expect(await initialize(accessToken, resource)).toBe(200);

      await restrict([]);
      const refused = await refresh(refreshToken);
      expect([refused.statusCode, refused.json().error]).toEqual([400, 'invalid_target']);
      // The token already issued is checked on every request like an API key: 403, not reached.
      expect(await initialize(accessToken, resource)).toBe(403);

      await restrict([bob.id]);
      const again = await refresh(refreshToken);
      expect(again.statusCode).toBe(200);
      expect(await initialize(again.json().access_token, resource)).toBe(200);
    }
  });
});
