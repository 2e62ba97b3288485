import { type APIRequestContext, type Browser, type Locator, type Page, request } from '@playwright/test';
import { defaultGitHubUser, defaultGoogleUser } from '../../apps/server/test/fake-oauth';
import { createUser } from '../support/console-users';
import { expect, test } from '../support/fixtures';
import { consoleContext, formSignIn, type OAuthRig, setUpProviders, startOAuthRig } from '../support/oauth-setup';
import { toast } from '../support/toasts';
import { expectChineseOnly } from '../support/zh-text-check';

const githubAs = (id: number, login: string) => ({ ...defaultGitHubUser(), id, login, name: '' });
const googleAs = (sub: string, email: string) => ({ ...defaultGoogleUser(), sub, email });

/** The Sign-in methods card of the profile page. */
const methodsCard = (page: Page, language: 'en' | 'zh-CN' = 'en') =>
  page.getByRole('region', { name: language === 'en' ? 'Sign-in methods' : '登录方式' });
const methodRow = (card: Locator, name: string) => card.getByRole('listitem', { name });

/** The caller's profile as the server has it, with the session this page holds. */
async function selfOf(page: Page): Promise<{ github_id: string; google_id: string; login_method: string; username: string }> {
  return page.evaluate(async () => {
    const res = await fetch('/api/user/self', { headers: { Authorization: `Bearer ${localStorage.getItem('token')}` } });
    return (await res.json()).data;
  });
}

/** A visitor in a browser of their own signs in with the GitHub button of the sign-in page. */
async function githubSignIn(browser: Browser, rig: OAuthRig): Promise<Page> {
  const page = await (await consoleContext(browser, rig.server.url)).newPage();
  await page.goto('/login');
  await page.getByRole('button', { name: 'Continue with GitHub' }).click();
  await expect(toast(page, 'Signed in')).toBeVisible();
  await expect(page.getByRole('heading', { name: 'Dashboard', level: 1 })).toBeVisible();
  return page;
}

test.describe('binding GitHub and Google from the profile, through the fake providers', () => {
  test.describe.configure({ mode: 'serial' });
  test.setTimeout(90_000);

  let rig: OAuthRig;
  let api: APIRequestContext;
  test.beforeAll(async ({ browser }) => {
    test.setTimeout(90_000);
    rig = await startOAuthRig();
    api = await request.newContext({ baseURL: rig.server.url });
    await setUpProviders(browser, rig, ['github', 'google']);
  });
  test.afterAll(async () => {
    await api?.dispose();
    await rig?.stop();
  });
  test.beforeEach(() => rig.fake.reset());

  test('a password user binds GitHub, signs in with it as the same account, and unbinds it', async ({ browser }) => {
    const user = await createUser(api, 'binder');
    const page = await formSignIn(browser, rig, user.username, user.password);
    await page.goto('/profile');
    const card = methodsCard(page);
    await expect(methodRow(card, 'Password')).toContainText('Set');
    const github = methodRow(card, 'GitHub');
    await expect(github).toContainText('Not bound');
    await expect(methodRow(card, 'Google')).toContainText('Not bound');

    rig.fake.setGitHubUser(githubAs(7_100_001, 'bind-octo'));
    await github.getByRole('button', { name: 'Bind GitHub' }).click();
    await expect(toast(page, 'GitHub account bound')).toBeVisible();
    await expect(page).toHaveURL(`${rig.server.url}/profile`);
    await expect(github).toContainText('Account 7100001');
    await expect(github.getByRole('button', { name: 'Unbind GitHub' })).toBeEnabled();
    // Linking went through the provider with the console's return address, and the session stayed the user's.
    const authorize = rig.fake.requests.find((r) => r.provider === 'github' && r.path === '/login/oauth/authorize');
    expect(authorize?.query).toMatchObject({ redirect_uri: `${rig.server.url}/oauth/github`, code_challenge_method: 'S256' });
    expect(await selfOf(page)).toMatchObject({ username: user.username, github_id: '7100001', login_method: 'password' });

    await page.getByRole('button', { name: 'Log out' }).click();
    await expect(page).toHaveURL(/\/login$/);
    await page.getByRole('button', { name: 'Continue with GitHub' }).click();
    await expect(toast(page, 'Signed in')).toBeVisible();
    // Signed in as the same account (it lands on the page it was sent away from, or the dashboard).
    await expect(page).not.toHaveURL(/\/(login|oauth\/github)/);
    await expect(page.getByTestId('current-user')).toHaveText(user.username);
    expect(await page.evaluate(() => JSON.parse(localStorage.getItem('user') ?? 'null'))).toMatchObject({
      username: user.username,
      github_id: '7100001',
    });

    await page.goto('/profile');
    await github.getByRole('button', { name: 'Unbind GitHub' }).click();
    const confirm = page.getByRole('alertdialog', { name: 'Unbind GitHub?' });
    await expect(confirm).toContainText('You will no longer be able to sign in with the GitHub account 7100001.');
    await confirm.getByRole('button', { name: 'Unbind' }).click();
    await expect(toast(page, 'GitHub account unbound')).toBeVisible();
    await expect(github).toContainText('Not bound');
    await expect(github.getByRole('button', { name: 'Bind GitHub' })).toBeEnabled();
    expect((await selfOf(page)).github_id).toBe('');
    await page.context().close();
  });

  test('the last way to sign in of a user who signed up with GitHub cannot be unbound', async ({ browser }) => {
    rig.fake.setGitHubUser(githubAs(7_100_002, 'only-github'));
    const page = await githubSignIn(browser, rig);
    await page.goto('/profile');
    const card = methodsCard(page);
    await expect(card.getByRole('listitem', { name: 'Password' })).toHaveCount(0);
    const unbindGitHub = methodRow(card, 'GitHub').getByRole('button', { name: 'Unbind GitHub' });
    await expect(unbindGitHub).toBeDisabled();
    await expect(unbindGitHub).toHaveAccessibleDescription(
      'GitHub is your only way to sign in. Bind another provider before unbinding it.',
    );
    await unbindGitHub.click({ force: true });
    await expect(page.getByRole('alertdialog')).toHaveCount(0);

    // With Google bound as well, either may go…
    rig.fake.setGoogleUser(googleAs('g-7100002', 'only.github@example.com'));
    await methodRow(card, 'Google').getByRole('button', { name: 'Bind Google' }).click();
    await expect(toast(page, 'Google account bound')).toBeVisible();
    await expect(methodRow(card, 'Google')).toContainText('Account g-7100002');
    await expect(unbindGitHub).toBeEnabled();
    const unbindGoogle = methodRow(card, 'Google').getByRole('button', { name: 'Unbind Google' });
    await expect(unbindGoogle).toBeEnabled();

    // …but not both: another tab unbinds GitHub while this one still shows it, and the server refuses the second.
    const other = await page.context().newPage();
    await other.goto('/profile');
    await methodRow(methodsCard(other), 'GitHub').getByRole('button', { name: 'Unbind GitHub' }).click();
    await other.getByRole('alertdialog').getByRole('button', { name: 'Unbind' }).click();
    await expect(toast(other, 'GitHub account unbound')).toBeVisible();
    await other.close();

    await unbindGoogle.click();
    await page.getByRole('alertdialog', { name: 'Unbind Google?' }).getByRole('button', { name: 'Unbind' }).click();
    await expect(toast(page, 'Could not unbind Google')).toBeVisible();
    await expect(toast(page, 'Could not unbind Google')).toContainText('Google is the only way to sign in');
    // The card takes the server's view: GitHub gone, Google now the last method.
    await expect(methodRow(card, 'GitHub')).toContainText('Not bound');
    await expect(unbindGoogle).toBeDisabled();
    expect(await selfOf(page)).toMatchObject({ github_id: '', google_id: 'g-7100002', login_method: 'google' });
    await page.context().close();
  });

  test('in Chinese: the card, a bind, and a provider account that is already bound to someone else', async ({ browser }) => {
    const owner = await createUser(api, 'owner');
    const other = await createUser(api, 'other');
    rig.fake.setGitHubUser(githubAs(7_100_003, 'zh-octo'));

    const page = await formSignIn(browser, rig, owner.username, owner.password, { language: 'zh-CN' });
    await page.goto('/profile');
    const card = methodsCard(page, 'zh-CN');
    await expect(methodRow(card, '密码')).toContainText('已设置');
    const github = methodRow(card, 'GitHub');
    await expect(github).toContainText('未绑定');
    await expect(github).toContainText('绑定你的 GitHub 账号后即可用它登录。');
    await github.getByRole('button', { name: '绑定 GitHub' }).click();
    await expect(toast(page, '已绑定 GitHub 账号')).toBeVisible();
    await expect(page).toHaveURL(/\/profile$/);
    await expect(github).toContainText('已绑定');
    await expect(github).toContainText('账号 7100003');
    await expect(card).toContainText('你可以用来登录此账户的方式，至少需要保留一种。');
    await expectChineseOnly(page, ['common', 'auth', 'profile'], ['Toolport', 'GitHub', 'Google', 'API', 'MCP', 'Authorization', 'Bearer']);

    await github.getByRole('button', { name: '解除绑定 GitHub' }).click();
    const confirm = page.getByRole('alertdialog', { name: '要解除绑定 GitHub 吗？' });
    await expect(confirm).toContainText('解除后将无法再使用 GitHub 账号 7100003 登录，之后可以重新绑定。');
    await confirm.getByRole('button', { name: '取消' }).click();
    await expect(github).toContainText('账号 7100003');
    await page.context().close();

    // The same GitHub account, bound by another user: refused on the return screen, with the way back.
    const second = await formSignIn(browser, rig, other.username, other.password, { language: 'zh-CN' });
    await second.goto('/profile');
    await methodRow(methodsCard(second, 'zh-CN'), 'GitHub').getByRole('button', { name: '绑定 GitHub' }).click();
    await expect(second).toHaveURL(/\/oauth\/github\?/);
    const alert = second.getByRole('alert');
    await expect(alert).toContainText('绑定失败');
    await expect(alert).toContainText('该 GitHub 账号已绑定到其他用户');
    await expectChineseOnly(second, ['common', 'auth'], ['Toolport', 'GitHub']);
    await second.getByRole('link', { name: '返回个人资料' }).click();
    await expect(second).toHaveURL(/\/profile$/);
    await expect(methodRow(methodsCard(second, 'zh-CN'), 'GitHub')).toContainText('未绑定');
    expect((await selfOf(second)).github_id).toBe('');
    await second.context().close();
  });
});
