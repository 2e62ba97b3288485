import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EntraFake, startEntraFake } from '../../../test/entra-fake.js';
import { bearer, createTestApp, engines, type TestApp } from '../../../test/harness.js';
import { makeUser } from '../../../test/kits/users.js';
import { oidcFlow } from '../../../test/oidc-provider.js';

const SERVER = 'http://toolport.test';
const CONTOSO = '72f988bf-86f1-41af-91ab-2d7cd011db47';
const FABRIKAM = '3c5f1a2b-9d8e-4f70-a1b2-c3d4e5f60718';
const STRANGER = 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee';

/**
 * Microsoft Entra ID's multi-tenant issuer (decision 0063): the `common` document names the issuer as a
 * `{tenantid}` template; each ID token's `iss` must be that template filled with the token's own `tid`, and
 * `allowed_tenants` says whose people may come in. Against a loopback fake that speaks Entra's wire format.
 */
describe.each(engines)('Microsoft Entra ID common endpoint on %s', (engine) => {
  let entra: EntraFake;
  let orgs: EntraFake;
  let t: TestApp;
  let root: string;
  let flow: ReturnType<typeof oidcFlow>;
  const provider = (allowed: string[]) => ({
    slug: 'entra',
    label: 'Microsoft',
    issuer: `${entra.base}/common/v2.0`,
    client_id: entra.clientId,
    client_secret: entra.clientSecret,
    allow_signup: true,
    allowed_tenants: allowed,
  });

  beforeAll(async () => {
    entra = await startEntraFake();
    orgs = await startEntraFake({ tenantPath: 'organizations' });
    t = await createTestApp(engine);
    root = await t.rootToken();
    await t.ctx.options.set('ServerAddress', SERVER);
    await t.ctx.options.set('OIDCProviders', JSON.stringify([provider([CONTOSO, FABRIKAM.toUpperCase()])]));
    flow = oidcFlow(t.app, SERVER);
  });
  afterAll(async () => {
    await t?.close();
    await entra?.close();
    await orgs?.close();
  });

  it('signs in a person of an allowed tenant, checking iss against the template filled with their tid', async () => {
    entra.signInAs({ tid: CONTOSO, sub: 'contoso-ada', name: 'Ada Contoso', email: 'ada@contoso.example' });
    const res = await flow.signIn('entra');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data?.user).toMatchObject({ display_name: 'Ada Contoso', username: 'adacontoso.example' });
    // Tenants compare without case; each person's own tenant is their issuer.
    entra.signInAs({ tid: FABRIKAM, sub: 'fabrikam-bo', name: 'Bo Fabrikam', email: 'bo@fabrikam.example' });
    expect((await flow.signIn('entra')).status).toBe(200);
  });

  it('refuses a tenant that is not allowed, in both languages, and creates nobody', async () => {
    entra.signInAs({ tid: STRANGER, sub: 'stranger', name: 'Someone Else', email: 'someone@elsewhere.example' });
    const en = await flow.signIn('entra');
    expect(en.status).toBe(403);
    expect(en.body).toMatchObject({ success: false, code: 'oidc_tenant_not_allowed' });
    expect(en.body.message).toBe(
      `Sign-in refused: your Microsoft Entra tenant (${STRANGER}) may not sign in to Toolport through Microsoft: ask an administrator`,
    );
    const zh = await flow.signIn('entra', { lang: 'zh-CN' });
    expect(zh.body.message).toBe(`登录被拒绝：你的 Microsoft Entra 租户（${STRANGER}）不允许通过 Microsoft 登录 Toolport：请联系管理员`);
    expect(await t.ctx.usersRepo.byUsername('someone')).toBeUndefined();
  });

  it('refuses a token whose iss is not the template filled with its own tid, and one without a tid', async () => {
    entra.signInAs({ tid: CONTOSO, sub: 'contoso-cy', name: 'Cy', email: 'cy@contoso.example' });
    try {
      // Issued by a stranger's tenant, claiming an allowed tid: the issuer does not match.
      entra.rewrite = (claims) => ({ ...claims, iss: `${entra.base}/${STRANGER}/v2.0` });
      const forged = await flow.signIn('entra');
      expect(forged.status).toBe(400);
      expect(forged.body).toMatchObject({ code: 'oidc_id_token_invalid' });
      expect(forged.body.message).toContain('claim iss does not match');

      entra.rewrite = ({ tid: _tid, ...claims }) => claims;
      const untenanted = await flow.signIn('entra');
      expect(untenanted.status).toBe(400);
      expect(untenanted.body.message).toContain('no tenant (tid) for the issuer template');

      // The literal template is no issuer either.
      entra.rewrite = (claims) => ({ ...claims, iss: `${entra.base}/{tenantid}/v2.0`, tid: '{tenantid}' });
      expect((await flow.signIn('entra')).status).toBe(400);
    } finally {
      entra.rewrite = undefined;
    }
    expect(await t.ctx.usersRepo.byUsername('cy')).toBeUndefined();
  });

  it('lets any tenant in when no tenant is listed, and never links by the email Entra does not verify', async () => {
    await t.ctx.options.set('OIDCProviders', JSON.stringify([provider([])]));
    try {
      entra.signInAs({ tid: STRANGER, sub: 'stranger-2', name: 'Dee', email: 'dee@elsewhere.example' });
      expect((await flow.signIn('entra')).status).toBe(200);
      // Entra sends no email_verified: an address an account has is held for an admin, not linked.
      const owner = await makeUser(t, root, { email: 'eve@contoso.example' });
      entra.signInAs({ tid: CONTOSO, sub: 'contoso-eve', name: 'Eve', email: 'eve@contoso.example' });
      const held = await flow.signIn('entra');
      expect(held.status).toBe(403);
      expect(held.body.code).toBe('oidc_email_unverified');
      const list = await t.app.inject({ method: 'GET', url: '/api/user/held_identities', headers: bearer(root) });
      expect(list.json().data).toEqual(
        expect.arrayContaining([expect.objectContaining({ provider: 'oidc:entra', subject: 'contoso-eve', user_id: owner.id })]),
      );
    } finally {
      await t.ctx.options.set('OIDCProviders', JSON.stringify([provider([CONTOSO, FABRIKAM])]));
    }
  });

  it('reads the organizations endpoint the same way, and refuses a configured issuer the template does not fit', async () => {
    await t.ctx.options.set(
      'OIDCProviders',
      JSON.stringify([
        {
          slug: 'orgs',
          label: 'Work account',
          issuer: `${orgs.base}/organizations/v2.0`,
          client_id: orgs.clientId,
          client_secret: orgs.clientSecret,
          allow_signup: true,
        },
        {
          // The same document, fetched as localhost: its issuer template (on 127.0.0.1) does not fit the configured issuer.
          slug: 'misfit',
          label: 'Misfit',
          issuer: `${orgs.base.replace('127.0.0.1', 'localhost')}/organizations/v2.0`,
          client_id: orgs.clientId,
          client_secret: orgs.clientSecret,
        },
      ]),
    );
    try {
      orgs.signInAs({ tid: FABRIKAM, sub: 'fabrikam-fin', name: 'Fin', email: 'fin@fabrikam.example' });
      const res = await flow.signIn('orgs');
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const misfit = await t.app.inject({ method: 'GET', url: '/api/oauth/oidc/misfit/authorize' });
      expect(misfit.statusCode).toBe(502);
      expect(misfit.json().code).toBe('oidc_discovery_failed');
      expect(misfit.json().message).toContain('the document names the issuer http://127.0.0.1:');
    } finally {
      await t.ctx.options.set('OIDCProviders', JSON.stringify([provider([CONTOSO, FABRIKAM])]));
    }
  });
});
