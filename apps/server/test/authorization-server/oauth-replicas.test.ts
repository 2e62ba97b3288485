import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addService } from '../gateway/gateway-harness.js';
import { ACCEPT_BOTH, initializeBody } from '../gateway/raw-http.js';
import { bearer, createPgDatabase, createTestApp, type TestApp } from '../harness.js';
import { consent, fixtureServer, pkce } from './oauth-kit.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const REDIRECT = 'http://127.0.0.1:7777/cb';

/**
 * Two replicas on one PostgreSQL and one Redis, behind one public address (ServerAddress, as behind a
 * load balancer): a client registered on A, authorized on A, exchanges its code on B, calls a tool on
 * B with the token, refreshes on A; a revocation on A is honoured by B.
 */
describe('OAuth server across replicas', () => {
  const replicas: { t: TestApp; url: string }[] = [];
  let drop: () => Promise<void>;
  const PUBLIC = 'https://mcp.cluster.example';

  beforeAll(async () => {
    const database = await createPgDatabase();
    drop = database.drop;
    const env = {
      DATABASE_URL: database.url,
      REDIS_URL,
      REDIS_PREFIX: `toolport-test:${process.pid}:${Math.random().toString(36).slice(2, 10)}:`,
      // Refused metadata fetches are answered no sooner than this cap (decision 0041): short, for the limit test.
      OAUTH_CLIENT_FETCH_TIMEOUT_MS: '100',
    };
    for (let i = 0; i < 2; i++) {
      const t = await createTestApp('postgres', env);
      await t.app.listen({ host: '127.0.0.1', port: 0 });
      replicas.push({ t, url: `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}` });
    }
    await replicas[0]?.t.ctx.options.set('ServerAddress', PUBLIC);
    // The other replica hears of the change through Redis and reads the preferences again.
    for (let i = 0; i < 100 && replicas[1]?.t.ctx.options.get('ServerAddress') !== PUBLIC; i++) await new Promise((r) => setTimeout(r, 50));
    await addService(replicas[0]?.t.ctx as TestApp['ctx'], { name: 'echo', args: [fixtureServer] });
  }, 60_000);
  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.t.close()));
    await drop?.();
  });

  it('works from any replica: code, token, refresh and revocation', async () => {
    const [a, b] = replicas as [{ t: TestApp; url: string }, { t: TestApp; url: string }];
    const user = await a.t.createUser();
    const reg = await fetch(`${a.url}/oauth2/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'Cluster Client', redirect_uris: [REDIRECT] }),
    });
    const clientId = ((await reg.json()) as { client_id: string }).client_id;
    const { verifier, challenge } = pkce();
    const q = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: REDIRECT,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: 's',
      resource: `${PUBLIC}/proxy/echo/mcp`,
    });
    const back = await consent(`${a.url}/oauth2/authorize?${q}`, user.token);
    expect(back.searchParams.get('iss')).toBe(PUBLIC);
    const token = async (on: string, form: Record<string, string>) => {
      const res = await fetch(`${on}/oauth2/token`, { method: 'POST', body: new URLSearchParams(form) });
      return { status: res.status, body: (await res.json()) as Record<string, string> };
    };
    const first = await token(b.url, {
      grant_type: 'authorization_code',
      code: back.searchParams.get('code') as string,
      code_verifier: verifier,
      client_id: clientId,
      redirect_uri: REDIRECT,
    });
    expect(first.status).toBe(200);
    const proxy = (on: string, access: string) =>
      fetch(`${on}/proxy/echo/mcp`, {
        method: 'POST',
        headers: { ...bearer(access), accept: ACCEPT_BOTH, 'content-type': 'application/json' },
        body: JSON.stringify(initializeBody()),
      }).then(async (r) => {
        await r.body?.cancel();
        return r.status;
      });
    expect(await proxy(b.url, first.body.access_token as string)).toBe(200);
    const second = await token(a.url, {
      grant_type: 'refresh_token',
      refresh_token: first.body.refresh_token as string,
      client_id: clientId,
    });
    expect(second.status).toBe(200);
    expect(await proxy(b.url, second.body.access_token as string)).toBe(200);
    expect(await proxy(a.url, second.body.access_token as string)).toBe(200);
    // The spent refresh token replayed on the other replica: refused, and the family revoked everywhere.
    const replay = await token(b.url, {
      grant_type: 'refresh_token',
      refresh_token: first.body.refresh_token as string,
      client_id: clientId,
    });
    expect(replay.body.error).toBe('invalid_grant');
    expect(await proxy(b.url, second.body.access_token as string)).toBe(401);
    // B had the grant cached as active a moment ago; A's revocation reaches it within the cache's few seconds.
    await expect.poll(() => proxy(a.url, second.body.access_token as string), { timeout: 5000, interval: 250 }).toBe(401);
  }, 60_000);
  it('limits registrations and metadata-document fetches per address across replicas (Redis)', async () => {
    const [a, b] = replicas as [{ t: TestApp; url: string }, { t: TestApp; url: string }];
    // The replicas see loopback peers, which TRUST_PROXY believes by default: X-Forwarded-For names the client.
    const register = (on: string, from: string) =>
      fetch(`${on}/oauth2/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': from },
        body: JSON.stringify({ redirect_uris: [REDIRECT] }),
      });
    const first = await Promise.all(Array.from({ length: 10 }, (_, i) => register(i % 2 ? a.url : b.url, '203.0.113.9')));
    expect(first.map((r) => r.status)).toEqual(Array(10).fill(201));
    for (const on of [a.url, b.url]) {
      const refused = await register(on, '203.0.113.9');
      expect([refused.status, ((await refused.json()) as { error: string }).error]).toEqual([429, 'invalid_request']);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    // A metadata document on loopback: refused (the replicas do not allow private addresses), and counted.
    const authorize = (on: string) =>
      fetch(`${on}/oauth2/authorize?client_id=${encodeURIComponent('http://127.0.0.1:9/client.json')}`, {
        headers: { 'x-forwarded-for': '203.0.113.10', accept: 'application/json' },
        redirect: 'manual',
      });
    const fetches = await Promise.all(Array.from({ length: 10 }, (_, i) => authorize(i % 2 ? a.url : b.url)));
    expect(fetches.map((r) => r.status)).toEqual(Array(10).fill(401));
    for (const on of [a.url, b.url]) {
      const limited = await authorize(on);
      expect([limited.status, ((await limited.json()) as { error: string }).error]).toEqual([429, 'invalid_request']);
    }
  }, 60_000);
});
