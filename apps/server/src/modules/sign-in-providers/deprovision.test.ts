import { UserStatus } from '@toolport/contract';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestApp, engines, type TestApp } from '../../../test/harness.js';
import { type LoopbackOidc, oidcFlow, startLoopbackOidc } from '../../../test/oidc-provider.js';

const SERVER = 'http://toolport.test';

/**
 * Deprovisioning between sign-ins (decision 0063): at each console refresh, a user who signed in through an
 * OpenID Connect provider with `deprovision` on is asked about at the provider (the real oidc-provider on
 * loopback, with a refresh token grant). The provider's invalid_grant ends the session (`sign_out`) or also
 * disables a provider-only account (`disable`); an outage lets the refresh through.
 */
describe.each(engines)('deprovisioning at refresh on %s', (engine) => {
  let idp: LoopbackOidc;
  let t: TestApp;
  let flow: ReturnType<typeof oidcFlow>;
  const settings = (deprovision: 'off' | 'sign_out' | 'disable') =>
    JSON.stringify([
      {
        slug: 'corp',
        label: 'Corp SSO',
        issuer: idp.issuer,
        client_id: idp.clientId,
        client_secret: idp.clientSecret,
        allow_signup: true,
        deprovision,
      },
    ]);

  beforeAll(async () => {
    idp = await startLoopbackOidc({ mode: 'plain', redirectUris: [`${SERVER}/oauth/oidc/corp`] });
    t = await createTestApp(engine);
    await t.ctx.options.set('ServerAddress', SERVER);
    await t.ctx.options.set('OIDCProviders', settings('disable'));
    flow = oidcFlow(t.app, SERVER);
  });
  afterAll(async () => {
    await t?.close();
    await idp?.close();
  });

  /** The check interval passed: the next refresh asks the provider again. */
  const later = () => t.ctx.db.updateTable('provider_identities').set({ checked_at: 0 }).execute();
  const refresh = (token: string, lang = 'en') =>
    t.app.inject({ method: 'POST', url: '/api/auth/refresh', headers: { 'accept-language': lang }, payload: { refresh_token: token } });
  const identity = (sub: string) =>
    t.ctx.db
      .selectFrom('provider_identities')
      .selectAll()
      .where('provider', '=', 'oidc:corp')
      .where('provider_user_id', '=', sub)
      .executeTakeFirstOrThrow();
  const signInAs = async (sub: string) => {
    idp.accounts.set(sub, { email: `${sub}@corp.example`, email_verified: true, name: sub, preferred_username: sub });
    idp.signInAs(sub);
    const res = await flow.signIn('corp');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.data as { refresh_token: string; user: { id: number } };
  };

  it('keeps the provider tokens encrypted, and asks the provider at a refresh, at most once per interval, while it vouches', async () => {
    const session = await signInAs('ana');
    const stored = await identity('ana');
    expect(stored.refresh_token_enc).not.toBe('');
    expect(stored.access_token_enc).not.toBe('');
    expect(stored.access_expires_at).toBeGreaterThan(Date.now());
    expect(t.ctx.secrets.decrypt(stored.refresh_token_enc).length).toBeGreaterThan(10);
    expect(JSON.stringify(stored)).not.toContain(t.ctx.secrets.decrypt(stored.refresh_token_enc));

    const before = idp.refreshes;
    const first = await refresh(session.refresh_token);
    expect(first.statusCode, first.body).toBe(200);
    expect(idp.refreshes).toBe(before + 1);
    // Within the check interval a refresh goes on unasked.
    const second = await refresh(first.json().data.refresh_token);
    expect(second.statusCode, second.body).toBe(200);
    expect(idp.refreshes).toBe(before + 1);
    // After it, the provider's answer kept from the last check (a rotated refresh token) is used.
    await later();
    const third = await refresh(second.json().data.refresh_token);
    expect(third.statusCode, third.body).toBe(200);
    expect(idp.refreshes).toBe(before + 2);
  });

  it('asks the provider once when two sessions of one person refresh at the same moment, and signs neither out', async () => {
    const a = await signInAs('gus');
    const b = await signInAs('gus');
    const before = idp.refreshes;
    const [ra, rb] = await Promise.all([refresh(a.refresh_token), refresh(b.refresh_token)]);
    expect([ra.statusCode, rb.statusCode]).toEqual([200, 200]);
    expect(idp.refreshes).toBe(before + 1);
    // The token the provider rotated to still works at the next check.
    await later();
    expect((await refresh(ra.json().data.refresh_token)).statusCode).toBe(200);
    expect(idp.refreshes).toBe(before + 2);
    expect((await t.ctx.usersRepo.byId(a.user.id))?.status).toBe(UserStatus.Enabled);
  });

  it('lets the refresh through while the provider is down, and logs that it could not ask', async () => {
    const session = await signInAs('ben');
    const warn = vi.spyOn(t.ctx.logger, 'warn');
    idp.outage = 503;
    try {
      const res = await refresh(session.refresh_token);
      expect(res.statusCode, res.body).toBe(200);
      expect(warn).toHaveBeenCalledWith(
        expect.objectContaining({ provider: 'oidc:corp', userId: session.user.id }),
        'OpenID Connect provider not asked at refresh: the session goes on',
      );
      // The tokens are kept: the next refresh asks again.
      expect((await identity('ben')).refresh_token_enc).not.toBe('');
    } finally {
      idp.outage = undefined;
      warn.mockRestore();
    }
    // And a provider that cannot be reached at all (its port closed) changes nothing either.
    const settingsNow = t.ctx.options.get('OIDCProviders');
    await t.ctx.options.set(
      'OIDCProviders',
      JSON.stringify([{ ...JSON.parse(settingsNow)[0], client_secret: '********', issuer: 'http://127.0.0.1:9' }]),
    );
    try {
      const ben = await t.ctx.db.selectFrom('refresh_tokens').select('id').where('user_id', '=', session.user.id).execute();
      expect(ben.length).toBeGreaterThan(0);
      const again = await signInAsNoCheck('ben');
      expect((await refresh(again)).statusCode).toBe(200);
    } finally {
      await t.ctx.options.set('OIDCProviders', settings('disable'));
    }
    expect((await t.ctx.usersRepo.byId(session.user.id))?.status).toBe(UserStatus.Enabled);
  });

  /** A Toolport session of an account, issued directly (the provider is pointed elsewhere meanwhile). */
  const signInAsNoCheck = async (username: string) => {
    const user = await t.ctx.usersRepo.byUsername(username);
    if (!user) throw new Error(`no ${username}`);
    return (await t.ctx.auth.issue(user)).refresh_token;
  };

  it('disables a provider-only account when the provider revoked its grant, and ends every session of it', async () => {
    const first = await signInAs('cody');
    const second = await signInAs('cody');
    await idp.revokeGrants('cody');
    const res = await refresh(second.refresh_token, 'zh-CN');
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ success: false, code: 'user_disabled' });
    expect((await t.ctx.usersRepo.byId(second.user.id))?.status).toBe(UserStatus.Disabled);
    // The other session ends too, and the provider's tokens are forgotten.
    expect((await refresh(first.refresh_token)).statusCode).toBe(401);
    const stored = await identity('cody');
    expect([stored.refresh_token_enc, stored.access_token_enc]).toEqual(['', '']);
  });

  it('with sign_out, ends the sessions of a person the provider deleted, in both languages, and disables nobody', async () => {
    await t.ctx.options.set('OIDCProviders', settings('sign_out'));
    try {
      const session = await signInAs('dina');
      idp.accounts.delete('dina');
      const res = await refresh(session.refresh_token, 'zh-CN');
      expect(res.statusCode).toBe(401);
      expect(res.json()).toMatchObject({ code: 'provider_session_ended', message: 'Corp SSO 已不再认可此账号，会话已结束：请重新登录' });
      expect((await t.ctx.usersRepo.byId(session.user.id))?.status).toBe(UserStatus.Enabled);

      // Back at the provider, the person signs in again and refreshes as before.
      const back = await signInAs('dina');
      const en = await refresh(back.refresh_token);
      expect(en.statusCode, en.body).toBe(200);

      idp.accounts.delete('dina');
      await later();
      const ended = await refresh(en.json().data.refresh_token);
      expect(ended.json().message).toBe('Corp SSO no longer vouches for this account, so the session has ended: sign in again');
    } finally {
      await t.ctx.options.set('OIDCProviders', settings('disable'));
    }
  });

  it('keeps no provider token and asks nothing when deprovisioning is off, even of a person the provider deleted', async () => {
    await t.ctx.options.set('OIDCProviders', settings('off'));
    try {
      const session = await signInAs('eli');
      const stored = await identity('eli');
      expect([stored.refresh_token_enc, stored.access_token_enc]).toEqual(['', '']);
      idp.accounts.delete('eli');
      const before = idp.refreshes;
      const res = await refresh(session.refresh_token);
      expect(res.statusCode).toBe(200);
      expect(idp.refreshes).toBe(before);
    } finally {
      await t.ctx.options.set('OIDCProviders', settings('disable'));
    }
  });

  it('signs out, but never disables, an account that also has a password', async () => {
    const session = await signInAs('fay');
    await t.ctx.db.updateTable('users').set({ password_hash: 'x' }).where('id', '=', session.user.id).execute();
    await idp.revokeGrants('fay');
    const res = await refresh(session.refresh_token);
    expect(res.statusCode).toBe(401);
    expect(res.json().code).toBe('provider_session_ended');
    expect((await t.ctx.usersRepo.byId(session.user.id))?.status).toBe(UserStatus.Enabled);
  });
});
