import { expect, test } from '../support/fixtures';

const isDark = () => document.documentElement.classList.contains('dark');

test.describe('theme control', () => {
  test('cycles light → dark → system, and system follows the OS', async ({ page }) => {
    await page.goto('/');
    const toggle = page.getByRole('button', { name: /^Theme:/ });
    await expect(toggle).toHaveAccessibleName('Theme: System');

    await toggle.click();
    await expect(toggle).toHaveAccessibleName('Theme: Light');
    expect(await page.evaluate(isDark)).toBe(false);
    expect(await page.evaluate(() => localStorage.getItem('theme'))).toBe('light');

    await toggle.click();
    await expect(toggle).toHaveAccessibleName('Theme: Dark');
    expect(await page.evaluate(isDark)).toBe(true);
    expect(await page.evaluate(() => localStorage.getItem('theme'))).toBe('dark');

    await toggle.click();
    await expect(toggle).toHaveAccessibleName('Theme: System');
    expect(await page.evaluate(() => localStorage.getItem('theme'))).toBeNull();
    expect(await page.evaluate(isDark)).toBe(false);

    await page.emulateMedia({ colorScheme: 'dark' });
    await expect.poll(() => page.evaluate(isDark)).toBe(true);
  });

  test('a stored theme applies before the app loads, so reloading never flashes', async ({ page }) => {
    await page.goto('/');
    const toggle = page.getByRole('button', { name: /^Theme:/ });
    await toggle.click();
    await toggle.click();
    await expect(toggle).toHaveAccessibleName('Theme: Dark');

    await page.reload();
    await expect(page.getByRole('button', { name: 'Theme: Dark' })).toBeVisible();

    // Without the app's script only index.html's inline script can have set the class.
    await page.route('**/assets/*.js', (route) => route.abort());
    await page.reload();
    expect(await page.evaluate(isDark)).toBe(true);
  });
});

test.describe('language selector', () => {
  test('中文 shows the console in Chinese and reloading keeps it', async ({ page, signedIn }) => {
    expect(signedIn.user.username).toBe('root');
    await page.goto('/');
    await expect(page.getByRole('heading', { name: 'Dashboard', level: 1 })).toBeVisible();

    await page.getByRole('combobox', { name: 'Language' }).selectOption({ label: '中文' });

    await expect(page.getByRole('heading', { name: '仪表盘', level: 1 })).toBeVisible();
    await expect(page.getByRole('link', { name: '文档', exact: true })).toBeVisible();
    await expect(page.locator('html')).toHaveAttribute('lang', 'zh-CN');
    expect(await page.evaluate(() => localStorage.getItem('i18nextLng'))).toBe('zh-CN');

    await page.reload();
    await expect(page.getByRole('heading', { name: '仪表盘', level: 1 })).toBeVisible();
    await expect(page.getByRole('combobox', { name: '语言' })).toHaveValue('zh-CN');

    await page.getByRole('combobox', { name: '语言' }).selectOption({ label: 'EN' });
    await expect(page.getByRole('heading', { name: 'Dashboard', level: 1 })).toBeVisible();
  });

  test.describe('in a browser set to Chinese', () => {
    test.use({ locale: 'zh-CN' });

    test('the first visit is in Chinese', async ({ page }) => {
      await page.goto('/');
      await expect(page.getByRole('heading', { name: '登录 Toolport' })).toBeVisible();
      await expect(page.getByRole('button', { name: '主题：跟随系统' })).toBeVisible();
    });
  });
});
