import { expect, test } from '../support/market-server';

/**
 * Issue 15, item 3: a search whose registry failed is not an empty result. The fake npm registry fails as a
 * broken mirror does (500) and as one without the search endpoint does (404); the page says so in the user's
 * language, names the setting, and offers Retry and Custom Install.
 */
test.describe('a search that failed', () => {
  test.afterEach(({ marketServer }) => marketServer.fake.fail('npm', null));

  for (const lang of ['en', 'zh-CN'] as const) {
    const text =
      lang === 'en'
        ? {
            title: 'The search failed',
            reason: 'The npm search failed (HTTP 500); NPM_REGISTRY_URL points at it',
            retry: 'Retry',
            custom: 'Custom Install',
            search: 'Search',
            box: 'Search packages',
            empty: 'No services found',
          }
        : {
            title: '搜索失败',
            reason: 'npm 搜索失败（HTTP 500）；它的地址由 NPM_REGISTRY_URL 设置',
            retry: '重试',
            custom: '自定义安装',
            search: '搜索',
            box: '搜索软件包',
            empty: '未找到服务',
          };

    test(`says the registry failed, names the setting, offers Retry and Custom Install (${lang})`, async ({
      page,
      signedIn,
      marketServer,
    }) => {
      expect(signedIn.user.role).toBe(100);
      if (lang === 'zh-CN') await page.addInitScript(() => localStorage.setItem('i18nextLng', 'zh-CN'));
      marketServer.fake.fail('npm', 'error');
      await page.goto('/market');
      // A term no other search used: the server keeps successful answers a while, and this one must reach the
      // failing registry. The fake registry ignores `name:value` words, so the package is still found on Retry.
      const term = `${lang === 'en' ? 'echo mcp' : 'acme echo'} run:${Date.now()}`;
      await page.getByRole('searchbox', { name: text.box }).fill(term);
      // This search's own answer: the page may ask for other terms meanwhile (an empty one answers 200 at once).
      const answered = page.waitForResponse((res) => {
        const url = new URL(res.url());
        return url.pathname === '/api/mcp_market/search' && url.searchParams.get('query') === term;
      });
      await page.getByRole('button', { name: text.search, exact: true }).click();
      expect((await answered).status()).toBe(502);

      const failed = page.getByTestId('search-failed');
      await expect(failed.getByRole('alert')).toContainText(text.title);
      await expect(failed.getByRole('alert')).toContainText(text.reason);
      await expect(page.getByText(text.empty)).toHaveCount(0);

      await failed.getByRole('button', { name: text.custom }).click();
      const dialog = page.getByRole('dialog', { name: text.custom });
      await expect(dialog).toBeVisible();
      await page.keyboard.press('Escape');
      await expect(dialog).toBeHidden();

      // The registry is back: Retry finds the package.
      marketServer.fake.fail('npm', null);
      await failed.getByRole('button', { name: text.retry }).click();
      await expect(page.getByRole('group', { name: 'acme-echo-mcp' })).toBeVisible();
    });
  }
});
