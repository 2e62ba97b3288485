import type { Page, Route } from '@playwright/test';
import { measureScripts } from '../support/console-checks';
import { createUser } from '../support/console-users';
import { expect, signIn, test } from '../support/fixtures';
import { accessToken, uninstallNamed } from '../support/services-api';
import { toast } from '../support/toasts';

/** Issue 15: a console that says why (item 1), survives upgrades (item 5) and loads light (item 8). */

const UNREACHABLE = 'e2e-f15-unreachable';
/** Port 9 (discard) on loopback: nothing listens, so every connection is refused at once, as for a dead remote. */
const DEAD_URL = 'http://127.0.0.1:9/mcp';

const inChinese = (page: Page) => page.addInitScript(() => localStorage.setItem('i18nextLng', 'zh-CN'));

test.describe('a red service says why', () => {
  test.afterAll(async ({ playwright, baseURL }) => {
    const request = await playwright.request.newContext({ baseURL });
    await uninstallNamed(request, await accessToken(request), [UNREACHABLE]);
    await request.dispose();
  });

  test('an unreachable remote: the reason on the card, in the tooltip and the list, a failure toast, a link to its logs', async ({
    page,
    request,
    signedIn,
  }) => {
    const created = await request.post('/api/mcp_market/custom_service', {
      headers: { Authorization: `Bearer ${signedIn.token}` },
      data: { name: UNREACHABLE, type: 'streamableHttp', url: DEAD_URL, command: '', description: '' },
    });
    expect(created.status(), await created.text()).toBe(201);
    const id = (await created.json()).data.service_id as number;

    await page.goto('/services');
    const card = page.getByRole('group', { name: UNREACHABLE });
    const checked = page.waitForResponse((res) => res.url().endsWith(`/${id}/health/check`));
    await card.getByRole('button', { name: `Check health of ${UNREACHABLE}` }).click();
    const result = (await (await checked).json()).data;
    expect(result.health_status).toBe('unhealthy');
    expect(result.health_details).not.toBe('');

    const failed = toast(page, `Health Check: ${UNREACHABLE} Is Not Answering`);
    await expect(failed).toBeVisible();
    await expect(failed).toHaveAttribute('data-type', 'error');
    await expect(failed).toContainText(result.health_details);

    const reason = card.getByTestId('health-reason');
    await expect(reason).toContainText(`Not answering: ${result.health_details}`);
    await expect(reason.getByRole('link', { name: 'Logs of this service' })).toHaveAttribute('href', `/logs?service_id=${id}`);

    const dot = card.getByRole('img', { name: /^Health: Unhealthy\. Not answering: / });
    await dot.focus();
    await expect(page.getByRole('tooltip')).toContainText(result.health_details);

    await page.getByRole('button', { name: 'List view' }).click();
    const row = page.getByTestId('service-row').filter({ hasText: UNREACHABLE });
    await expect(row.getByTestId('health-reason')).toContainText(`Not answering: ${result.health_details}`);

    await row.getByRole('link', { name: 'Logs of this service' }).click();
    await expect(page).toHaveURL(new RegExp(`/logs\\?service_id=${id}$`));
    await expect(page.getByRole('heading', { level: 1 })).toBeVisible();

    // The same in Chinese: the gateway's own words of the reason in Chinese too (decision 0054), as the API says them.
    await inChinese(page);
    await page.goto('/services');
    const zhCard = page.getByRole('group', { name: UNREACHABLE });
    const listed = await request.get('/api/mcp_market/installed', {
      headers: { Authorization: `Bearer ${signedIn.token}`, 'Accept-Language': 'zh-CN' },
    });
    const zhReason = ((await listed.json()).data as { name: string; health_details: string }[]).find((s) => s.name === UNREACHABLE)
      ?.health_details as string;
    expect(zhReason).toMatch(/^无法启动：/);
    await expect(zhCard.getByTestId('health-reason')).toContainText(`无响应：${zhReason}`);
    await expect(zhCard.getByRole('link', { name: '查看此服务的日志' })).toBeVisible();
    await zhCard.getByRole('button', { name: /健康/ }).click();
    await expect(toast(page, `健康检查：${UNREACHABLE} 无响应`)).toHaveAttribute('data-type', 'error');
  });
});

/** Answers the Services page's chunk with a 404, as a server restarted with a new build does: `times` times, or always. */
async function removeServicesChunk(page: Page, times?: number): Promise<{ requests(): number }> {
  let requests = 0;
  await page.route(/\/assets\/services-page-[^/]+\.js$/, async (route: Route) => {
    requests += 1;
    if (times === undefined || requests <= times) {
      await route.fulfill({ status: 404, contentType: 'application/json', body: '{"success":false}' });
    } else {
      await route.fallback();
    }
  });
  return { requests: () => requests };
}

test.describe('a page whose code is gone', () => {
  test('after an upgrade the console reloads once and shows the page from the new build', async ({ page, signedIn }) => {
    expect(signedIn.user.role).toBe(100);
    const chunk = await removeServicesChunk(page, 1);
    let documents = 0;
    page.on('request', (req) => {
      if (req.resourceType() === 'document') documents += 1;
    });
    await page.goto('/');
    await expect(page.getByTestId('uptime')).toBeVisible();
    await page.getByRole('navigation').getByRole('link', { name: 'Services', exact: true }).first().click();

    await expect(page.getByRole('heading', { name: 'Services', level: 1 })).toBeVisible();
    await expect(page).toHaveURL(/\/services$/);
    expect(chunk.requests()).toBe(2);
    // The first load and exactly one reload.
    expect(documents).toBe(2);
    await expect(page.getByText('Hey developer')).toHaveCount(0);
  });

  for (const lang of ['en', 'zh-CN'] as const) {
    const text =
      lang === 'en'
        ? { title: 'This page could not be loaded', retry: 'Retry', services: 'Services' }
        : { title: '无法加载此页面', retry: '重试', services: '服务' };

    test(`a chunk that stays missing: no reload loop, the error inside the layout with Retry (${lang})`, async ({ page, signedIn }) => {
      expect(signedIn.user.role).toBe(100);
      if (lang === 'zh-CN') await inChinese(page);
      const chunk = await removeServicesChunk(page);
      let documents = 0;
      page.on('request', (req) => {
        if (req.resourceType() === 'document') documents += 1;
      });
      await page.goto('/');
      await expect(page.getByTestId('uptime')).toBeVisible();
      await page.getByRole('navigation').getByRole('link', { name: text.services, exact: true }).first().click();

      const alert = page.getByRole('alert').filter({ hasText: text.title });
      await expect(alert).toBeVisible();
      await expect(page.getByRole('heading', { name: text.title, level: 1 })).toBeVisible();
      // One reload was tried, then no more: the page stays put.
      await page.waitForTimeout(500);
      expect(documents).toBe(2);
      expect(chunk.requests()).toBe(2);
      // The layout stays: the sidebar still leads elsewhere.
      await expect(page.getByRole('navigation').getByRole('link', { name: text.services, exact: true }).first()).toBeVisible();
      await expect(page.getByText('Unexpected Application Error')).toHaveCount(0);

      // The network is back: Retry loads the page.
      await page.unroute(/\/assets\/services-page-[^/]+\.js$/);
      await alert.getByRole('button', { name: text.retry }).click();
      await expect(page.getByRole('heading', { name: text.services, level: 1 })).toBeVisible();
    });
  }
});

test.describe('static files load light', () => {
  test('scripts come pre-compressed (brotli, else gzip) with long cache lifetimes; index.html is never cached', async ({
    browser,
    baseURL,
    request,
  }) => {
    const page = await browser.newPage({ baseURL });
    const scripts = measureScripts(page);
    const documentResponse = await page.goto('/login');
    await expect(page.getByLabel('Username')).toBeVisible();
    await page.waitForLoadState('networkidle');
    expect(documentResponse?.headers()['cache-control']).toBe('no-cache');
    const kb = await scripts.transferredKb();
    expect(kb).toBeGreaterThan(0);
    expect(kb, scripts.files().join('\n')).toBeLessThanOrEqual(200);
    // Brotli for every script worth compressing; the build leaves files under 1 KB as they are.
    const encodings = scripts.encodings();
    const compressed = [...encodings].filter(([, encoding]) => encoding === 'br').map(([file]) => file);
    expect(compressed.length).toBeGreaterThan(0);
    for (const [file, encoding] of encodings) {
      if (encoding !== 'br') {
        expect(encoding, file).toBe('identity');
        expect((await (await request.get(file)).body()).length, file).toBeLessThan(1024);
      }
    }

    const asset = compressed[0] ?? '';
    expect(asset).toMatch(/^\/assets\//);
    const gzip = await request.get(asset, { headers: { 'accept-encoding': 'gzip' } });
    expect(gzip.headers()).toMatchObject({
      'content-encoding': 'gzip',
      'cache-control': 'public, max-age=31536000, immutable',
      vary: 'accept-encoding',
    });
    const plain = await request.get(asset, { headers: { 'accept-encoding': 'identity' } });
    expect(plain.headers()['content-encoding']).toBeUndefined();
    expect((await plain.body()).toString('utf8')).toBe((await gzip.body()).toString('utf8'));
    await page.close();
  });
});

test.describe('each screen names its tab', () => {
  const screens = {
    en: [
      ['/', 'Dashboard'],
      ['/services', 'Services'],
      ['/market', 'Market'],
      ['/users', 'Users'],
      ['/logs', 'Logs'],
      ['/preferences', 'Preferences'],
      ['/profile', 'Profile'],
      ['/analytics', 'Analytics'],
      ['/no-such-page', 'Page not found'],
    ],
    'zh-CN': [
      ['/', '仪表盘'],
      ['/services', '服务'],
      ['/market', '服务市场'],
      ['/users', '用户'],
      ['/logs', '日志'],
      ['/preferences', '偏好设置'],
      ['/profile', '个人资料'],
      ['/analytics', '统计分析'],
      ['/no-such-page', '页面不存在'],
    ],
  } as const;

  for (const lang of ['en', 'zh-CN'] as const) {
    test(`document.title follows the route and the language (${lang})`, async ({ page, signedIn }) => {
      expect(signedIn.user.role).toBe(100);
      if (lang === 'zh-CN') await inChinese(page);
      for (const [path, title] of screens[lang]) {
        await page.goto(path);
        await expect(page.getByRole('heading', { name: title, level: 1 })).toBeVisible();
        await expect(page).toHaveTitle(`${title} · Toolport`);
      }
    });
  }

  test('the sign-in page, in both languages', async ({ page }) => {
    await page.goto('/login');
    await expect(page).toHaveTitle('Sign in to Toolport');
    await inChinese(page);
    await page.reload();
    await expect(page).toHaveTitle('登录 Toolport');
  });
});

test.describe('small things users notice', () => {
  test('the Profile API key has a Copy button that copies the whole key', async ({ page, context, signedIn }) => {
    expect(signedIn.user.role).toBe(100);
    await context.grantPermissions(['clipboard-read', 'clipboard-write']);
    await page.goto('/profile');
    await page.getByRole('button', { name: 'Show API key' }).click();
    const shown = (await page.getByTestId('api-key').textContent()) ?? '';
    await page.getByRole('button', { name: 'Hide API key' }).click();
    await page.getByRole('button', { name: 'Copy API key' }).click();
    await expect(toast(page, 'API key copied')).toBeVisible();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(shown);

    await inChinese(page);
    await page.reload();
    await expect(page.getByRole('button', { name: '复制 API 密钥' })).toBeVisible();
  });

  for (const lang of ['en', 'zh-CN'] as const) {
    const text =
      lang === 'en'
        ? { analytics: 'Analytics', dashboard: 'Dashboard', username: 'Username', notice: 'Your session ended', sections: 'Sections' }
        : { analytics: '统计分析', dashboard: '仪表盘', username: '用户名', notice: '您的会话已结束', sections: '页面' };

    test(`the sign-in page says when the session ended (${lang})`, async ({ page, request }) => {
      const user = await createUser(request, 'ended');
      await signIn(page, user.username, user.password);
      if (lang === 'zh-CN') await inChinese(page);
      await page.goto('/analytics');
      await expect(page.getByRole('heading', { name: text.analytics, level: 1 })).toBeVisible();
      // Another device changes the password: the server ends every session of the user, refresh tokens included.
      const other = (await (await request.post('/api/auth/login', { data: user })).json()).data.access_token as string;
      const changed = await request.post('/api/user/change-password', {
        headers: { Authorization: `Bearer ${other}` },
        data: { current_password: user.password, new_password: `${user.password}-new` },
      });
      expect(changed.status()).toBe(200);
      // The dashboard asks the server for its figures: the refused session shows at that call. On a busy machine (hashing
      // the two passwords above takes seconds) a call the console made of its own accord may meet it first and lead to
      // sign-in already, taking the sidebar away: the click is then not needed (the top bar's Dashboard link, still
      // on the sign-in page, would leave it and lose the one-time notice).
      await page
        .getByRole('navigation', { name: text.sections })
        .getByRole('link', { name: text.dashboard, exact: true })
        .click({ timeout: 10_000 })
        .catch(() => undefined);
      // The refusal, the failed renewal and the way to the sign-in page: several round trips on a busy machine.
      await expect(page).toHaveURL(/\/login$/, { timeout: 15_000 });
      await expect(page.getByRole('status').filter({ hasText: text.notice })).toBeVisible();
      // Said once: a later visit of the sign-in page has no notice.
      await page.reload();
      await expect(page.getByLabel(text.username)).toBeVisible();
      await expect(page.getByText(text.notice)).toHaveCount(0);
    });
  }
});

test.describe('a phone', () => {
  const PHONE_SERVICE = 'e2e-f15-phone';
  test.afterAll(async ({ playwright, baseURL }) => {
    const request = await playwright.request.newContext({ baseURL });
    await uninstallNamed(request, await accessToken(request), [PHONE_SERVICE]);
    await request.dispose();
  });

  test('at 390 px the Configure dialog fits: Copy JSON and every client Copy button are on screen', async ({ page, request, signedIn }) => {
    const created = await request.post('/api/mcp_market/custom_service', {
      headers: { Authorization: `Bearer ${signedIn.token}` },
      data: { name: PHONE_SERVICE, type: 'streamableHttp', url: DEAD_URL, command: '', description: '' },
    });
    expect(created.status(), await created.text()).toBe(201);
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto('/services');
    await page.getByRole('group', { name: PHONE_SERVICE }).getByRole('button', { name: 'Configure' }).click();
    const dialog = page.getByRole('dialog');
    await expect(dialog).toBeVisible();
    const box = await dialog.boundingBox();
    expect(box?.width ?? 999).toBeLessThanOrEqual(390);
    const overflow = await dialog.evaluate((el) => el.scrollWidth - el.clientWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    const buttons = dialog.getByRole('button', { name: /Copy/ });
    expect(await buttons.count()).toBeGreaterThan(0);
    for (const button of await buttons.all()) {
      if (!(await button.isVisible())) continue;
      const b = await button.boundingBox();
      expect(b, await button.innerText()).not.toBeNull();
      expect((b?.x ?? 0) + (b?.width ?? 0)).toBeLessThanOrEqual(390);
    }
  });
});
