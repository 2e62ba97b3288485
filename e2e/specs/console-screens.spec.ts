import type { Page } from '@playwright/test';
import { collectConsoleErrors, expectNoRawKeys, measureScripts } from '../support/console-checks';
import { createUser } from '../support/console-users';
import { expect, signIn, test } from '../support/fixtures';
import { toast } from '../support/toasts';
import { expectChineseOnly } from '../support/zh-text-check';

const NAMESPACES = ['common', 'auth', 'dashboard', 'analytics', 'profile'];
/** Names that stay as they are in Chinese text. */
const ALLOWED = ['Toolport', 'GitHub', 'Google', 'OAuth', 'API', 'MCP', 'JSON', 'URL', 'Authorization', 'Bearer'];

async function expectTranslated(page: Page): Promise<void> {
  await expectChineseOnly(page, NAMESPACES, ALLOWED);
  await expectNoRawKeys(page);
}

test.describe('dashboard, analytics and profile against the real server', () => {
  test('the dashboard shows the live overview, uptime, quick actions and sample activity', async ({ page, request, signedIn }) => {
    const res = await request.get('/api/analytics/system/overview', { headers: { Authorization: `Bearer ${signedIn.token}` } });
    const overview = (await res.json()).data;
    await page.goto('/');

    const card = (label: string) =>
      page.locator('div.rounded-lg', { has: page.getByText(label, { exact: true }) }).getByTestId('stat-value');
    await expect(card('Active services')).toHaveText(String(overview.enabled_services));
    await expect(card('Average response time')).toHaveText(/^\d+ ms$/);
    await expect(card('Remaining credits')).toHaveText('0');
    await expect(page.getByTestId('uptime')).toHaveText(/\d+ minutes?$/);
    await expect(page.getByRole('link', { name: 'Install service' })).toHaveAttribute('href', '/market');
    await expect(page.getByRole('table')).toContainText('read_file');
  });

  test('analytics lists the enabled services and sorts by requests', async ({ page, signedIn }) => {
    expect(signedIn.user.role).toBe(100);
    await page.goto('/analytics');
    const header = page.getByRole('columnheader', { name: /Today's requests/ });
    await expect(header).toHaveAttribute('aria-sort', 'descending');
    await expect(page.getByRole('columnheader', { name: 'Average latency (ms)' })).toBeVisible();
    await header.getByRole('button').click();
    await expect(header).toHaveAttribute('aria-sort', 'ascending');
  });

  test('profile: the API key is masked, shown and refreshed; the password changes through the form', async ({ page, request }) => {
    const user = await createUser(request, 'profile');
    await signIn(page, user.username, user.password);
    await page.goto('/profile');
    await expect(page.getByTestId('login-method')).toHaveText('Signed in with password');

    const key = page.getByTestId('api-key');
    await expect(key).toHaveText(/^.{8}•{8}.{4}$/);
    await page.getByRole('button', { name: 'Show API key' }).click();
    const shown = (await key.textContent()) ?? '';
    expect(shown).not.toContain('•');

    await page.getByRole('button', { name: 'Refresh key' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Refresh key' }).click();
    await expect(toast(page, 'API key refreshed')).toBeVisible();
    await expect(key).not.toHaveText(shown);
    await expect(page.getByRole('button', { name: 'Refresh key' })).toBeFocused();

    const submit = page.getByRole('button', { name: 'Change password' });
    await expect(submit).toBeDisabled();
    await page.getByLabel('Current password').fill(user.password);
    await page.getByLabel('New password', { exact: true }).fill('brand-new-password');
    await page.getByLabel('Confirm new password').fill('brand-new-passwort');
    await submit.click();
    await expect(page.getByRole('alert')).toHaveText('The new passwords do not match.');

    await page.getByLabel('Confirm new password').fill('brand-new-password');
    await submit.click();
    await expect(toast(page, 'Password changed')).toBeVisible();
    await expect(page).toHaveURL(/\/login$/);
    const again = await request.post('/api/auth/login', { data: { username: user.username, password: 'brand-new-password' } });
    expect(again.status()).toBe(200);
  });
});

test.describe('every screen in Chinese and the dark theme', () => {
  test('signed out: sign-in page, sign-in dialog and OAuth return screen', async ({ page }) => {
    const errors = collectConsoleErrors(page);
    await page.addInitScript(() => {
      localStorage.setItem('i18nextLng', 'zh-CN');
      localStorage.setItem('theme', 'dark');
    });
    await page.goto('/login');
    await expect(page.getByRole('heading', { name: '登录 Toolport' })).toBeVisible();
    await expect(page.locator('html')).toHaveClass(/dark/);
    await expectTranslated(page);

    await page.getByRole('button', { name: '登录', exact: true }).click();
    await expect(page.getByRole('dialog', { name: '登录 Toolport' })).toBeVisible();
    await expectTranslated(page);
    await page.keyboard.press('Escape');

    await page.goto('/oauth/github?error=access_denied');
    await expect(page.getByRole('alert')).toContainText('OAuth GitHub 授权失败');
    await expectTranslated(page);
    await page.goto('/oauth/google');
    await expect(page.getByRole('alert')).toContainText('缺少授权码');
    await expectTranslated(page);
    expect(errors).toEqual([]);
  });

  test('signed in: dashboard, analytics, profile, placeholders, menu and sample dialog', async ({ page, request }) => {
    const user = await createUser(request, 'zh', 10);
    await signIn(page, user.username, user.password);
    const errors = collectConsoleErrors(page);
    await page.addInitScript(() => {
      localStorage.setItem('i18nextLng', 'zh-CN');
      localStorage.setItem('theme', 'dark');
    });

    await page.goto('/');
    await expect(page.getByRole('heading', { name: '仪表盘', level: 1 })).toBeVisible();
    await expect(page.getByTestId('uptime')).toContainText('分钟');
    await expect(page.locator('html')).toHaveClass(/dark/);
    await expectTranslated(page);

    for (const [path, heading] of [
      ['/analytics', '统计分析'],
      ['/profile', '个人资料'],
      ['/docs', '文档'],
      ['/models', '模型'],
    ] as const) {
      await page.goto(path);
      await expect(page.getByRole('heading', { name: heading, level: 1 })).toBeVisible();
      await expect(page.locator('[aria-hidden="true"].animate-pulse')).toHaveCount(0);
      await expectTranslated(page);
    }

    // The server keeps /api itself for the API (a reload there answers JSON); the console reaches it in-app.
    await page.evaluate(() => {
      history.pushState(null, '', '/api');
      dispatchEvent(new PopStateEvent('popstate'));
    });
    await expect(page.getByRole('heading', { name: 'API', level: 1 })).toBeVisible();
    await expectTranslated(page);

    await page.goto('/profile');
    await page.getByRole('button', { name: '刷新密钥' }).click();
    await expect(page.getByRole('alertdialog')).toBeVisible();
    await expectTranslated(page);
    await page.keyboard.press('Escape');

    await page.getByRole('button', { name: '示例配置' }).click();
    await expect(page.getByRole('dialog', { name: '服务配置' })).toBeVisible();
    await expectTranslated(page);
    await page.keyboard.press('Escape');

    await page.setViewportSize({ width: 375, height: 740 });
    await page.getByRole('button', { name: '打开菜单' }).click();
    await expect(page.getByRole('dialog', { name: 'Toolport' })).toBeVisible();
    await expectTranslated(page);
    expect(errors).toEqual([]);
  });
});

test.describe('small screens and the first download', () => {
  test('at 375 px the sidebar becomes a menu and no page scrolls sideways', async ({ page, signedIn }) => {
    expect(signedIn.user.role).toBe(100);
    await page.setViewportSize({ width: 375, height: 740 });
    for (const path of ['/', '/analytics', '/profile']) {
      await page.goto(path);
      await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
      await expect(page.getByRole('navigation', { name: 'Sections' })).toBeHidden();
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      expect(overflow, `${path} is wider than the screen`).toBeLessThanOrEqual(0);
    }

    const menu = page.getByRole('button', { name: 'Open menu' });
    await menu.click();
    const sheet = page.getByRole('dialog', { name: 'Toolport' });
    await expect(sheet.getByRole('link', { name: 'Preferences' })).toBeVisible();
    await page.keyboard.press('Escape');
    await expect(sheet).toBeHidden();
    await expect(menu).toBeFocused();

    await menu.click();
    await sheet.getByRole('link', { name: 'Analytics' }).click();
    await expect(page).toHaveURL(/\/analytics$/);
    await expect(sheet).toBeHidden();
  });

  test('the sign-in page and the dashboard each transfer at most 200 KB of JavaScript, compressed', async ({ browser, baseURL }) => {
    const cold = await browser.newPage({ baseURL });
    const signInScripts = measureScripts(cold);
    await cold.goto('/login');
    await expect(cold.getByLabel('Username')).toBeVisible();
    await cold.waitForLoadState('networkidle');
    expect(await signInScripts.transferredKb(), signInScripts.files().join('\n')).toBeLessThanOrEqual(200);
    await cold.close();

    const page = await browser.newPage({ baseURL });
    await signIn(page);
    const dashboardScripts = measureScripts(page);
    await page.goto('/');
    await expect(page.getByTestId('uptime')).toBeVisible();
    await page.waitForLoadState('networkidle');
    expect(await dashboardScripts.transferredKb(), dashboardScripts.files().join('\n')).toBeLessThanOrEqual(200);
    await page.close();
  });
});
