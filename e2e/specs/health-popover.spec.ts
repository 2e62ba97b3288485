import type { Page } from '@playwright/test';
import { expect, test } from '../support/fixtures';
import { accessToken, uninstallNamed } from '../support/services-api';
import { toast } from '../support/toasts';

/** Issue 15, item 1: a red service's reason in a popover with Copy, Reconnect and its logs (decision 0037). */

/** Port 9 (discard) on loopback: nothing listens, so every connection is refused at once, as for a dead remote. */
const DEAD_URL = 'http://127.0.0.1:9/mcp';

const inChinese = (page: Page) => page.addInitScript(() => localStorage.setItem('i18nextLng', 'zh-CN'));

const TEXT = {
  en: { why: (n: string) => `Why ${n} does not answer`, copied: 'Reason copied', reconnect: 'Reconnect', logs: 'Logs of this service' },
  'zh-CN': { why: (n: string) => `${n} 为什么没有响应`, copied: '原因已复制', reconnect: '重新连接', logs: '查看此服务的日志' },
} as const;

for (const lang of ['en', 'zh-CN'] as const) {
  const name = `e2e-h7-red-${lang.toLowerCase()}`;
  test.describe(`the health popover (${lang})`, () => {
    test.afterAll(async ({ playwright, baseURL }) => {
      const request = await playwright.request.newContext({ baseURL });
      await uninstallNamed(request, await accessToken(request), [name]);
      await request.dispose();
    });

    test(`shows the reason, copies it, reconnects and links to the logs (${lang})`, async ({ page, context, request, signedIn }) => {
      await context.grantPermissions(['clipboard-read', 'clipboard-write']);
      if (lang === 'zh-CN') await inChinese(page);
      // The gateway's own words in the reason are said in the reader's language (decision 0054): ask in the page's.
      const headers = { Authorization: `Bearer ${signedIn.token}`, 'Accept-Language': lang };
      const created = await request.post('/api/mcp_market/custom_service', {
        headers,
        data: { name, type: 'streamableHttp', url: DEAD_URL, command: '', description: '' },
      });
      expect(created.status(), await created.text()).toBe(201);
      const id = (await created.json()).data.service_id as number;
      const checked = await request.post(`/api/mcp_services/${id}/health/check`, { headers });
      const reason = (await checked.json()).data.health_details as string;
      expect(reason).not.toBe('');

      await page.goto('/services');
      const card = page.getByRole('group', { name });
      await card.getByRole('button', { name: TEXT[lang].why(name) }).click();
      const popover = page.getByTestId('health-popover');
      await expect(popover.getByTestId('health-popover-reason')).toHaveText(reason);
      await expect(popover.getByRole('link', { name: TEXT[lang].logs })).toHaveAttribute('href', `/logs?service_id=${id}`);

      await popover.getByRole('button', { name: new RegExp(`^${lang === 'en' ? 'Copy' : '复制'}`) }).click();
      await expect(toast(page, TEXT[lang].copied)).toBeVisible();
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(reason);

      const reconnected = page.waitForResponse((res) => res.url().endsWith(`/${id}/reconnect`));
      await popover.getByRole('button', { name: TEXT[lang].reconnect }).click();
      const answer = await reconnected;
      expect(answer.status()).toBe(200);
      expect((await answer.json()).data.health_status).toBe('unhealthy');
      await expect(page.locator('[data-sonner-toast][data-type="error"]').first()).toBeVisible();
    });
  });
}
