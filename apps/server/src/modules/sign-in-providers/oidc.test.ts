import { Role, UserStatus } from '@toolport/contract';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { bearer, createTestApp, engines, type TestApp } from '../../../test/harness.js';
import { serviceRow } from '../../../test/kits/service-row.js';
import { makeUser } from '../../../test/kits/users.js';
import { type LoopbackOidc, startLoopbackOidc, visitOidcProvider } from '../../../test/oidc-provider.js';

const SERVER = 'http://toolport.test';
const returnTo = (slug: string) => `${SERVER}/oauth/oidc/${slug}`;

/** The middle of a JWT with one claim changed, the signature left as it was. */
function withClaim(jwt: string, claim: string, value: unknown): string {
  const [h, p, s] = jwt.split('.');
  const payload = JSON.parse(Buffer.from(p ?? '', 'base64url').toString('utf8'));
  payload[claim] = value;
  return [h, Buffer.from(JSON.stringify(payload)).toString('base64url'), s].join('.');
}

/** A header with another kid: a key the provider never published. */
function withKid(jwt: string, kid: string): string {
  const [h, p, s] = jwt.split('.');
  const header = JSON.parse(Buffer.from(h ?? '', 'base64url').toString('utf8'));
  header.kid = kid;
  return [Buffer.from(JSON.stringify(header)).toString('base64url'), p, s].join('.');
}

describe.each(engines)('sign-in with an OpenID Connect provider on %s', (engine) => {
  let plain: LoopbackOidc;
  let groups: LoopbackOidc;
  let t: TestApp;
  let root: string;
  const corp = () => ({
    slug: 'corp',
    label: 'Corp SSO',
    issuer: plain.issuer,
    client_id: plain.clientId,
    client_secret: plain.clientSecret,
    scopes: 'openid email profile',
    allow_signup: true,
    icon: 'https://corp.example/icon.svg',
  });

  beforeAll(async () => {
    plain = await startLoopbackOidc({ mode: 'plain', redirectUris: [returnTo('corp')] });
    groups = await startLoopbackOidc({ mode: 'groups', redirectUris: [returnTo('team')] });
    // The groups provider comes from the environment, the plain one from Preferences: both ways are used.
    t = await createTestApp(engine, {
      OIDC_PROVIDERS: JSON.stringify([
        {
          slug: 'team',
          label: 'Team Directory',
          issuer: groups.issuer,
          client_id: groups.clientId,
          client_secret: groups.clientSecret,
          scopes: 'openid email profile groups',
          allow_signup: true,
          roles_claim: 'groups',
          role_map: {
            'toolport-admins': 'admin',
            'team-a': { services: ['svc-a'], groups: ['grp-a'] },
          },
        },
      ]),
    });
    root = await t.rootToken();
    await t.ctx.options.set('ServerAddress', SERVER);
    await t.ctx.options.set('OIDCProviders', JSON.stringify([corp()]));
  });
  afterAll(async () => {
    await t?.close();
    await plain?.close();
    await groups?.close();
  });

  const start = async (slug: string, headers: Record<string, string> = {}) => {
    const res = await t.app.inject({ method: 'GET', url: `/api/oauth/oidc/${slug}/authorize`, headers });
    if (res.statusCode !== 200) throw new Error(`authorize failed: ${res.statusCode} ${res.body}`);
    return { url: res.json().data.url as string, cookie: String(res.headers['set-cookie'] ?? '').split(';')[0] ?? '' };
  };
  const finish = (slug: string, params: Record<string, string>, cookie: string, lang = 'en') =>
    t.app.inject({
      method: 'GET',
      url: `/api/oauth/oidc/${slug}?${new URLSearchParams(params)}`,
      headers: { cookie, 'accept-language': lang },
    });
  const signIn = async (slug: string, opts: { lang?: string; rewrite?: (url: URL) => void } = {}) => {
    const started = await start(slug);
    const url = new URL(started.url);
    opts.rewrite?.(url);
    const params = await visitOidcProvider(url.href, returnTo(slug));
    const res = await finish(slug, params, started.cookie, opts.lang);
    return { res, params, cookie: started.cookie };
  };
  const provider = (p: LoopbackOidc, sub: string, claims: Parameters<LoopbackOidc['accounts']['set']>[1]) => {
    p.accounts.set(sub, claims);
    p.signInAs(sub);
  };
  const userCount = async () =>
    Number(
      (
        await t.ctx.db
          .selectFrom('users')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  it('lists the enabled providers in /api/status with the return address to register, and keeps the secret encrypted and masked', async () => {
    const status = await t.app.inject({ method: 'GET', url: '/api/status' });
    expect(status.json().data.oidc_providers).toEqual([
      { slug: 'team', label: 'Team Directory', icon: '', redirect_uri: returnTo('team') },
      { slug: 'corp', label: 'Corp SSO', icon: 'https://corp.example/icon.svg', redirect_uri: returnTo('corp') },
    ]);
    expect(status.body).not.toContain(plain.clientSecret);
    expect(status.body).not.toContain(groups.clientSecret);

    const stored = await t.ctx.db.selectFrom('options').select('value').where('key', '=', 'OIDCProviders').executeTakeFirstOrThrow();
    expect(stored.value).not.toContain(plain.clientSecret);
    expect(t.ctx.secrets.decrypt(JSON.parse(stored.value)[0].client_secret)).toBe(plain.clientSecret);

    const list = await t.app.inject({ method: 'GET', url: '/api/option/', headers: bearer(root) });
    expect(list.body).not.toContain(plain.clientSecret);
    const entry = list.json().data.find((o: { key: string }) => o.key === 'OIDCProviders');
    expect(JSON.parse(entry.value)[0]).toMatchObject({ slug: 'corp', client_secret: '********' });

    // Saving the masked document back (the console does) keeps the secret; a user may not read or write it.
    const put = await t.app.inject({
      method: 'PUT',
      url: '/api/option/',
      headers: bearer(root),
      payload: { key: 'OIDCProviders', value: entry.value },
    });
    expect(put.statusCode).toBe(200);
    expect(JSON.parse(t.ctx.options.get('OIDCProviders'))[0].client_secret).toBe(plain.clientSecret);
    const user = await makeUser(t, root);
    expect((await t.app.inject({ method: 'GET', url: '/api/option/', headers: bearer(user.token) })).statusCode).toBe(403);
  });

  it('refuses a provider document that does not fit, in both languages', async () => {
    const bad = JSON.stringify([{ ...corp(), slug: 'Bad Slug' }]);
    const res = await t.app.inject({
      method: 'PUT',
      url: '/api/option/',
      headers: { ...bearer(root), 'accept-language': 'zh-CN' },
      payload: { key: 'OIDCProviders', value: bad },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toMatch(/^设置项 OIDCProviders 的值无效：0\.slug/);
    expect(JSON.parse(t.ctx.options.get('OIDCProviders'))[0].slug).toBe('corp');
  });

  it('sends the browser to the provider with PKCE S256, state and nonce, and signs a new person up from the ID token', async () => {
    const started = await start('corp');
    const q = Object.fromEntries(new URL(started.url).searchParams);
    expect(q).toMatchObject({
      client_id: plain.clientId,
      redirect_uri: returnTo('corp'),
      response_type: 'code',
      code_challenge_method: 'S256',
    });
    expect(q.nonce).toMatch(/^[\w-]{43}$/);
    expect(q.state).toMatch(/^[\w-]{43}$/);
    expect(started.cookie).toMatch(/^toolport_oauth_oidc_corp=[\w-]{43}$/);

    provider(plain, 'alice-sub', { email: 'alice@corp.example', email_verified: true, name: 'Alice Example', preferred_username: 'alice' });
    const { res } = await signIn('corp');
    expect(res.statusCode).toBe(200);
    const body = res.json().data;
    expect(body).toMatchObject({
      mode: 'login',
      user: { username: 'alice', display_name: 'Alice Example', email: 'alice@corp.example', role: Role.User },
    });
    const me = await t.app.inject({ method: 'GET', url: '/api/user/self', headers: bearer(body.access_token) });
    expect(me.json().data.username).toBe('alice');

    // Again: the same account, not a second one.
    const before = await userCount();
    const again = await signIn('corp');
    expect(again.res.json().data.user.id).toBe(body.user.id);
    expect(await userCount()).toBe(before);
  });

  it('links an existing account by an email the provider verified', async () => {
    const existing = await makeUser(t, root, { email: 'bob@corp.example' });
    provider(plain, 'bob-sub', { email: 'Bob@corp.example', email_verified: true, name: 'Bob' });
    const { res } = await signIn('corp');
    expect(res.statusCode).toBe(200);
    expect(res.json().data.user.id).toBe(existing.id);
    const identity = await t.ctx.db
      .selectFrom('provider_identities')
      .selectAll()
      .where('provider', '=', 'oidc:corp')
      .where('provider_user_id', '=', 'bob-sub')
      .executeTakeFirst();
    expect(identity?.user_id).toBe(existing.id);
  });

  it('never links an existing account by an unverified email, nor creates a second one, and says why in both languages', async () => {
    const existing = await makeUser(t, root, { email: 'carol@corp.example' });
    provider(plain, 'carol-sub', { email: 'carol@corp.example', email_verified: false, name: 'Mallory as Carol' });
    const before = await userCount();
    const warn = vi.spyOn(t.ctx.logger, 'warn');
    for (const [lang, text] of [
      ['en', 'Corp SSO has not verified the email address carol@corp.example, which belongs to an existing account'],
      ['zh-CN', 'Corp SSO 尚未验证邮箱 carol@corp.example，而该邮箱属于已有账号'],
    ] as const) {
      const { res } = await signIn('corp', { lang });
      expect(res.statusCode).toBe(403);
      expect(res.json()).toMatchObject({ success: false, code: 'oidc_email_unverified' });
      expect(res.json().message).toContain(text);
      expect(res.json().data?.access_token).toBeUndefined();
    }
    expect(await userCount()).toBe(before);
    const identities = await t.ctx.db
      .selectFrom('provider_identities')
      .select('user_id')
      .where('provider_user_id', '=', 'carol-sub')
      .execute();
    expect(identities).toEqual([]);
    expect(existing.id).toBeGreaterThan(0);
    expect(warn).toHaveBeenCalledWith(
      expect.objectContaining({ provider: 'oidc:corp', reason: 'oidc.email_unverified' }),
      'OpenID Connect sign-in refused',
    );
    warn.mockRestore();
  });

  it('creates nobody when the provider may not sign people up', async () => {
    await t.ctx.options.set('OIDCProviders', JSON.stringify([{ ...corp(), allow_signup: false, client_secret: '********' }]));
    try {
      provider(plain, 'dave-sub', { email: 'dave@corp.example', email_verified: true });
      const before = await userCount();
      const { res } = await signIn('corp');
      expect(res.statusCode).toBe(403);
      expect(res.json().code).toBe('oidc_signup_closed');
      expect(await userCount()).toBe(before);
    } finally {
      await t.ctx.options.set('OIDCProviders', JSON.stringify([corp()]));
    }
  });

  it('maps the groups claim (read from userinfo) to roles and access lists at each sign-in, and disables an account it no longer grants', async () => {
    const svc = await t.ctx.db
      .insertInto('services')
      .values(serviceRow({ name: 'svc-a' }))
      .returning('id')
      .executeTakeFirstOrThrow();
    const other = await t.ctx.db
      .insertInto('services')
      .values(serviceRow({ name: 'svc-b' }))
      .returning('id')
      .executeTakeFirstOrThrow();
    const now = Date.now();
    const grp = await t.ctx.db
      .insertInto('groups')
      .values({ name: 'grp-a', display_name: 'A', description: '', mode: 'all', separator: '__', created_at: now, updated_at: now })
      .returning('id')
      .executeTakeFirstOrThrow();
    const onList = async (userId: number) =>
      (
        await t.ctx.db
          .selectFrom('access_users')
          .select(['subject', 'subject_id'])
          .where('user_id', '=', userId)
          .orderBy('subject')
          .execute()
      ).map((r) => `${r.subject}:${r.subject_id}`);

    provider(groups, 'erin-sub', { email: 'erin@team.example', email_verified: true, name: 'Erin', groups: ['toolport-admins', 'team-a'] });
    const first = await signIn('team');
    expect(first.res.statusCode).toBe(200);
    const erin = first.res.json().data.user;
    expect(erin).toMatchObject({ email: 'erin@team.example', role: Role.Admin });
    expect(await onList(erin.id)).toEqual([`group:${grp.id}`, `service:${svc.id}`]);
    expect(await onList(erin.id)).not.toContain(`service:${other.id}`);

    groups.accounts.set('erin-sub', { ...groups.accounts.get('erin-sub'), groups: ['team-a'] });
    const second = await signIn('team');
    expect(second.res.json().data.user).toMatchObject({ id: erin.id, role: Role.User });

    groups.accounts.set('erin-sub', { ...groups.accounts.get('erin-sub'), groups: ['toolport-admins'] });
    await signIn('team');
    expect(await onList(erin.id)).toEqual([]);

    groups.accounts.set('erin-sub', { ...groups.accounts.get('erin-sub'), groups: ['someone-else'] });
    const gone = await signIn('team', { lang: 'zh-CN' });
    expect(gone.res.statusCode).toBe(403);
    expect(gone.res.json().message).toContain('你的 Team Directory 账号不在任何可使用 Toolport 的组中');
    expect((await t.ctx.usersRepo.byId(erin.id))?.status).toBe(UserStatus.Disabled);
    // Her earlier token stops working too.
    const me = await t.app.inject({ method: 'GET', url: '/api/user/self', headers: bearer(first.res.json().data.access_token) });
    expect(me.statusCode).not.toBe(200);
  });

  it('refuses a provider that does not send the roles claim, rather than guess a role', async () => {
    provider(groups, 'frank-sub', { email: 'frank@team.example', email_verified: true, name: 'Frank' });
    const before = await userCount();
    const { res } = await signIn('team');
    expect(res.statusCode).toBe(502);
    expect(res.json()).toMatchObject({ code: 'oidc_claims_missing' });
    expect(res.json().message).toContain('"groups"');
    expect(await userCount()).toBe(before);
  });

  it('follows a key rotation by fetching the keys again once, and not again at once for an unknown kid', async () => {
    provider(plain, 'gina-sub', { email: 'gina@corp.example', email_verified: true, name: 'Gina' });
    expect((await signIn('corp')).res.statusCode).toBe(200);
    const fetches = plain.jwksFetches;
    await plain.rotateKeys();
    const rotated = await signIn('corp');
    expect(rotated.res.statusCode).toBe(200);
    expect(plain.jwksFetches).toBe(fetches + 1);

    plain.tamper = (token) => withKid(token, 'a-kid-nobody-published');
    try {
      const { res } = await signIn('corp');
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ code: 'oidc_id_token_invalid' });
      expect(plain.jwksFetches).toBe(fetches + 1);
    } finally {
      plain.tamper = undefined;
    }
  });

  it('refuses a tampered ID token in both languages and gives no session', async () => {
    provider(plain, 'hank-sub', { email: 'hank@corp.example', email_verified: true, name: 'Hank' });
    plain.tamper = (token) => withClaim(token, 'email', 'root@corp.example');
    try {
      const en = await signIn('corp');
      expect(en.res.statusCode).toBe(400);
      expect(en.res.json().message).toBe('Sign-in refused: the identity token from Corp SSO is not valid (the signature does not verify)');
      const zh = await signIn('corp', { lang: 'zh-CN' });
      expect(zh.res.json().message).toBe('登录被拒绝：Corp SSO 返回的身份令牌无效（the signature does not verify）');
      expect(zh.res.headers['set-cookie']).not.toMatch(/toolport_oauth_oidc_corp=[^;]/);
      expect(zh.res.json().data).toBeUndefined();

      plain.tamper = (token) => `${token.split('.').slice(0, 2).join('.')}.`;
      expect((await signIn('corp')).res.json().code).toBe('oidc_id_token_invalid');
    } finally {
      plain.tamper = undefined;
    }
  });

  it('refuses an ID token for another audience', async () => {
    provider(plain, 'ivy-sub', { email: 'ivy@corp.example', email_verified: true });
    // The signature breaks too, but the audience is what jose checks after it: either way no session.
    plain.tamper = (token) => withClaim(token, 'aud', 'someone-else');
    try {
      const { res } = await signIn('corp');
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe('oidc_id_token_invalid');
    } finally {
      plain.tamper = undefined;
    }
  });

  it('refuses an ID token issued for another sign-in request (wrong nonce)', async () => {
    provider(plain, 'jack-sub', { email: 'jack@corp.example', email_verified: true });
    const { res } = await signIn('corp', { rewrite: (url) => url.searchParams.set('nonce', 'a-nonce-from-elsewhere') });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'oidc_nonce_mismatch' });
    expect(res.json().message).toContain('nonce mismatch');
  });

  it('refuses a replayed code, with its state and with a fresh one', async () => {
    provider(plain, 'kim-sub', { email: 'kim@corp.example', email_verified: true });
    const first = await signIn('corp');
    expect(first.res.statusCode).toBe(200);
    const replay = await finish('corp', first.params, first.cookie);
    expect(replay.statusCode).toBe(400);
    expect(replay.json().code).toBe('oauth_state_invalid');

    const fresh = await start('corp');
    const state = new URL(fresh.url).searchParams.get('state') ?? '';
    const reused = await finish('corp', { code: first.params.code ?? '', state }, fresh.cookie);
    expect(reused.statusCode).toBe(400);
    expect(reused.json()).toMatchObject({ code: 'oauth_exchange_refused', data: { error: 'invalid_grant' } });
  });

  it('says so when discovery fails, before any state is kept', async () => {
    await t.ctx.options.set(
      'OIDCProviders',
      JSON.stringify([corp(), { ...corp(), slug: 'broken', label: 'Broken IdP', issuer: `${plain.issuer}/no-such-realm` }]),
    );
    try {
      const states = async () =>
        Number(
          (
            await t.ctx.db
              .selectFrom('oauth_states')
              .select((eb) => eb.fn.countAll().as('n'))
              .executeTakeFirstOrThrow()
          ).n,
        );
      const before = await states();
      const res = await t.app.inject({ method: 'GET', url: '/api/oauth/oidc/broken/authorize', headers: { 'accept-language': 'zh-CN' } });
      expect(res.statusCode).toBe(502);
      expect(res.json()).toMatchObject({ success: false, code: 'oidc_discovery_failed' });
      expect(res.json().message).toMatch(/^无法通过 Broken IdP 登录：读取其 OpenID 配置失败（HTTP 404/);
      expect(await states()).toBe(before);
    } finally {
      await t.ctx.options.set('OIDCProviders', JSON.stringify([corp()]));
    }
  });

  it('answers an unknown or malformed slug, and a link without a token, without a 500', async () => {
    const unknown = await t.app.inject({ method: 'GET', url: '/api/oauth/oidc/nobody/authorize' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().message).toBe('There is no enabled sign-in provider named "nobody"');
    const malformed = await t.app.inject({ method: 'GET', url: `/api/oauth/oidc/${'%2E%2E%2F'.repeat(3)}/authorize` });
    expect(malformed.statusCode).toBe(400);
    const callback = await t.app.inject({ method: 'GET', url: '/api/oauth/oidc/corp?code=x&state=y' });
    expect(callback.statusCode).toBe(400);
    expect(callback.json().code).toBe('oauth_state_invalid');
    const bind = await t.app.inject({ method: 'GET', url: '/api/oauth/oidc/corp/authorize?bind=1' });
    expect(bind.statusCode).toBe(401);
  });

  it('leaves audit entries for the preference (secret masked) and for each sign-in, let in or refused', async () => {
    const mark = Number(
      (
        await t.ctx.db
          .selectFrom('audit_entries')
          .select((eb) => eb.fn.max('id').as('id'))
          .executeTakeFirst()
      )?.id ?? 0,
    );
    const put = await t.app.inject({
      method: 'PUT',
      url: '/api/option/',
      headers: bearer(root),
      payload: { key: 'OIDCProviders', value: JSON.stringify([corp()]) },
    });
    expect(put.statusCode).toBe(200);
    provider(plain, 'mia-sub', { email: 'mia@corp.example', email_verified: true });
    const ok = await signIn('corp');
    expect(ok.res.statusCode).toBe(200);
    const refused = await finish('corp', ok.params, ok.cookie);
    expect(refused.statusCode).toBe(400);

    const rows = await t.ctx.db.selectFrom('audit_entries').selectAll().where('id', '>', mark).orderBy('id').execute();
    const text = JSON.stringify(rows);
    expect(text).not.toContain(plain.clientSecret);
    const option = rows.find((r) => r.object_type === 'option');
    expect(JSON.parse(option?.changes ?? '{}').body.value[0]).toMatchObject({ slug: 'corp', client_secret: '********' });
    const sessions = rows.filter((r) => r.object_type === 'session');
    expect(sessions.map((r) => [r.outcome, JSON.parse(r.changes).provider])).toEqual([
      ['ok', 'oidc:corp'],
      ['refused', 'oidc:corp'],
    ]);
    expect(sessions[0]?.actor_id).toBe(ok.res.json().data.user.id);
    expect(text).not.toContain(ok.params.code ?? 'no code');
  });

  it('links the provider to the signed-in caller with bind=1, never to another account', async () => {
    const owner = await makeUser(t, root, { email: 'lee-other@corp.example' });
    provider(plain, 'lee-sub', { email: 'lee@corp.example', email_verified: true });
    const res = await t.app.inject({ method: 'GET', url: '/api/oauth/oidc/corp/authorize?bind=1', headers: bearer(owner.token) });
    const url = res.json().data.url as string;
    const params = await visitOidcProvider(url, returnTo('corp'));
    const done = await finish('corp', params, String(res.headers['set-cookie']).split(';')[0] ?? '');
    expect(done.json().data).toMatchObject({ mode: 'bind', user: { id: owner.id } });

    // The same provider account cannot be linked to a second user.
    const second = await makeUser(t, root);
    const again = await t.app.inject({ method: 'GET', url: '/api/oauth/oidc/corp/authorize?bind=1', headers: bearer(second.token) });
    const params2 = await visitOidcProvider(again.json().data.url, returnTo('corp'));
    const refused = await finish('corp', params2, String(again.headers['set-cookie']).split(';')[0] ?? '');
    expect(refused.statusCode).toBe(409);
    expect(refused.json().code).toBe('oauth_identity_taken');
  });
});
