import { Role } from '@toolport/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createTestApp, engines, type TestApp } from '../../../test/harness.js';
import { makeUser, tokenOf } from '../../../test/kits/users.js';
import { type LoopbackOidc, oidcFlow, startLoopbackOidc } from '../../../test/oidc-provider.js';

const SERVER = 'http://toolport.test';

/**
 * Account linking by an administrator (decision 0063): a provider sign-in that only an admin may link (an
 * unverified email of an existing account, a provider that may not sign people up) is refused and held; an admin
 * links it (or any provider and subject) to an account of lower role, and unlinks it, each with one audit entry.
 */
describe.each(engines)('an administrator links provider identities on %s', (engine) => {
  let idp: LoopbackOidc;
  let t: TestApp;
  let root: string;
  let flow: ReturnType<typeof oidcFlow>;

  beforeAll(async () => {
    idp = await startLoopbackOidc({ mode: 'plain', redirectUris: [`${SERVER}/oauth/oidc/corp`] });
    t = await createTestApp(engine);
    root = await t.rootToken();
    await t.ctx.options.set('ServerAddress', SERVER);
    await t.ctx.options.set(
      'OIDCProviders',
      JSON.stringify([
        {
          slug: 'corp',
          label: 'Corp SSO',
          issuer: idp.issuer,
          client_id: idp.clientId,
          client_secret: idp.clientSecret,
          allow_signup: false,
        },
      ]),
    );
    flow = oidcFlow(t.app, SERVER);
  });
  afterAll(async () => {
    await t?.close();
    await idp?.close();
  });

  const as = (token: string, lang = 'en') => ({ ...bearer(token), 'accept-language': lang });
  const held = async () => (await t.app.inject({ method: 'GET', url: '/api/user/held_identities', headers: bearer(root) })).json().data;
  const link = (token: string, userId: number, payload: unknown, lang = 'en') =>
    t.app.inject({ method: 'POST', url: `/api/user/${userId}/identities`, headers: as(token, lang), payload: payload as object });
  const unlink = (token: string, userId: number, identityId: number, lang = 'en') =>
    t.app.inject({ method: 'DELETE', url: `/api/user/${userId}/identities/${identityId}`, headers: as(token, lang) });
  const auditSince = async (mark: number) =>
    t.ctx.db.selectFrom('audit_entries').selectAll().where('id', '>', mark).orderBy('id').execute();
  const lastAuditId = async () =>
    Number(
      (
        await t.ctx.db
          .selectFrom('audit_entries')
          .select((eb) => eb.fn.max('id').as('id'))
          .executeTakeFirst()
      )?.id ?? 0,
    );

  it('holds a sign-in whose unverified email belongs to an account, says so in both languages, and lets an admin link it', async () => {
    const carol = await makeUser(t, root, { email: 'carol@corp.example' });
    idp.accounts.set('carol-sub', { email: 'carol@corp.example', email_verified: false, name: 'Carol at Corp' });
    idp.signInAs('carol-sub');
    const en = await flow.signIn('corp');
    expect(en.status).toBe(403);
    expect(en.body).toMatchObject({ success: false, code: 'oidc_email_unverified' });
    expect(en.body.message).toContain('ask an administrator to link the accounts (your sign-in was recorded for them on the Users page)');
    const zh = await flow.signIn('corp', { lang: 'zh-CN' });
    expect(zh.body.message).toContain('或请管理员关联账号（本次登录已记录在“用户”页面，供管理员处理）');
    expect(zh.body.data?.access_token).toBeUndefined();

    // One held row for the identity, counted twice, naming the account its address belongs to; never linked by itself.
    const rows = (await held()).filter((h: { subject: string }) => h.subject === 'carol-sub');
    expect(rows).toEqual([
      expect.objectContaining({
        provider: 'oidc:corp',
        provider_label: 'Corp SSO',
        email: 'carol@corp.example',
        display_name: 'Carol at Corp',
        reason: 'email_unverified',
        user_id: carol.id,
        user_username: carol.username,
        attempts: 2,
      }),
    ]);
    expect(await t.ctx.db.selectFrom('provider_identities').select('id').where('provider_user_id', '=', 'carol-sub').execute()).toEqual([]);

    // An admin (lower than root, higher than carol) links it: one audit entry, the held row used up.
    const admin = await makeUser(t, root, { role: 10 });
    const mark = await lastAuditId();
    const linked = await link(admin.token, carol.id, { provider: 'oidc:corp', subject: 'carol-sub' });
    expect(linked.statusCode, linked.body).toBe(200);
    expect(linked.json().message).toBe('Identity linked');
    expect(linked.json().data).toEqual([
      expect.objectContaining({ provider: 'oidc:corp', provider_label: 'Corp SSO', subject: 'carol-sub', email: 'carol@corp.example' }),
    ]);
    const entries = await auditSince(mark);
    expect(entries.map((e) => [e.action, e.object_type, e.object_id, e.actor_id, e.outcome])).toEqual([
      ['link_identity', 'user', String(carol.id), admin.id, 'ok'],
    ]);
    expect(JSON.parse(entries[0]?.changes ?? '{}').body).toEqual({ provider: 'oidc:corp', subject: 'carol-sub' });
    expect((await held()).some((h: { subject: string }) => h.subject === 'carol-sub')).toBe(false);

    // Now the provider signs her in, as herself.
    const again = await flow.signIn('corp');
    expect(again.status).toBe(200);
    expect(again.body.data?.user.id).toBe(carol.id);

    // The admin unlinks it (carol has a password): one audit entry; the next provider sign-in is held again.
    const identityId = linked.json().data[0].id as number;
    const mark2 = await lastAuditId();
    const removed = await unlink(admin.token, carol.id, identityId, 'zh-CN');
    expect(removed.statusCode, removed.body).toBe(200);
    expect(removed.json()).toMatchObject({ message: '已解除关联身份', data: [] });
    expect((await auditSince(mark2)).map((e) => [e.action, e.object_id, e.outcome])).toEqual([['unlink_identity', String(carol.id), 'ok']]);
    expect((await flow.signIn('corp')).status).toBe(403);
  });

  it('holds a sign-in the provider may not sign up, and an admin may dismiss it', async () => {
    idp.accounts.set('dave-sub', { email: 'dave@corp.example', email_verified: true, name: 'Dave' });
    idp.signInAs('dave-sub');
    const res = await flow.signIn('corp', { lang: 'zh-CN' });
    expect(res.status).toBe(403);
    expect(res.body.message).toContain('请联系管理员将其关联到你的账号（本次登录已记录在“用户”页面，供管理员处理）');
    const row = (await held()).find((h: { subject: string }) => h.subject === 'dave-sub');
    expect(row).toMatchObject({ reason: 'signup_closed', user_id: null, email: 'dave@corp.example' });

    const user = await makeUser(t, root);
    const refused = await t.app.inject({ method: 'DELETE', url: `/api/user/held_identities/${row.id}`, headers: bearer(user.token) });
    expect(refused.statusCode).toBe(403);
    const mark = await lastAuditId();
    const done = await t.app.inject({ method: 'DELETE', url: `/api/user/held_identities/${row.id}`, headers: bearer(root) });
    expect(done.statusCode).toBe(200);
    const twice = await t.app.inject({ method: 'DELETE', url: `/api/user/held_identities/${row.id}`, headers: as(root, 'zh-CN') });
    expect(twice.statusCode).toBe(404);
    expect(twice.json().message).toBe('没有这条待处理的登录（可能已被关联或忽略）');
    expect((await auditSince(mark)).map((e) => [e.action, e.outcome])).toEqual([
      ['dismiss_held_identity', 'ok'],
      ['dismiss_held_identity', 'failed'],
    ]);
  });

  it('lets an admin act only on users of lower role, the super admin on anyone, and nobody else at all', async () => {
    const admin = await makeUser(t, root, { role: 10 });
    const otherAdmin = await makeUser(t, root, { role: 10 });
    const user = await makeUser(t, root);
    const victim = await makeUser(t, root);
    const rootId = (await t.ctx.usersRepo.byUsername('root'))?.id ?? 0;
    const payload = { provider: 'oidc:corp', subject: 'mallory-sub' };

    // A plain user may neither read nor change anyone's identities, their own included.
    for (const res of [
      await t.app.inject({ method: 'GET', url: '/api/user/held_identities', headers: bearer(user.token) }),
      await t.app.inject({ method: 'GET', url: `/api/user/${victim.id}/identities`, headers: bearer(user.token) }),
      await link(user.token, victim.id, payload),
      await link(user.token, user.id, payload),
      await unlink(user.token, victim.id, 1),
    ]) {
      expect(res.statusCode).toBe(403);
    }
    // An admin may not link to a fellow admin, to the super admin, nor to themselves.
    for (const target of [otherAdmin.id, rootId, admin.id]) {
      const res = await link(admin.token, target, payload, 'zh-CN');
      expect(res.statusCode).toBe(403);
      expect(res.json().message).toBe('您不能管理角色等于或高于您的用户');
    }
    expect((await link(admin.token, otherAdmin.id, payload)).json().message).toBe(
      'You cannot manage a user whose role is equal to or higher than yours',
    );
    expect(await t.ctx.db.selectFrom('provider_identities').select('id').where('provider_user_id', '=', 'mallory-sub').execute()).toEqual(
      [],
    );

    // The super admin may, on an admin; and an admin may then not unlink it.
    const byRoot = await link(root, otherAdmin.id, payload);
    expect(byRoot.statusCode, byRoot.body).toBe(200);
    const identityId = byRoot.json().data[0].id as number;
    expect((await unlink(admin.token, otherAdmin.id, identityId)).statusCode).toBe(403);
    // Another user's identity id under a user the admin may act on: not found, and nothing removed.
    const crossed = await unlink(admin.token, victim.id, identityId);
    expect(crossed.statusCode).toBe(404);
    expect(await t.ctx.db.selectFrom('provider_identities').select('id').where('id', '=', identityId).execute()).toHaveLength(1);
    // A disabled admin's token is refused before any rule.
    await t.ctx.usersRepo.update(admin.id, { status: 2, updated_at: Date.now() });
    t.ctx.events.emit({ type: 'user.changed', userId: admin.id });
    expect((await link(await tokenOf(t, admin.id), victim.id, payload)).statusCode).toBe(401);
    expect(await t.ctx.db.selectFrom('provider_identities').select('id').where('user_id', '=', victim.id).execute()).toEqual([]);
  });

  it('refuses a taken identity, a second identity of one provider, an unknown provider and crafted input, in both languages', async () => {
    const a = await makeUser(t, root);
    const b = await makeUser(t, root);
    expect((await link(root, a.id, { provider: 'oidc:corp', subject: 'shared-sub' })).statusCode).toBe(200);
    const taken = await link(root, b.id, { provider: 'oidc:corp', subject: 'shared-sub' });
    expect(taken.statusCode).toBe(409);
    expect(taken.json()).toMatchObject({
      code: 'oauth_identity_taken',
      message: 'This Corp SSO account is already linked to another user',
    });
    const second = await link(root, a.id, { provider: 'oidc:corp', subject: 'another-sub' }, 'zh-CN');
    expect(second.statusCode).toBe(409);
    expect(second.json().message).toBe(`${a.username} 已关联另一个 Corp SSO 账号：请先解除关联`);
    // Linking what is already there changes nothing and says so with the list.
    const same = await link(root, a.id, { provider: 'oidc:corp', subject: 'shared-sub' });
    expect(same.statusCode).toBe(200);
    expect(same.json().data).toHaveLength(1);

    const unknown = await link(root, a.id, { provider: 'oidc:nobody', subject: 'x' }, 'zh-CN');
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().message).toBe('没有登录方式“oidc:nobody”：请使用 github、google 或已配置提供方的 oidc:{slug}');
    for (const payload of [
      { provider: 'wechat', subject: 'x' },
      { provider: 'oidc:../../etc', subject: 'x' },
      { provider: 'oidc:corp', subject: '' },
      { provider: 'oidc:corp', subject: 'x'.repeat(256) },
      { provider: 'oidc:corp' },
      ['oidc:corp', 'x'],
    ]) {
      const res = await link(root, a.id, payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().success).toBe(false);
    }
    const missing = await link(root, 2_000_000_000, { provider: 'oidc:corp', subject: 'y' });
    expect(missing.statusCode).toBe(404);
    const badId = await t.app.inject({ method: 'GET', url: '/api/user/abc/identities', headers: bearer(root) });
    expect(badId.statusCode).toBe(400);
  });

  it('will not unlink the last way a provider-made account signs in', async () => {
    const now = Date.now();
    const row = await t.ctx.db
      .insertInto('users')
      .values({
        username: `sso_${now}`,
        display_name: 'SSO only',
        email: '',
        password_hash: null,
        role: Role.User,
        status: 1,
        api_key_hash: `h${now}`,
        api_key_enc: 'x',
        created_at: now,
        updated_at: now,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const linked = await link(root, row.id, { provider: 'oidc:corp', subject: `only-${now}` });
    const res = await unlink(root, row.id, linked.json().data[0].id, 'zh-CN');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'last_sign_in_method' });
    expect(res.json().message).toBe(`Corp SSO 是 sso_${now} 唯一的登录方式，无法解除关联：请先设置密码或关联其他登录方式`);
    const list = await t.app.inject({ method: 'GET', url: `/api/user/${row.id}/identities`, headers: bearer(root) });
    expect(list.json().data).toHaveLength(1);
  });
});
