import { type Browser, type Page, request } from '@playwright/test';
import { type LoopbackOidc, startLoopbackOidc } from '../../apps/server/test/oidc-provider';
import { ADMIN_PASSWORD } from '../support/constants';
import { expect, test } from '../support/fixtures';
import { consoleContext } from '../support/oauth-setup';
import { type RunningServer, startServer } from '../support/server';
import { accessToken } from '../support/services-api';
import { toast } from '../support/toasts';

/**
 * Sign-in through a real OpenID Connect provider (oidc-provider on loopback, apps/server/test/oidc-provider.ts)
 * in Chromium: the button the sign-in page shows for it, the round trip, and a refusal said on the return page.
 */
test.describe('sign-in with an OpenID Connect provider', () => {
  test.describe.configure({ mode: 'serial' });
  test.setTimeout(90_000);

  let server: RunningServer;
  let oidc: LoopbackOidc;
  test.beforeAll(async () => {
    server = await startServer(ADMIN_PASSWORD);
    oidc = await startLoopbackOidc({ mode: 'plain', redirectUris: [`${server.url}/oauth/oidc/corp`] });
    const api = await request.newContext({ baseURL: server.url });
    const providers = [
      {
        slug: 'corp',
        label: 'Corp SSO',
        issuer: oidc.issuer,
        client_id: oidc.clientId,
        client_secret: oidc.clientSecret,
        allow_signup: true,
      },
    ];
    const res = await api.put('/api/option/', {
      headers: { Authorization: `Bearer ${await accessToken(api)}` },
      data: { key: 'OIDCProviders', value: JSON.stringify(providers) },
    });
    expect(res.status()).toBe(200);
    await api.dispose();
  });
  test.afterAll(async () => {
    await server?.stop();
    await oidc?.close();
  });

  async function clickCorp(browser: Browser, language: 'en' | 'zh-CN'): Promise<Page> {
    const page = await (await consoleContext(browser, server.url, { language })).newPage();
    await page.goto('/login');
    await page.getByRole('button', { name: language === 'en' ? 'Continue with Corp SSO' : '使用 Corp SSO 登录' }).click();
    return page;
  }

  for (const [language, signedIn, name] of [
    ['en', 'Signed in', 'Ada Lovelace'],
    ['zh-CN', '登录成功', '李雷'],
  ] as const) {
    test(`${language}: the Corp SSO button signs a new person in and opens the dashboard`, async ({ browser }) => {
      const sub = `sub-${language}`;
      oidc.accounts.set(sub, { email: `${sub}@corp.example`, email_verified: true, name, preferred_username: sub });
      oidc.signInAs(sub);
      const page = await clickCorp(browser, language);
      await expect(toast(page, signedIn)).toBeVisible();
      await expect(page).toHaveURL(`${server.url}/`);
      await expect(page.getByTestId('current-user')).toHaveText(name);
      await page.context().close();
    });
  }

  test('zh-CN: an unverified address of an existing account is refused on the return page, without a session', async ({ browser }) => {
    // The account of the first test has this address; this one comes from elsewhere and is not verified.
    oidc.accounts.set('intruder', { email: 'sub-en@corp.example', email_verified: false, name: 'Intruder' });
    oidc.signInAs('intruder');
    const page = await clickCorp(browser, 'zh-CN');
    await expect(page.getByRole('alert')).toContainText('Corp SSO 尚未验证邮箱 sub-en@corp.example，而该邮箱属于已有账号');
    await expect(page.getByRole('link', { name: '返回登录' })).toBeVisible();
    expect(await page.evaluate(() => localStorage.getItem('token'))).toBeNull();
    await page.context().close();
  });
});
