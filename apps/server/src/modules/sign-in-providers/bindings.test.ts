import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { defaultGitHubUser, defaultGoogleUser, type FakeOAuth, startFakeOAuth } from '../../../test/fake-oauth.js';
import { bearer, createTestApp, engines, type TestApp } from '../../../test/harness.js';
import { configureProvider, type Provider, signInThrough } from '../../../test/kits/oauth.js';
import { makeUser } from '../../../test/kits/users.js';

const githubAs = (id: number, login: string) => ({ ...defaultGitHubUser(), id, login });
const googleAs = (sub: string, email: string) => ({ ...defaultGoogleUser(), sub, email });

describe.each(engines)('linking GitHub and Google to an account on %s', (engine) => {
  let fake: FakeOAuth;
  let t: TestApp;
  let root: string;
  beforeAll(async () => {
    fake = await startFakeOAuth();
    t = await createTestApp(engine, fake.env);
    root = await t.rootToken();
    await configureProvider(t, fake, 'github');
    await configureProvider(t, fake, 'google');
  });
  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });
  beforeEach(() => fake.reset());

  const self = async (token: string) => (await t.app.inject({ method: 'GET', url: '/api/user/self', headers: bearer(token) })).json().data;
  const unbind = (token: string, provider: string, lang = 'en') =>
    t.app.inject({ method: 'DELETE', url: `/api/user/bindings/${provider}`, headers: { ...bearer(token), 'accept-language': lang } });
  const bind = (token: string, provider: Provider, lang?: string) => signInThrough(t, provider, { token, lang });

  it('links GitHub to a password user, shows it on the profile, and signs them in through it afterwards', async () => {
    const u = await makeUser(t, root);
    fake.setGitHubUser(githubAs(3001, 'linker'));
    const res = await bind(u.token, 'github');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ message: 'GitHub account linked', data: { mode: 'bind', user: { id: u.id, github_id: '3001' } } });
    expect(await self(u.token)).toMatchObject({ github_id: '3001', google_id: '', login_method: 'password', username: u.username });

    const signIn = await signInThrough(t, 'github');
    expect(signIn.json().data).toMatchObject({ mode: 'login', user: { id: u.id } });
    expect((await bind(u.token, 'github', 'zh-CN')).json().message).toBe('已绑定 GitHub 账号');
  });

  it('starts linking only for a signed-in caller', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/oauth/github/authorize?bind=1' });
    expect(res.statusCode).toBe(401);
    expect(res.headers['set-cookie']).toBeUndefined();
  });

  it('refuses to link an identity another account has, and a second identity of one provider', async () => {
    const a = await makeUser(t, root);
    const b = await makeUser(t, root);
    fake.setGoogleUser(googleAs('g-3002', 'shared@example.com'));
    expect((await bind(a.token, 'google')).statusCode).toBe(200);
    const taken = await bind(b.token, 'google');
    expect(taken.statusCode).toBe(409);
    expect(taken.json()).toMatchObject({ code: 'oauth_identity_taken', message: 'This Google account is already linked to another user' });
    expect((await bind(b.token, 'google', 'zh-CN')).json().message).toBe('该 Google 账号已绑定到其他用户');
    expect((await self(b.token)).google_id).toBe('');

    fake.setGoogleUser(googleAs('g-3003', 'second@example.com'));
    const second = await bind(a.token, 'google');
    expect(second.statusCode).toBe(409);
    expect(second.json().code).toBe('oauth_already_bound');
    expect((await self(a.token)).google_id).toBe('g-3002');
  });

  it('unlinks a provider from a password user', async () => {
    const u = await makeUser(t, root);
    fake.setGitHubUser(githubAs(3004, 'unlinker'));
    await bind(u.token, 'github');
    const res = await unbind(u.token, 'github');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ success: true, message: 'GitHub account unlinked', data: { id: u.id, github_id: '' } });
    expect((await self(u.token)).github_id).toBe('');

    const again = await unbind(u.token, 'github', 'zh-CN');
    expect(again.statusCode).toBe(404);
    expect(again.json().message).toBe('你的账户未绑定 GitHub');
    // The identity is free again: a new sign-in creates a new account rather than finding the old one.
    expect((await signInThrough(t, 'github')).json().data.user.id).not.toBe(u.id);
  });

  it('keeps the last way to sign in of an account without a password', async () => {
    fake.setGitHubUser(githubAs(3005, 'only-github'));
    const signedUp = (await signInThrough(t, 'github')).json().data;
    const token = signedUp.access_token as string;
    const last = await unbind(token, 'github');
    expect(last.statusCode).toBe(400);
    expect(last.json()).toMatchObject({
      code: 'last_sign_in_method',
      message: expect.stringMatching(/^GitHub is the only way to sign in/),
    });
    expect((await unbind(token, 'github', 'zh-CN')).json().message).toBe(
      'GitHub 是该账户唯一的登录方式，无法解除绑定；请先绑定其他登录方式',
    );

    fake.setGoogleUser(googleAs('g-3005', 'only@example.com'));
    expect((await bind(token, 'google')).statusCode).toBe(200);
    expect(await self(token)).toMatchObject({ github_id: '3005', google_id: 'g-3005', login_method: 'github' });
    expect((await unbind(token, 'github')).statusCode).toBe(200);
    const nowLast = await unbind(token, 'google');
    expect(nowLast.statusCode).toBe(400);
    expect(await self(token)).toMatchObject({ github_id: '', google_id: 'g-3005', login_method: 'google' });
  });

  it('refuses an unknown provider', async () => {
    const u = await makeUser(t, root);
    const res = await unbind(u.token, 'wechat');
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toContain('provider');
  });
});
