import { createUser } from '../support/console-users';
import { expect, signIn, test } from '../support/fixtures';
import { toast } from '../support/toasts';

test.describe('global handling of failed calls', () => {
  test('a session ended on the server (password changed elsewhere) leads to sign-in, and back after', async ({ page, request }) => {
    const user = await createUser(request, 'expired');
    await signIn(page, user.username, user.password);
    await page.goto('/dashboard');
    await expect(page.getByRole('heading', { name: 'Dashboard', level: 1 })).toBeVisible();

    // Every refresh from here on is counted, whatever call of the console's meets the ended session first.
    const refreshes: number[] = [];
    page.on('response', (res) => res.url().endsWith('/api/auth/refresh') && refreshes.push(res.status()));
    // Another device changes the password: the server ends every session of the user, refresh tokens included.
    const login = await request.post('/api/auth/login', { data: user });
    const other = (await login.json()).data.access_token as string;
    const newPassword = `${user.password}-new`;
    const changed = await request.post('/api/user/change-password', {
      headers: { Authorization: `Bearer ${other}` },
      data: { current_password: user.password, new_password: newPassword },
    });
    expect(changed.status()).toBe(200);

    // The next call meets it: the click's, or (on a busy machine, where hashing the two passwords above takes
    // seconds) one the console made of its own accord first, which already leads to sign-in and takes the link away.
    const clicked = await page
      .getByRole('navigation', { name: 'Sections' })
      .getByRole('link', { name: 'Analytics' })
      .click({ timeout: 10_000 })
      .then(
        () => true,
        () => false,
      );

    await expect(page).toHaveURL(/\/login$/);
    expect(refreshes).toEqual([401]);
    const storage = await page.evaluate(() => [
      localStorage.getItem('token'),
      localStorage.getItem('refresh_token'),
      localStorage.getItem('user'),
    ]);
    expect(storage).toEqual([null, null, null]);
    // The sign-in page says why the user is there.
    await expect(page.getByRole('status').filter({ hasText: 'Your session ended.' })).toBeVisible();

    await page.getByLabel('Username').fill(user.username);
    await page.getByLabel('Password', { exact: true }).fill(newPassword);
    await page.getByRole('button', { name: 'Continue', exact: true }).click();
    // Back where the user was going: the page clicked, else the one they were on.
    await expect(page).toHaveURL(clicked ? /\/(analytics|dashboard)$/ : /\/dashboard$/);
  });

  test('an expired access token is renewed with the refresh token without the user noticing', async ({ page, request }) => {
    const user = await createUser(request, 'renew');
    await signIn(page, user.username, user.password);
    // A token the server cannot verify stands in for one that expired.
    await page.addInitScript(() => {
      if (!sessionStorage.getItem('e2e-token-spoiled')) {
        sessionStorage.setItem('e2e-token-spoiled', '1');
        localStorage.setItem('token', 'expired.access.token');
      }
    });
    await page.goto('/profile');
    await expect(page.getByTestId('login-method')).toHaveText('Signed in with password');
    await expect(page).toHaveURL(/\/profile$/);
    const token = await page.evaluate(() => localStorage.getItem('token'));
    expect(token).not.toBe('expired.access.token');
  });

  for (const [language, title, description] of [
    ['zh-CN', '无权限', '权限不足：你没有执行此操作的权限'],
    ['en', 'Permission denied', 'Permission denied: you do not have permission to perform this action'],
  ] as const) {
    test(`an admin-only call by a user shows the permission-denied toast (${language})`, async ({ page, request }) => {
      const user = await createUser(request, 'forbid');
      await signIn(page, user.username, user.password);
      await page.addInitScript((lng) => localStorage.setItem('i18nextLng', lng), language);
      // The dashboard's own call is sent to the admin-only preferences instead; the real server refuses it.
      await page.route('**/api/analytics/system/overview', (route) =>
        route.continue({ url: new URL('/api/option/', route.request().url()).href }),
      );
      const answer = page.waitForResponse((res) => new URL(res.url()).pathname === '/api/option/');
      await page.goto('/');

      expect((await answer).status()).toBe(403);
      await expect(toast(page, title)).toBeVisible();
      await expect(toast(page, description)).toBeVisible();
      await expect(page).toHaveURL(/\/$/);
      expect(await page.evaluate(() => localStorage.getItem('token'))).not.toBeNull();
    });
  }
});
