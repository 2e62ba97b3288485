import type { Page } from '@playwright/test';
import { collectConsoleErrors, expectNoRawKeys } from '../support/console-checks';
import { expect, test } from '../support/fixtures';
import { accessToken, installEverything, uninstallNamed } from '../support/services-api';
import { expectChineseOnly } from '../support/zh-text-check';

const NAME = 'e2e-zh-everything';
const NAMESPACES = ['common', 'services'];
/** Product names stay as they are in Chinese text. */
// A tool server's reason for being down is the gateway's diagnostic, kept in English like protocol errors
// (docs/protocol.md); another spec may leave such a service behind on the shared server.
const ALLOWED = ['Claude Code', 'Cherry Studio', 'VS Code', 'could not start: upstream request failed: fetch failed'];

/** Both checks: no key or English of the services screens, and nothing that looks like a key of any namespace. */
async function expectTranslated(page: Page): Promise<void> {
  await expectChineseOnly(page, NAMESPACES, ALLOWED);
  await expectNoRawKeys(page);
}

test.describe('services screens in Chinese and the dark theme', () => {
  test.setTimeout(120_000);

  test.beforeAll(async ({ playwright, baseURL }) => {
    const request = await playwright.request.newContext({ baseURL });
    const admin = await accessToken(request);
    await uninstallNamed(request, admin, [NAME]);
    await installEverything(request, admin, NAME);
    await request.dispose();
  });

  test.afterAll(async ({ playwright, baseURL }) => {
    const request = await playwright.request.newContext({ baseURL });
    await uninstallNamed(request, await accessToken(request), [NAME]);
    await request.dispose();
  });

  test('every services screen shows no raw key and no English sentence', async ({ page, signedIn }) => {
    expect(signedIn.user.role).toBeGreaterThanOrEqual(10);
    const consoleErrors = collectConsoleErrors(page);
    await page.addInitScript(() => {
      localStorage.setItem('i18nextLng', 'zh-CN');
      localStorage.setItem('theme', 'dark');
    });
    await page.goto('/services');
    await expect(page.getByRole('heading', { name: '服务', level: 1 })).toBeVisible();
    await expect(page.locator('html')).toHaveClass(/dark/);
    await expect(page.getByRole('group', { name: NAME })).toBeVisible();
    await expectTranslated(page);

    await page.getByRole('button', { name: '列表视图' }).click();
    await expect(page.getByRole('columnheader', { name: '健康状态' })).toBeVisible();
    await expectTranslated(page);
    await page.getByRole('button', { name: '网格视图' }).click();

    await page.getByRole('group', { name: NAME }).getByRole('button', { name: '配置' }).click();
    const config = page.getByRole('dialog', { name: NAME });
    await expect(config.getByText('每日请求数')).toBeVisible();
    await expectTranslated(page);
    await config.getByRole('radio', { name: 'SSE' }).click();
    await config.getByRole('tab', { name: 'Cherry Studio' }).click();
    await expectTranslated(page);
    await page.keyboard.press('Escape');

    await page.getByRole('button', { name: '添加服务' }).click();
    await expect(page.getByRole('menuitem', { name: '批量导入' })).toBeVisible();
    await expectTranslated(page);
    await page.getByRole('menuitem', { name: '自定义安装' }).click();
    const custom = page.getByRole('dialog', { name: '自定义安装' });
    await custom.getByRole('button', { name: '安装' }).click();
    await expect(custom.getByText('URL 不能为空')).toBeVisible();
    await expectTranslated(page);
    await custom.getByLabel('类型').selectOption('stdio');
    await expectTranslated(page);
    await page.keyboard.press('Escape');

    await page.getByRole('button', { name: '添加服务' }).click();
    await page.getByRole('menuitem', { name: '批量导入' }).click();
    const batch = page.getByRole('dialog', { name: '批量导入' });
    await batch.getByLabel('JSON').fill('{');
    await batch.getByRole('button', { name: '导入' }).click();
    await expect(batch.getByRole('alert')).toContainText('文本不是有效的 JSON。');
    await expectTranslated(page);
    await page.keyboard.press('Escape');

    await page
      .getByRole('group', { name: NAME })
      .getByRole('button', { name: `编辑 ${NAME}` })
      .click();
    await expect(page.getByRole('dialog', { name: '编辑服务' })).toBeVisible();
    await expectTranslated(page);
    expect(consoleErrors).toEqual([]);
  });

  test('fits a 375 px wide screen without sideways scrolling', async ({ page, signedIn }) => {
    expect(signedIn.user.role).toBeGreaterThanOrEqual(10);
    await page.setViewportSize({ width: 375, height: 800 });
    const overflow = () => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    await page.goto('/services');
    await expect(page.getByRole('group', { name: NAME })).toBeVisible();
    expect(await overflow()).toBe(0);
    await page.getByRole('group', { name: NAME }).getByRole('button', { name: 'Configure' }).click();
    const dialog = page.getByRole('dialog', { name: NAME });
    await expect(dialog).toBeVisible();
    const box = await dialog.boundingBox();
    expect(box && box.x >= 0 && box.x + box.width <= 375).toBe(true);
    expect(await overflow()).toBe(0);
  });
});
