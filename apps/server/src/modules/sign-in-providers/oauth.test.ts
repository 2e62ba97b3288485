import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { defaultGitHubUser, defaultGoogleUser, type FakeOAuth, startFakeOAuth } from '../../../test/fake-oauth.js';
import { bearer, createTestApp, engines, type TestApp } from '../../../test/harness.js';
import { configureProvider, finishSignIn, signInThrough, startSignIn, visitProvider } from '../../../test/kits/oauth.js';
import { makeUser } from '../../../test/kits/users.js';
import { sha256 } from '../../infra/secrets.js';
import { codeChallengeOf } from './pkce.js';

const githubUser = (id: number, login: string, email = `${login}@example.com`) => ({
  ...defaultGitHubUser(),
  id,
  login,
  name: `Name of ${login}`,
  emails: [{ email, primary: true, verified: true, visibility: 'private' as const }],
});

describe.each(engines)('sign-in with GitHub and Google on %s', (engine) => {
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
  beforeEach(async () => {
    fake.reset();
    await t.ctx.options.set('RegistrationEnabled', 'true');
  });

  const stateRow = (state: string) =>
    t.ctx.db.selectFrom('oauth_states').selectAll().where('state_hash', '=', sha256(state)).executeTakeFirst();

  it('sends the browser to GitHub with client id, return address, scope, state and an S256 PKCE challenge', async () => {
    const started = await startSignIn(t, 'github', { headers: { host: 'gw.test', 'x-forwarded-proto': 'https' } });
    const q = Object.fromEntries(started.url.searchParams);
    expect(`${started.url.origin}${started.url.pathname}`).toBe(`${fake.env.GITHUB_BASE_URL}/login/oauth/authorize`);
    expect(q).toMatchObject({ client_id: fake.clients.github.clientId, redirect_uri: 'https://gw.test/oauth/github', scope: 'user:email' });
    expect(q.code_challenge_method).toBe('S256');
    const row = await stateRow(q.state ?? '');
    expect(row?.provider).toBe('github');
    expect(codeChallengeOf(t.ctx.secrets.decrypt(row?.code_verifier_enc ?? ''))).toBe(q.code_challenge);
    expect(started.res.headers['set-cookie']).toMatch(
      /^toolport_oauth_github=[\w-]{43}; Path=\/api\/oauth; Max-Age=600; HttpOnly; SameSite=Lax; Secure$/,
    );
  });

  it('sends the browser to Google with response_type code and the OpenID scopes, on the configured server address', async () => {
    await t.ctx.options.set('ServerAddress', 'https://gateway.example.com/');
    try {
      const started = await startSignIn(t, 'google');
      expect(`${started.url.origin}${started.url.pathname}`).toBe(fake.env.GOOGLE_AUTH_URL);
      expect(Object.fromEntries(started.url.searchParams)).toMatchObject({
        client_id: fake.clients.google.clientId,
        redirect_uri: 'https://gateway.example.com/oauth/google',
        response_type: 'code',
        scope: 'openid email profile',
        code_challenge_method: 'S256',
      });
    } finally {
      await t.ctx.options.set('ServerAddress', '');
    }
  });

  it('redirects at once with ?redirect=1', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/oauth/github/authorize?redirect=1' });
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toMatch(`${fake.env.GITHUB_BASE_URL}/login/oauth/authorize?client_id=`);
    expect(res.headers['set-cookie']).toMatch(/^toolport_oauth_github=/);
  });

  it('signs a new GitHub user up as role 1 without a password, with the verified primary email', async () => {
    fake.setGitHubUser(githubUser(1001, 'new-octo'));
    const res = await signInThrough(t, 'github');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ success: true, message: 'Signed in', data: { mode: 'login' } });
    expect(body.data.user).toMatchObject({
      username: 'new-octo',
      display_name: 'Name of new-octo',
      email: 'new-octo@example.com',
      role: 1,
      status: 1,
    });
    expect(body.data.user).toMatchObject({ github_id: '1001', login_method: 'github' });
    expect(body.data.refresh_token).toEqual(expect.any(String));
    const self = await t.app.inject({ method: 'GET', url: '/api/user/self', headers: bearer(body.data.access_token) });
    expect(self.json().data).toMatchObject({ id: body.data.user.id, token: expect.stringMatching(/^tpk_/) });
    expect((await t.ctx.usersRepo.byId(body.data.user.id))?.password_hash).toBeNull();
    expect(res.headers['set-cookie']).toMatch(/^toolport_oauth_github=; .*Max-Age=0/);

    // The server sent its secret and the PKCE verifier that matches the challenge of the authorize page.
    const authorize = fake.requests.find((r) => r.path === '/login/oauth/authorize');
    const exchange = fake.requests.find((r) => r.path === '/login/oauth/access_token');
    expect(exchange?.form).toMatchObject({ client_secret: fake.clients.github.clientSecret, redirect_uri: authorize?.query.redirect_uri });
    expect(codeChallengeOf(exchange?.form.code_verifier ?? '')).toBe(authorize?.query.code_challenge);
  });

  it('signs a returning GitHub user in to the same account', async () => {
    fake.setGitHubUser(githubUser(1002, 'returning'));
    const first = (await signInThrough(t, 'github')).json().data.user;
    const countBefore = await t.ctx.usersRepo.count();
    const again = await signInThrough(t, 'github');
    expect(again.statusCode).toBe(200);
    expect(again.json().data.user).toMatchObject({ id: first.id, username: 'returning' });
    expect(await t.ctx.usersRepo.count()).toBe(countBefore);
  });

  it('makes the username unique when the login is taken, and keeps only characters usernames allow', async () => {
    await makeUser(t, root, { username: 'taken-name' });
    fake.setGitHubUser(githubUser(1003, 'taken-name'));
    expect((await signInThrough(t, 'github')).json().data.user.username).toBe('taken-name_2');
    fake.setGoogleUser({ ...defaultGoogleUser(), sub: 'g-1003', email: 'zoë+tag@example.com' });
    expect((await signInThrough(t, 'google')).json().data.user.username).toBe('zoetag');
  });

  it('signs a new Google user up, storing the email only when Google verified it', async () => {
    fake.setGoogleUser({ ...defaultGoogleUser(), sub: 'g-2001', email: 'grace@example.com', name: 'Grace Hopper' });
    const verified = await signInThrough(t, 'google');
    expect(verified.statusCode).toBe(200);
    expect(verified.json().data.user).toMatchObject({
      username: 'grace',
      display_name: 'Grace Hopper',
      email: 'grace@example.com',
      google_id: 'g-2001',
      login_method: 'google',
    });

    fake.setGoogleUser({
      ...defaultGoogleUser(),
      sub: 'g-2002',
      email: 'unverified@example.com',
      email_verified: false,
      name: 'Un Verified',
    });
    const unverified = (await signInThrough(t, 'google')).json().data.user;
    expect(unverified.email).toBe('');
    const identity = await t.ctx.db
      .selectFrom('provider_identities')
      .select('email')
      .where('provider_user_id', '=', 'g-2002')
      .executeTakeFirst();
    expect(identity?.email).toBe('');
  });

  it('refuses new accounts while registration is closed, yet signs existing ones in', async () => {
    fake.setGitHubUser(githubUser(1004, 'existing'));
    expect((await signInThrough(t, 'github')).statusCode).toBe(200);
    await t.ctx.options.set('RegistrationEnabled', 'false');
    expect((await signInThrough(t, 'github')).statusCode).toBe(200);

    fake.setGitHubUser(githubUser(1005, 'newcomer'));
    const countBefore = await t.ctx.usersRepo.count();
    const en = await signInThrough(t, 'github');
    expect(en.statusCode).toBe(403);
    expect(en.json()).toMatchObject({ success: false, code: 'registration_closed' });
    expect(en.json().message).toMatch(/^Registration is closed: no account is linked to this GitHub account/);
    const zh = await signInThrough(t, 'github', { lang: 'zh-CN' });
    expect(zh.json().message).toMatch(/^注册已关闭：没有账户关联此 GitHub 账号/);
    expect(await t.ctx.usersRepo.count()).toBe(countBefore);
  });

  it('refuses a disabled account', async () => {
    fake.setGitHubUser(githubUser(1006, 'to-disable'));
    expect((await signInThrough(t, 'github')).statusCode).toBe(200);
    const manage = await t.app.inject({
      method: 'POST',
      url: '/api/user/manage',
      headers: bearer(root),
      payload: { username: 'to-disable', action: 'disable' },
    });
    expect(manage.statusCode).toBe(200);
    const res = await signInThrough(t, 'github');
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ code: 'user_disabled', message: 'This account has been disabled, please contact an administrator' });
    expect((await signInThrough(t, 'github', { lang: 'zh-CN' })).json().message).toBe('该账户已被禁用，请联系管理员');
  });

  it('refuses a state that is unknown, already used, of the other provider, expired, or from another browser', async () => {
    const started = await startSignIn(t, 'github');
    const params = await visitProvider(started.url);
    const forged = await finishSignIn(t, 'github', { ...params, state: 'forged' }, { cookie: started.cookie });
    expect(forged.statusCode).toBe(400);
    // The browser's nonce is dropped on a refusal too: a failed return cannot be retried with it.
    expect(forged.headers['set-cookie']).toMatch(/^toolport_oauth_github=; .*Max-Age=0/);
    expect(forged.json()).toMatchObject({
      code: 'oauth_state_invalid',
      message: expect.stringMatching(/^This GitHub sign-in request is invalid or was already used/),
    });
    const zh = await finishSignIn(t, 'github', { code: 'x', state: 'forged' }, { lang: 'zh-CN' });
    expect(zh.json().message).toBe('该 GitHub 登录请求无效或已被使用（state 不匹配），请从登录页重新开始');
    expect((await finishSignIn(t, 'github', { code: 'x' })).json().code).toBe('oauth_state_invalid');

    expect((await finishSignIn(t, 'github', params, { cookie: started.cookie })).statusCode).toBe(200);
    const reused = await finishSignIn(t, 'github', params, { cookie: started.cookie });
    expect(reused.statusCode).toBe(400);
    expect(reused.json().code).toBe('oauth_state_invalid');

    const forGoogle = await startSignIn(t, 'google');
    const googleParams = await visitProvider(forGoogle.url);
    expect((await finishSignIn(t, 'github', googleParams, { cookie: forGoogle.cookie })).json().code).toBe('oauth_state_invalid');

    const late = await startSignIn(t, 'github');
    const lateParams = await visitProvider(late.url);
    await t.ctx.db
      .updateTable('oauth_states')
      .set({ expires_at: Date.now() - 1 })
      .where('state_hash', '=', sha256(lateParams.state ?? ''))
      .execute();
    const expired = await finishSignIn(t, 'github', lateParams, { cookie: late.cookie });
    expect(expired.statusCode).toBe(400);
    expect(expired.json()).toMatchObject({ code: 'oauth_state_expired', message: expect.stringContaining('has expired') });

    const elsewhere = await startSignIn(t, 'github');
    const elsewhereParams = await visitProvider(elsewhere.url);
    const noCookie = await finishSignIn(t, 'github', elsewhereParams, { cookie: 'toolport_oauth_github=someone-elses' });
    expect(noCookie.statusCode).toBe(400);
    expect(noCookie.json()).toMatchObject({
      code: 'oauth_state_other_browser',
      message: expect.stringContaining('started in another browser'),
    });
  });

  it.each(['github', 'google'] as const)('shows the provider’s refusal of a replayed %s code', async (provider) => {
    const first = await startSignIn(t, provider);
    const firstParams = await visitProvider(first.url);
    expect((await finishSignIn(t, provider, firstParams, { cookie: first.cookie })).statusCode).toBe(200);
    const second = await startSignIn(t, provider);
    const secondParams = await visitProvider(second.url);
    const replay = await finishSignIn(t, provider, { ...secondParams, code: firstParams.code ?? '' }, { cookie: second.cookie });
    expect(replay.statusCode).toBe(400);
    expect(replay.json().code).toBe('oauth_exchange_refused');
    expect(replay.json().message).toBe(
      provider === 'github'
        ? 'GitHub refused the sign-in: bad_verification_code (The code passed is incorrect or expired.)'
        : 'Google refused the sign-in: invalid_grant (Bad Request)',
    );
  });

  it.each(['github', 'google'] as const)('fails when the %s PKCE verifier does not match the challenge', async (provider) => {
    const started = await startSignIn(t, provider);
    const params = await visitProvider(started.url);
    const wrong = t.ctx.secrets.encrypt('a-different-verifier-than-the-one-whose-hash-was-sent');
    await t.ctx.db
      .updateTable('oauth_states')
      .set({ code_verifier_enc: wrong })
      .where('state_hash', '=', sha256(params.state ?? ''))
      .execute();
    const res = await finishSignIn(t, provider, params, { cookie: started.cookie, lang: 'zh-CN' });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toBe(
      provider === 'github'
        ? 'GitHub 拒绝了登录：bad_verification_code (The code passed is incorrect or expired.)'
        : 'Google 拒绝了登录：invalid_grant (Invalid code verifier.)',
    );
  });

  it('reports a declined authorization, and that sign-in cannot be resumed', async () => {
    fake.denyNext('github');
    const started = await startSignIn(t, 'github');
    const params = await visitProvider(started.url);
    expect(params.error).toBe('access_denied');
    const en = await finishSignIn(t, 'github', params, { cookie: started.cookie });
    expect(en.statusCode).toBe(400);
    expect(en.json()).toMatchObject({ success: false, message: 'OAuth GitHub authorization failed' });
    expect(await stateRow(params.state ?? '')).toBeUndefined();
    const zh = await finishSignIn(t, 'google', { error: 'access_denied' }, { lang: 'zh-CN' });
    expect(zh.json().message).toBe('OAuth Google 授权失败');
  });

  it('needs the authorization code', async () => {
    const en = await finishSignIn(t, 'github', { state: 'whatever' });
    expect(en.statusCode).toBe(400);
    expect(en.json()).toMatchObject({ code: 'oauth_code_missing', message: 'Missing authorization code' });
    expect((await finishSignIn(t, 'google', {}, { lang: 'zh-CN' })).json().message).toBe('缺少授权码');
  });
});
