import { expect, test } from '../support/market-server';

/**
 * Issue 15, item 3 (decision 0037): a search that answered though part of it failed says so above the results.
 * PyPI's search is its exact match plus the MCP Registry's PyPI entries; the fake MCP Registry fails (500).
 */
test.describe('a search that partly failed', () => {
  test.afterEach(({ marketServer }) => marketServer.fake.fail('mcp', null));

  for (const lang of ['en', 'zh-CN'] as const) {
    const text =
      lang === 'en'
        ? {
            title: 'Some results may be missing',
            setting: 'MCP_REGISTRY_URL points at it',
            custom: 'Custom Install',
            box: 'Search packages',
          }
        : { title: '部分结果可能缺失', setting: '它的地址由 MCP_REGISTRY_URL 设置', custom: '自定义安装', box: '搜索软件包' };

    test(`shows which registry failed, why and its setting above the results, with Custom Install (${lang})`, async ({
      page,
      signedIn,
      marketServer,
    }) => {
      expect(signedIn.user.role).toBe(100);
      if (lang === 'zh-CN') await page.addInitScript(() => localStorage.setItem('i18nextLng', 'zh-CN'));
      marketServer.fake.fail('mcp', 'error');
      // A term of this run alone: the server keeps successful answers a while.
      const term = `notes run:${Date.now()}`;
      await page.goto(`/market?source=pypi&q=${encodeURIComponent(term)}`);
      const banner = page.getByTestId('search-warnings');
      await expect(banner).toContainText(text.title);
      await expect(banner).toContainText('HTTP 500');
      await expect(banner).toContainText(text.setting);
      await banner.getByRole('button', { name: text.custom }).click();
      const dialog = page.getByRole('dialog', { name: text.custom });
      await expect(dialog).toBeVisible();
      await page.keyboard.press('Escape');
      await expect(dialog).toBeHidden();
    });
  }
});
