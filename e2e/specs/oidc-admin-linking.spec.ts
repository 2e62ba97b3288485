import { type Browser, type Page, request } from '@playwright/test';
import { type LoopbackOidc, startLoopbackOidc } from '../../apps/server/test/oidc-provider';
import { axeViolations } from '../support/axe';
import { expectNoRawKeys } from '../support/console-checks';
import { ADMIN_PASSWORD } from '../support/constants';
import { expect, test } from '../support/fixtures';
import { consoleContext, rootPage } from '../support/oauth-setup';
import { type RunningServer, startServer } from '../support/server';
import { accessToken } from '../support/services-api';
import { toast } from '../support/toasts';
import { findUserRow, searchUsers, uniqueUsername } from '../support/users-page';

/**
 * Account linking by an administrator (decision 0063) in Chromium, in both languages: a provider sign-in with an
 * unverified address of an existing account is refused and held; root links it from the Users page, unlinks it
 * from the user's sign-in identities and links it again by provider and subject; then the person signs in.
 */
const text = {
  en: {
    button: 'Continue with Corp SSO',
    refused: 'ask an administrator to link the accounts (your sign-in was recorded for them on the Users page)',
    heldTitle: /sign-ins? waits? for an administrator/,
    linkTo: (name: string) => `Link to ${name}`,
    linked: 'Identity linked',
    unlinked: 'Identity unlinked',
    identities: (name: string) => `Sign-in identities of ${name}`,
    unlink: (subject: string) => `Unlink Corp SSO account ${subject}`,
    none: 'No provider account is linked to this user.',
    provider: 'Provider',
    subject: 'Subject (ID at the provider)',
    link: 'Link',
    subjectRequired: "Enter the person's ID at the provider",
    signedIn: 'Signed in',
    search: 'Search users',
  },
  'zh-CN': {
    button: '使用 Corp SSO 登录',
    refused: '或请管理员关联账号（本次登录已记录在“用户”页面，供管理员处理）',
    heldTitle: /个登录等待管理员处理/,
    linkTo: (name: string) => `关联到 ${name}`,
    linked: '已关联身份',
    unlinked: '已解除关联身份',
    identities: (name: string) => `${name} 的登录身份`,
    unlink: (subject: string) => `解除关联 Corp SSO 账号 ${subject}`,
    none: '该用户没有关联任何身份提供方账号。',
    provider: '身份提供方',
    subject: 'Subject（在身份提供方的 ID）',
    link: '关联',
    subjectRequired: '请输入此人在身份提供方的 ID',
    signedIn: '登录成功',
    search: '搜索用户',
  },
} as const;

test.describe('an administrator links provider identities', () => {
  test.describe.configure({ mode: 'serial' });
  test.setTimeout(90_000);

  let server: RunningServer;
  let oidc: LoopbackOidc;
  let adminToken: string;
  test.beforeAll(async () => {
    server = await startServer(ADMIN_PASSWORD);
    oidc = await startLoopbackOidc({ mode: 'plain', redirectUris: [`${server.url}/oauth/oidc/corp`] });
    const api = await request.newContext({ baseURL: server.url });
    adminToken = await accessToken(api);
    const providers = [
      { slug: 'corp', label: 'Corp SSO', issuer: oidc.issuer, client_id: oidc.clientId, client_secret: oidc.clientSecret },
    ];
    const res = await api.put('/api/option/', {
      headers: { Authorization: `Bearer ${adminToken}` },
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
    await page.getByRole('button', { name: text[language].button }).click();
    return page;
  }

  for (const language of ['en', 'zh-CN'] as const) {
    test(`${language}: a held sign-in is linked from the Users page, unlinked and linked again by subject, then signs in`, async ({
      browser,
    }) => {
      const say = text[language];
      const username = uniqueUsername(language === 'en' ? 'held-en' : 'held-zh');
      const email = `${username}@corp.example`;
      const api = await request.newContext({ baseURL: server.url });
      const made = await api.post('/api/user', {
        headers: { Authorization: `Bearer ${adminToken}` },
        data: { username, password: 'owner-password-1', display_name: `Owner ${language}`, email },
      });
      expect(made.status()).toBe(201);
      await api.dispose();

      // The person signs in with an address the provider has not verified: refused, and held.
      const sub = `sub-${username}`;
      oidc.accounts.set(sub, { email, email_verified: false, name: `Person ${language}` });
      oidc.signInAs(sub);
      const person = await clickCorp(browser, language);
      await expect(person.getByRole('alert')).toContainText(say.refused);
      expect(await person.evaluate(() => localStorage.getItem('token'))).toBeNull();

      // Root sees it waiting, with the account its address belongs to, and links it.
      const { page } = await rootPage(browser, server.url, { language });
      await page.goto('/users');
      const panel = page.getByTestId('held-sign-ins');
      await expect(panel.getByRole('heading', { name: say.heldTitle })).toBeVisible();
      const item = panel.getByTestId('held-sign-in').filter({ hasText: sub });
      await expect(item).toContainText(email);
      expect(await axeViolations(page, panel), 'axe on the held sign-ins').toEqual([]);
      await item.getByRole('button', { name: say.linkTo(username) }).click();
      await expect(toast(page, say.linked)).toBeVisible();
      await expect(item).toBeHidden();

      // The user's sign-in identities: the linked one, unlinked, then linked again by provider and subject.
      await searchUsers(page, username, say.search);
      await findUserRow(page, username)
        .getByRole('button', { name: say.identities(username) })
        .click();
      const dialog = page.getByRole('dialog', { name: say.identities(`Owner ${language}`) });
      const linked = dialog.getByTestId('linked-identity');
      await expect(linked).toHaveCount(1);
      await expect(linked).toContainText('Corp SSO');
      await expect(linked).toContainText(sub);
      await expectNoRawKeys(page);
      expect(await axeViolations(page, dialog), 'axe on the identities dialog').toEqual([]);
      await dialog.getByRole('button', { name: say.unlink(sub) }).click();
      await expect(toast(page, say.unlinked)).toBeVisible();
      await expect(dialog.getByText(say.none)).toBeVisible();

      await expect(dialog.getByRole('combobox', { name: say.provider })).toHaveValue('oidc:corp');
      await dialog.getByRole('button', { name: say.link, exact: true }).click();
      await expect(dialog.getByRole('alert')).toHaveText(say.subjectRequired);
      await dialog.getByRole('textbox', { name: say.subject }).fill(sub);
      await dialog.getByRole('button', { name: say.link, exact: true }).click();
      await expect(toast(page, say.linked)).toBeVisible();
      await expect(dialog.getByTestId('linked-identity')).toContainText(sub);
      await page.context().close();

      // Now the provider signs the person in, as the account root linked.
      await person.context().close();
      const again = await clickCorp(browser, language);
      await expect(toast(again, say.signedIn)).toBeVisible();
      await expect(again.getByTestId('current-user')).toHaveText(`Owner ${language}`);
      await again.context().close();
    });
  }
});
