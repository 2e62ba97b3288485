import type { Page } from '@playwright/test';
import { collectConsoleErrors, expectNoRawKeys } from '../support/console-checks';
import { expect, test } from '../support/market-server';
import { accessToken, uninstallNamed } from '../support/services-api';
import { toast } from '../support/toasts';
import { expectChineseOnly } from '../support/zh-text-check';

const ECHO = 'acme-echo-mcp';
const NAMESPACES = ['common', 'market'];
/** Package and registry names stay as they are in Chinese text. */
const ALLOWED = [ECHO, 'MCP Registry'];

/** Both checks: no key or English of the market screens, and nothing that looks like a key of any namespace. */
async function expectTranslated(page: Page): Promise<void> {
  await expectChineseOnly(page, NAMESPACES, ALLOWED);
  await expectNoRawKeys(page);
}

test.describe('marketplace in Chinese and the dark theme', () => {
  test.setTimeout(120_000);

  test.afterAll(async ({ playwright, marketServer }) => {
    const request = await playwright.request.newContext({ baseURL: marketServer.url });
    await uninstallNamed(request, await accessToken(request), [ECHO]);
    await request.dispose();
  });

  test('every marketplace screen and dialog shows no raw key and no English sentence', async ({ page, signedIn }) => {
    expect(signedIn.user.role).toBeGreaterThanOrEqual(10);
    const consoleErrors = collectConsoleErrors(page);
    await page.addInitScript(() => {
      localStorage.setItem('i18nextLng', 'zh-CN');
      localStorage.setItem('theme', 'dark');
    });
    await page.goto('/market');
    await expect(page.getByRole('heading', { name: '服务市场', level: 1 })).toBeVisible();
    await expect(page.locator('html')).toHaveClass(/dark/);
    await expect(page.getByText('输入名称或主题，按回车键搜索。')).toBeVisible();
    await expectTranslated(page);

    const box = page.getByRole('searchbox', { name: '搜索软件包' });
    await box.fill('echo');
    await page.getByRole('button', { name: '搜索' }).click();
    const card = page.getByRole('group', { name: ECHO });
    await expect(card.getByTestId('card-downloads')).toHaveText('每周下载 321 次');
    await expectTranslated(page);

    await page.getByRole('tab', { name: '已安装' }).click();
    await expect(page.getByText('未找到服务')).toBeVisible();
    await expectTranslated(page);
    await page.getByRole('tab', { name: 'npm' }).click();

    await card.getByRole('link', { name: `${ECHO} 的详情` }).click();
    await expect(page.getByRole('heading', { level: 1, name: ECHO })).toBeVisible();
    await expect(page.getByRole('heading', { name: '说明文档' })).toBeVisible();
    await expectTranslated(page);

    await page.getByRole('button', { name: '安装' }).click();
    const modal = page.getByRole('dialog', { name: '需要环境变量' });
    await modal.getByRole('button', { name: '安装' }).click();
    await expect(modal.getByRole('alert')).toHaveText('请输入 ACME_ECHO_TOKEN 的值。');
    await expectTranslated(page);
    await modal.getByLabel('ACME_ECHO_TOKEN').fill('zh-token');
    await modal.getByRole('button', { name: '安装' }).click();

    const done = page.getByRole('dialog', { name: '安装完成' });
    await expect(done).toBeVisible({ timeout: 90_000 });
    await expect(toast(page, '安装完成')).toBeVisible();
    await expectTranslated(page);
    await done.getByRole('button', { name: '完成' }).click();
    await expect(toast(page, '安装成功')).toBeVisible();

    await page.getByRole('button', { name: '卸载' }).click();
    const confirm = page.getByRole('alertdialog', { name: '确认卸载' });
    await expect(confirm).toContainText(`确定要卸载 ${ECHO} 吗？`);
    await expectTranslated(page);
    await confirm.getByRole('button', { name: '卸载' }).click();
    await expect(toast(page, '服务已卸载')).toBeVisible();
    await expect(page.getByRole('button', { name: '安装' })).toBeVisible();
    await expectTranslated(page);

    await page.goto('/market/npm/no-such-package-anywhere');
    await expect(page.getByRole('heading', { name: '未找到服务' })).toBeVisible();
    await expectTranslated(page);
    // The one failed request is the expected 404 of the unknown package.
    expect(consoleErrors).toEqual(['Failed to load resource: the server responded with a status of 404 (Not Found)']);
  });

  test('fits a 375 px wide screen without sideways scrolling', async ({ page, signedIn }) => {
    expect(signedIn.user.role).toBeGreaterThanOrEqual(10);
    await page.setViewportSize({ width: 375, height: 800 });
    const overflow = () => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    await page.goto('/market?source=npm&q=github');
    await expect(page.getByRole('group', { name: '@modelcontextprotocol/server-github' })).toBeVisible();
    expect(await overflow()).toBe(0);
    const box = await page.getByRole('group', { name: '@modelcontextprotocol/server-github' }).boundingBox();
    expect(box && box.x >= 0 && box.x + box.width <= 375).toBe(true);
    await page.getByRole('link', { name: 'Details of @modelcontextprotocol/server-github' }).click();
    await expect(page.getByTestId('readme')).toBeVisible();
    expect(await overflow()).toBe(0);
  });
});
