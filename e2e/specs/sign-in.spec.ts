import { createUser } from '../support/console-users';
import { expect, test } from '../support/fixtures';
import { toast } from '../support/toasts';

const stored = () => ({
  token: localStorage.getItem('token'),
  refresh: localStorage.getItem('refresh_token'),
  user: JSON.parse(localStorage.getItem('user') ?? 'null') as { username: string; role: number } | null,
});

test.describe('sign-in page', () => {
  test('signing in with the keyboard opens the dashboard with the user in the top bar', async ({ page, request }) => {
    const user = await createUser(request, 'signin');
    await page.goto('/login');
    await expect(page.getByRole('heading', { name: 'Sign in to Toolport' })).toBeVisible();
    await expect(page.getByText('Welcome back! Please sign in to continue')).toBeVisible();
    await expect(page.getByLabel('Username')).toBeFocused();

    await page.keyboard.type(user.username);
    await page.keyboard.press('Tab');
    await expect(page.getByLabel('Password', { exact: true })).toBeFocused();
    await page.keyboard.type(user.password);
    await page.keyboard.press('Enter');

    await expect(toast(page, 'Signed in')).toBeVisible();
    await expect(page).toHaveURL(/\/$/);
    await expect(page.getByRole('heading', { name: 'Dashboard', level: 1 })).toBeVisible();
    await expect(page.getByTestId('current-user')).toHaveText(user.username);
    const session = await page.evaluate(stored);
    expect(session.token).toEqual(expect.any(String));
    expect(session.refresh).toEqual(expect.any(String));
    expect(session.user).toMatchObject({ username: user.username, role: 1 });
  });

  test('empty fields are refused without a request (输入错误)', async ({ page }) => {
    await page.addInitScript(() => localStorage.setItem('i18nextLng', 'zh-CN'));
    const logins: string[] = [];
    page.on('request', (req) => req.url().includes('/api/auth/login') && logins.push(req.url()));
    await page.goto('/login');
    await page.getByRole('button', { name: '继续' }).click();
    await expect(toast(page, '输入错误')).toBeVisible();
    await expect(toast(page, '用户名和密码不能为空。')).toBeVisible();

    await page.getByLabel('用户名').fill('root');
    await page.getByRole('button', { name: '继续' }).click();
    await expect(toast(page, '用户名和密码不能为空。')).toBeVisible();
    expect(logins).toEqual([]);
    await expect(page).toHaveURL(/\/login$/);
  });

  test('a wrong password shows 登录失败 with the server message and keeps the form', async ({ page, request }) => {
    const user = await createUser(request, 'wrongpw');
    const refused = await request.post('/api/auth/login', {
      headers: { 'Accept-Language': 'zh-CN' },
      data: { username: user.username, password: 'not-the-password' },
    });
    const serverMessage = (await refused.json()).message as string;

    await page.addInitScript(() => localStorage.setItem('i18nextLng', 'zh-CN'));
    await page.goto('/login');
    await page.getByLabel('用户名').fill(user.username);
    await page.getByLabel('密码', { exact: true }).fill('not-the-password');
    await page.getByRole('button', { name: '继续' }).click();

    await expect(toast(page, '登录失败')).toBeVisible();
    await expect(toast(page, serverMessage)).toBeVisible();
    await expect(page.getByRole('button', { name: '继续' })).toBeEnabled();
    await expect(page).toHaveURL(/\/login$/);
    expect((await page.evaluate(stored)).token).toBeNull();
  });

  test('a page opened signed out comes back after signing in', async ({ page, request }) => {
    const user = await createUser(request, 'origin');
    await page.goto('/analytics?view=today');
    await expect(page).toHaveURL(/\/login$/);
    await page.getByLabel('Username').fill(user.username);
    await page.getByLabel('Password', { exact: true }).fill(user.password);
    await page.getByRole('button', { name: 'Continue', exact: true }).click();

    await expect(page).toHaveURL(/\/analytics\?view=today$/);
    await expect(page.getByRole('heading', { name: 'Analytics', level: 1 })).toBeVisible();
  });

  test('the top bar dialog signs in and goes to the dashboard', async ({ page, request }) => {
    const user = await createUser(request, 'dialog');
    await page.goto('/oauth/github?error=access_denied');
    await page.getByRole('button', { name: 'Log in' }).click();
    const dialog = page.getByRole('dialog', { name: 'Sign in to Toolport' });
    await expect(dialog.getByLabel('Username')).toBeFocused();
    await dialog.getByLabel('Username').fill(user.username);
    await dialog.getByLabel('Password', { exact: true }).fill(user.password);
    await dialog.getByRole('button', { name: 'Continue', exact: true }).click();

    await expect(page).toHaveURL(/\/$/);
    await expect(dialog).toBeHidden();
    await expect(page.getByRole('heading', { name: 'Dashboard', level: 1 })).toBeVisible();
  });

  test('providers the server has not configured are disabled with a tooltip', async ({ page }) => {
    await page.goto('/login');
    const github = page.getByRole('button', { name: 'Continue with GitHub' });
    await expect(github).toBeDisabled();
    await github.hover();
    await expect(page.getByRole('tooltip')).toHaveText('GitHub sign-in is not configured');
  });

  test('logout revokes the session and clears the browser storage', async ({ page, request }) => {
    const user = await createUser(request, 'logout');
    await page.goto('/login');
    await page.getByLabel('Username').fill(user.username);
    await page.getByLabel('Password', { exact: true }).fill(user.password);
    await page.getByRole('button', { name: 'Continue', exact: true }).click();
    await expect(page.getByTestId('current-user')).toBeVisible();
    const { refresh } = await page.evaluate(stored);

    await page.getByRole('button', { name: 'Log out' }).click();
    await expect(page).toHaveURL(/\/login$/);
    await expect(page.getByRole('button', { name: 'Log in' })).toBeVisible();
    expect(await page.evaluate(stored)).toEqual({ token: null, refresh: null, user: null });
    const reuse = await request.post('/api/auth/refresh', { data: { refresh_token: refresh } });
    expect(reuse.status()).toBe(401);
  });
});
