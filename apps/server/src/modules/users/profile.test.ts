import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createTestApp, engines, type TestApp } from '../../../test/harness.js';
import { makeOAuthUser, makeUser, tokenOf } from '../../../test/kits/users.js';
import type { ConfigEvent } from '../../infra/events.js';
import { hashApiKey } from './api-keys.js';

describe.each(engines)('own profile, password and API key on %s', (engine) => {
  let t: TestApp;
  let root: string;
  beforeAll(async () => {
    t = await createTestApp(engine);
    root = await t.rootToken();
  });
  afterAll(async () => t?.close());

  const self = (token: string) => t.app.inject({ method: 'GET', url: '/api/user/self', headers: bearer(token) });
  const put = (token: string, payload: object, lang = 'en') =>
    t.app.inject({ method: 'PUT', url: '/api/user/self', headers: { ...bearer(token), 'accept-language': lang }, payload });
  const changePassword = (token: string, payload: object, lang = 'en') =>
    t.app.inject({ method: 'POST', url: '/api/user/change-password', headers: { ...bearer(token), 'accept-language': lang }, payload });

  it('shows a user their own profile with their API key and login method', async () => {
    const u = await makeUser(t, root, { email: 'me@example.com' });
    const res = await self(u.token);
    expect(res.statusCode).toBe(200);
    const data = res.json().data;
    expect(data).toMatchObject({ id: u.id, username: u.username, email: 'me@example.com', role: 1, status: 1, login_method: 'password' });
    expect(data).toMatchObject({ github_id: '', google_id: '', wechat_id: '' });
    expect(data).not.toHaveProperty('password_hash');
    const row = await t.ctx.usersRepo.byId(u.id);
    expect(hashApiKey(data.token)).toBe(row?.api_key_hash);
  });

  it('shows a provider user their login method and binding', async () => {
    const o = await makeOAuthUser(t, '4242');
    const data = (await self(o.token)).json().data;
    expect(data).toMatchObject({ login_method: 'github', github_id: '4242', token: 'tpk_oauth_4242' });
  });

  it('answers 401 without a token', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/user/self' });
    expect(res.statusCode).toBe(401);
    expect(res.json().success).toBe(false);
  });

  it('keeps the harness helper working (create through the API, then sign in)', async () => {
    const made = await t.createUser();
    expect(made.id).toBeGreaterThan(1);
    expect((await self(made.token)).json().data.username).toBe(made.username);
  });

  it('updates username, email and display name', async () => {
    const u = await makeUser(t, root);
    const res = await put(u.token, { username: `${u.username}_new`, email: 'new@example.com', display_name: 'New Name' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ success: true, message: 'Profile updated' });
    const data = (await self(u.token)).json().data;
    expect(data).toMatchObject({ username: `${u.username}_new`, email: 'new@example.com', display_name: 'New Name' });
  });

  it('refuses a username someone else has (409) and a bad email (400)', async () => {
    const a = await makeUser(t, root);
    const b = await makeUser(t, root);
    const taken = await put(a.token, { username: b.username });
    expect(taken.statusCode).toBe(409);
    expect(taken.json().message).toContain(b.username);
    const bad = await put(a.token, { email: 'not-an-email' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toContain('email');
  });

  it('refuses to rename the super admin, whom every start looks up by name', async () => {
    const res = await put(root, { username: 'toor' });
    expect(res.statusCode).toBe(400);
    expect((await t.ctx.usersRepo.byUsername('root'))?.role).toBe(100);
  });

  it('refuses profile edits by a provider user', async () => {
    const o = await makeOAuthUser(t, '5151');
    const res = await put(o.token, { display_name: 'x' }, 'zh-CN');
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({
      success: false,
      code: 'oauth_user_cannot_edit_profile',
      message: '通过 GitHub 或 Google 登录的账户不能在此编辑个人信息',
    });
  });

  it('changes the password, ends every session and announces the change', async () => {
    const u = await makeUser(t, root);
    const pair = (
      await t.app.inject({ method: 'POST', url: '/api/auth/login', payload: { username: u.username, password: u.password } })
    ).json().data;
    const seen: ConfigEvent[] = [];
    const off = t.ctx.events.on((e) => seen.push(e));
    const res = await changePassword(pair.access_token, { current_password: u.password, new_password: 'brand-new-password' });
    off();
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ success: true, message: 'Password changed, please sign in again' });
    expect(seen).toContainEqual({ type: 'user.changed', userId: u.id });

    expect((await self(pair.access_token)).statusCode).toBe(401);
    const refresh = await t.app.inject({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: pair.refresh_token } });
    expect(refresh.statusCode).toBe(401);
    const oldLogin = await t.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { username: u.username, password: u.password },
    });
    expect(oldLogin.statusCode).toBe(401);
    const fresh = await t.login(u.username, 'brand-new-password');
    expect((await self(fresh)).statusCode).toBe(200);
  });

  it('refuses a wrong current password with its code, localised', async () => {
    const u = await makeUser(t, root);
    const en = await changePassword(u.token, { current_password: 'wrong-password', new_password: 'another-password' });
    expect(en.statusCode).toBe(400);
    expect(en.json()).toMatchObject({ success: false, code: 'current_password_incorrect', message: 'The current password is incorrect' });
    const zh = await changePassword(u.token, { current_password: 'wrong-password', new_password: 'another-password' }, 'zh-CN');
    expect(zh.json()).toMatchObject({ code: 'current_password_incorrect', message: '当前密码不正确' });
    // Nothing changed: the same token still works.
    expect((await self(u.token)).statusCode).toBe(200);
  });

  it('refuses a password change by a provider user with its code', async () => {
    const o = await makeOAuthUser(t, '6161');
    const res = await changePassword(o.token, { current_password: 'whatever-1', new_password: 'another-password' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ success: false, code: 'oauth_user_cannot_change_password' });
    expect(res.json().message).toContain('GitHub');
  });

  it('refuses a new password shorter than 8 characters', async () => {
    const u = await makeUser(t, root);
    const res = await changePassword(u.token, { current_password: u.password, new_password: 'short' });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toContain('new_password');
  });

  it.each(['GET', 'POST'] as const)('rotates the API key with %s; the old key no longer finds the user', async (method) => {
    const u = await makeUser(t, root);
    const before = (await self(u.token)).json().data.token as string;
    const res = await t.app.inject({ method, url: '/api/user/token', headers: bearer(u.token) });
    expect(res.statusCode).toBe(200);
    const fresh = res.json().data;
    expect(typeof fresh).toBe('string');
    expect(fresh).not.toBe(before);
    expect(fresh.startsWith('tpk_')).toBe(true);

    expect(await t.ctx.usersRepo.byApiKeyHash(hashApiKey(before))).toBeUndefined();
    expect((await t.ctx.usersRepo.byApiKeyHash(hashApiKey(fresh)))?.id).toBe(u.id);
    expect((await self(await tokenOf(t, u.id))).json().data.token).toBe(fresh);
  });
});
