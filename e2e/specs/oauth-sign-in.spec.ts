import { type Browser, type Page, request } from '@playwright/test';
import { defaultGitHubUser, type FakeProvider } from '../../apps/server/test/fake-oauth';
import { expect, test } from '../support/fixtures';
import { configureProvider, consoleContext, type OAuthRig, rootPage, startOAuthRig } from '../support/oauth-setup';
import { accessToken } from '../support/services-api';
import { toast } from '../support/toasts';

const buttons: Record<FakeProvider, string> = { github: 'Continue with GitHub', google: 'Continue with Google' };

/** A visitor in a browser of their own clicks the provider's button on the sign-in page. */
async function clickProvider(browser: Browser, rig: OAuthRig, provider: FakeProvider, language?: 'en' | 'zh-CN'): Promise<Page> {
  const page = await (await consoleContext(browser, rig.server.url, { language })).newPage();
  await page.goto('/login');
  const name = language === 'zh-CN' ? (provider === 'github' ? '使用 GitHub 登录' : '使用 Google 登录') : buttons[provider];
  const button = page.getByRole('button', { name });
  await expect(button).not.toHaveAttribute('aria-disabled', 'true');
  await button.click();
  return page;
}

/** Registration is not on the Preferences screen (docs/console.md does not list it): set through the API. */
async function setRegistration(rig: OAuthRig, open: boolean): Promise<void> {
  const api = await request.newContext({ baseURL: rig.server.url });
  const res = await api.put('/api/option/', {
    headers: { Authorization: `Bearer ${await accessToken(api)}` },
    data: { key: 'RegistrationEnabled', value: String(open) },
  });
  expect(res.status()).toBe(200);
  await api.dispose();
}

test.describe('sign-in with GitHub and Google through the fake providers', () => {
  test.describe.configure({ mode: 'serial' });
  test.setTimeout(90_000);

  let rig: OAuthRig;
  test.beforeAll(async () => {
    rig = await startOAuthRig();
  });
  test.afterAll(async () => rig?.stop());
  test.beforeEach(() => rig.fake.reset());

  test('root sets GitHub up in Preferences; a visitor clicks GitHub and lands on the dashboard signed in', async ({ browser }) => {
    const { page: admin } = await rootPage(browser, rig.server.url);
    await configureProvider(admin, 'github', rig.fake.clients.github, rig.server.url);
    await admin.context().close();

    const page = await clickProvider(browser, rig, 'github');
    await expect(toast(page, 'Signed in')).toBeVisible();
    await expect(page).toHaveURL(`${rig.server.url}/`);
    await expect(page.getByRole('heading', { name: 'Dashboard', level: 1 })).toBeVisible();
    await expect(page.getByTestId('current-user')).toHaveText('The Octocat');
    expect(await page.evaluate(() => JSON.parse(localStorage.getItem('user') ?? 'null'))).toMatchObject({
      username: 'octocat',
      role: 1,
      login_method: 'github',
    });

    // The provider saw the console's return address and a PKCE challenge; the code went back with the verifier.
    const authorize = rig.fake.requests.find((r) => r.provider === 'github' && r.path === '/login/oauth/authorize');
    expect(authorize?.query).toMatchObject({ redirect_uri: `${rig.server.url}/oauth/github`, code_challenge_method: 'S256' });
    const exchange = rig.fake.requests.find((r) => r.provider === 'github' && r.path === '/login/oauth/access_token');
    expect(exchange?.form.code_verifier).toEqual(expect.any(String));

    await page.goto('/profile');
    await expect(page.getByTestId('login-method')).toHaveText('Signed in with GitHub');
    await page.context().close();
  });

  test('the same with Google', async ({ browser }) => {
    const { page: admin } = await rootPage(browser, rig.server.url);
    await configureProvider(admin, 'google', rig.fake.clients.google, rig.server.url);
    await admin.context().close();

    const page = await clickProvider(browser, rig, 'google');
    await expect(toast(page, 'Signed in')).toBeVisible();
    await expect(page.getByRole('heading', { name: 'Dashboard', level: 1 })).toBeVisible();
    await expect(page.getByTestId('current-user')).toHaveText('Ada Lovelace');
    expect(await page.evaluate(() => JSON.parse(localStorage.getItem('user') ?? 'null'))).toMatchObject({
      role: 1,
      login_method: 'google',
      email: 'ada.lovelace@example.com',
    });
    const authorize = rig.fake.requests.find((r) => r.provider === 'google' && r.path === '/o/oauth2/v2/auth');
    expect(authorize?.query).toMatchObject({ redirect_uri: `${rig.server.url}/oauth/google`, response_type: 'code' });
    await page.context().close();
  });

  test('a return opened in another browser is refused: the state cookie of the browser that started counts', async ({ browser }) => {
    // Browser A starts the sign-in and goes to the provider, which sends it back with code and state…
    const starter = await consoleContext(browser, rig.server.url);
    const started = await starter.request.get('/api/oauth/github/authorize', { maxRedirects: 0, params: { redirect: '1' } });
    expect(started.status()).toBe(302);
    const approved = await starter.request.get(started.headers().location ?? '', { maxRedirects: 0 });
    const back = new URL(approved.headers().location ?? '');
    expect(back.searchParams.get('code')).toBeTruthy();
    await starter.close();

    // …but the return address is opened in browser B, which has no cookie from the start.
    const other = await (await consoleContext(browser, rig.server.url)).newPage();
    await other.goto(`${back.pathname}${back.search}`);
    await expect(other.getByRole('alert')).toContainText('This GitHub sign-in was started in another browser or at another address');
    expect(await other.evaluate(() => localStorage.getItem('token'))).toBeNull();
    await other.context().close();
  });

  test('with registration closed a new GitHub user is refused on the return screen, in English and Chinese', async ({ browser }) => {
    await setRegistration(rig, false);
    try {
      const newcomer = { ...defaultGitHubUser(), id: 4_242_001, login: 'newcomer', name: 'New Comer' };

      rig.fake.setGitHubUser(newcomer);
      const en = await clickProvider(browser, rig, 'github');
      await expect(en).toHaveURL(/\/oauth\/github\?/);
      const alert = en.getByRole('alert');
      await expect(alert).toContainText('Sign-in failed');
      await expect(alert).toContainText(
        'Registration is closed: no account is linked to this GitHub account. Ask an administrator for an account, then link GitHub from your profile',
      );
      expect(await en.evaluate(() => localStorage.getItem('token'))).toBeNull();
      await en.getByRole('link', { name: 'Back to sign in' }).click();
      await expect(en).toHaveURL(/\/login$/);
      await en.context().close();

      rig.fake.setGitHubUser(newcomer);
      const zh = await clickProvider(browser, rig, 'github', 'zh-CN');
      const zhAlert = zh.getByRole('alert');
      await expect(zhAlert).toContainText('登录失败');
      await expect(zhAlert).toContainText('注册已关闭：没有账户关联此 GitHub 账号。请联系管理员创建账户，然后在个人资料中绑定 GitHub');
      await expect(zh.getByRole('link', { name: '返回登录' })).toBeVisible();
      await zh.context().close();
    } finally {
      await setRegistration(rig, true);
    }
  });

  test('declining at the provider shows 授权失败 with the way back', async ({ browser }) => {
    rig.fake.denyNext('github');
    const page = await clickProvider(browser, rig, 'github', 'zh-CN');
    await expect(page.getByRole('alert')).toContainText('OAuth GitHub 授权失败');
    await page.getByRole('link', { name: '返回登录' }).click();
    await expect(page).toHaveURL(/\/login$/);
    await page.context().close();
  });
});
