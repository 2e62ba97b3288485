import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD, bearer, createTestApp, engines, type TestApp } from '../../../test/harness.js';
import { signAccessToken } from '../../http/access-tokens.js';

describe.each(engines)('auth on %s', (engine) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(engine);
  });
  afterAll(async () => t?.close());

  const login = (username: string, password: string, headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'POST', url: '/api/auth/login', payload: { username, password }, headers });

  it('signs root in with ADMIN_PASSWORD and returns a token pair and the user', async () => {
    const res = await login('root', ADMIN_PASSWORD);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.success).toBe(true);
    expect(body.data.user).toMatchObject({ username: 'root', role: 100, status: 1, login_method: 'password' });
    expect(body.data.user).not.toHaveProperty('token');
    expect(body.data.access_token).toMatch(/^ey/);
    expect(body.data.refresh_token.length).toBeGreaterThan(30);
  });

  it('refuses a wrong password with 401 and a localised message', async () => {
    const en = await login('root', 'wrong-password');
    expect(en.statusCode).toBe(401);
    expect(en.json()).toMatchObject({ success: false, message: 'Incorrect username or password' });
    const zh = await login('nobody', 'wrong-password', { 'accept-language': 'zh-CN,zh;q=0.9' });
    expect(zh.statusCode).toBe(401);
    expect(zh.json().message).toBe('用户名或密码错误');
  });

  it('answers 400 naming the field for an empty username', async () => {
    const res = await login('', 'x');
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toContain('username');
  });

  it('rotates refresh tokens and treats reuse as theft', async () => {
    const first = (await login('root', ADMIN_PASSWORD)).json().data;
    const refreshed = await t.app.inject({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: first.refresh_token } });
    expect(refreshed.statusCode).toBe(200);
    const second = refreshed.json().data;
    expect(second.refresh_token).not.toBe(first.refresh_token);

    const replay = await t.app.inject({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: first.refresh_token } });
    expect(replay.statusCode).toBe(401);
    // The replay revoked the whole family, including the token issued by the legitimate refresh.
    const after = await t.app.inject({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: second.refresh_token } });
    expect(after.statusCode).toBe(401);
  });

  it('logout revokes the refresh token', async () => {
    const pair = (await login('root', ADMIN_PASSWORD)).json().data;
    const out = await t.app.inject({
      method: 'POST',
      url: '/api/auth/logout',
      headers: bearer(pair.access_token),
      payload: { refresh_token: pair.refresh_token },
    });
    expect(out.statusCode).toBe(200);
    const res = await t.app.inject({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: pair.refresh_token } });
    expect(res.statusCode).toBe(401);
  });

  it('rejects an expired access token and one signed with another key', async () => {
    const expired = await signAccessToken(t.ctx.secrets.jwtKey, { userId: 1, authVersion: 1 }, Date.now() - 60 * 60 * 1000);
    const res = await t.app.inject({ method: 'GET', url: '/api/option/', headers: bearer(expired) });
    expect(res.statusCode).toBe(401);
    const foreign = await signAccessToken(new Uint8Array(32).fill(7), { userId: 1, authVersion: 1 });
    const res2 = await t.app.inject({ method: 'GET', url: '/api/option/', headers: bearer(foreign) });
    expect(res2.statusCode).toBe(401);
    const valid = await signAccessToken(t.ctx.secrets.jwtKey, { userId: 1, authVersion: 1 });
    const res3 = await t.app.inject({ method: 'GET', url: '/api/option/', headers: bearer(valid) });
    expect(res3.statusCode).toBe(200);
  });

  it('counts sign-in attempts per client address, which a client cannot choose by sending X-Forwarded-For', async () => {
    const from = (remoteAddress: string, forwardedFor: string) =>
      t.app.inject({
        method: 'POST',
        url: '/api/auth/login',
        payload: { username: `nobody-${forwardedFor}`, password: 'bad-password' },
        headers: { 'x-forwarded-for': forwardedFor },
        remoteAddress,
      });
    // A public client rotating the header is still one address: the 31st attempt in a minute is refused.
    const direct = [];
    for (let i = 0; i < 31; i++) direct.push((await from('203.0.113.7', `198.51.100.${i}`)).statusCode);
    expect(direct.slice(0, 30).every((s) => s === 401)).toBe(true);
    expect(direct[30]).toBe(429);
    // Behind a proxy on this host, the address it forwards is the client's: another client is not refused.
    expect((await from('127.0.0.1', '198.51.100.200')).statusCode).toBe(401);
  });

  it('rate-limits repeated failures for one username', async () => {
    let last = 0;
    for (let i = 0; i < 12; i++) last = (await login('ratelimited-user', 'bad-password')).statusCode;
    expect(last).toBe(429);
  });
});
