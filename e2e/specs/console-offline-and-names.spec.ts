import type { Page } from '@playwright/test';
import { createUser } from '../support/console-users';
import { expect, signIn, test } from '../support/fixtures';
import { accessToken, uninstallNamed } from '../support/services-api';
import { toast } from '../support/toasts';

/**
 * Issue 29: the server down while the console is open (an in-layout "cannot be reached" with Retry, never the
 * browser's error page), tab titles of the consent, upstream result and admins-only screens, the toast region's
 * name in Chinese, and the endpoint name a Chinese service name gets, said in the dialogs and after creation.
 */

const TEXT = {
  en: {
    services: 'Services',
    menu: 'Open menu',
    offline: 'The server cannot be reached',
    still: 'Still no answer from the server.',
    retry: 'Retry',
    consentTitle: 'Approve an app · Toolport',
    adminOnlyTitle: 'Administrators only · Toolport',
    region: /^Notifications/,
    closeToast: 'Close the notification',
    add: 'Add Service',
    custom: 'Custom Install',
    name: 'Name',
    type: 'Type',
    url: 'Server URL',
    submit: 'Install',
    hint: (name: string) =>
      `"${name}" cannot be used in an address: it becomes the display name, and the endpoint name is made from the URL host. The answer names it.`,
    created: (endpoint: string, name: string) =>
      `Its endpoint name is ${endpoint} (/proxy/${endpoint}/mcp), because "${name}" cannot be used in an address as it is.`,
    edit: (name: string) => `Edit ${name}`,
    editTitle: 'Edit Service',
    endpoint: 'Endpoint name',
    editHint: (endpoint: string, name: string) =>
      `Made from the URL host (/proxy/${endpoint}/mcp), because "${name}" cannot be used in an address as it is; it cannot be changed.`,
    copyKey: 'Copy API key',
    sample: 'Sample configuration',
  },
  'zh-CN': {
    services: '服务',
    menu: '打开菜单',
    offline: '无法连接到服务器',
    still: '服务器仍然没有响应。',
    retry: '重试',
    consentTitle: '批准应用 · Toolport',
    adminOnlyTitle: '仅限管理员 · Toolport',
    region: /^通知/,
    closeToast: '关闭通知',
    add: '添加服务',
    custom: '自定义安装',
    name: '名称',
    type: '类型',
    url: '服务器地址',
    submit: '安装',
    hint: (name: string) => `“${name}”不能直接用于地址：它将作为显示名称，端点名称由 URL 的主机名生成。创建后会告知具体名称。`,
    created: (endpoint: string, name: string) => `其端点名称为 ${endpoint}（/proxy/${endpoint}/mcp），因为“${name}”不能直接用于地址。`,
    edit: (name: string) => `编辑 ${name}`,
    editTitle: '编辑服务',
    endpoint: '端点名称',
    editHint: (endpoint: string, name: string) =>
      `由 URL 的主机名生成（/proxy/${endpoint}/mcp），因为“${name}”不能直接用于地址；不可更改。`,
    copyKey: '复制 API 密钥',
    sample: '示例配置',
  },
} as const;
type Lang = keyof typeof TEXT;

const inLanguage = (page: Page, lang: Lang) => page.addInitScript((l) => localStorage.setItem('i18nextLng', l), lang);

function countDocuments(page: Page): { count(): number } {
  let n = 0;
  page.on('request', (req) => {
    if (req.resourceType() === 'document') n += 1;
  });
  return { count: () => n };
}

/** Goes to Services as a user does: the sidebar's link, or on a phone the menu's. */
async function openServices(page: Page, lang: Lang, width: number): Promise<void> {
  if (width < 1024) {
    await page.getByRole('button', { name: TEXT[lang].menu }).click();
    await page.getByRole('dialog', { name: 'Toolport' }).getByRole('link', { name: TEXT[lang].services, exact: true }).click();
  } else {
    await page.getByRole('navigation').getByRole('link', { name: TEXT[lang].services, exact: true }).first().click();
  }
}

test.describe('the server goes down while the console is open', () => {
  for (const [lang, width] of [
    ['en', 1440],
    ['zh-CN', 390],
    ['en', 360],
  ] as const) {
    test(`a page not loaded yet says the server cannot be reached, inside the layout, with Retry (${lang}, ${width} px)`, async ({
      page,
      signedIn,
    }) => {
      expect(signedIn.user.role).toBe(100);
      const l = TEXT[lang];
      await inLanguage(page, lang);
      await page.setViewportSize({ width, height: 800 });
      const documents = countDocuments(page);
      // On a phone the menu's code is fetched once the page is idle: a user who has been on it a moment has it.
      const menuCode = width < 768 ? page.waitForResponse(/\/assets\/mobile-nav-sheet-[^/]+\.js$/) : undefined;
      await page.goto('/');
      await expect(page.getByTestId('uptime')).toBeVisible();
      await menuCode;
      await page.waitForLoadState('networkidle');

      // Nothing answers any more: every request is refused, as by a stopped server.
      const down = /.*/;
      await page.route(down, (route) => route.abort('connectionrefused'));
      await openServices(page, lang, width);

      const alert = page.getByRole('alert').filter({ hasText: l.offline });
      await expect(alert).toBeVisible();
      await expect(page.getByRole('heading', { name: l.offline, level: 1 })).toBeVisible();
      await expect(page).toHaveTitle(`${l.offline} · Toolport`);
      // The console stays: no reload to the browser's error page, the top bar and its menu still there.
      await page.waitForTimeout(500);
      expect(documents.count()).toBe(1);
      await expect(page.getByRole('banner')).toBeVisible();
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      expect(overflow).toBeLessThanOrEqual(0);

      // Still down: Retry asks, and says there is still no answer, without leaving.
      await alert.getByRole('button', { name: l.retry }).click();
      await expect(alert).toContainText(l.still);
      expect(documents.count()).toBe(1);

      // Back up: Retry loads the page.
      await page.unroute(down);
      await alert.getByRole('button', { name: l.retry }).click();
      await expect(page.getByRole('heading', { name: l.services, level: 1 })).toBeVisible();
      await expect(page).toHaveURL(/\/services$/);
    });
  }
});

test.describe('a dialog of the layout whose code cannot arrive', () => {
  for (const lang of ['en', 'zh-CN'] as const) {
    test(`stays closed and says the server cannot be reached; the console stays (${lang})`, async ({ page, signedIn }) => {
      expect(signedIn.user.role).toBe(100);
      const l = TEXT[lang];
      await inLanguage(page, lang);
      const documents = countDocuments(page);
      await page.goto('/');
      await expect(page.getByTestId('uptime')).toBeVisible();
      const down = /.*/;
      await page.route(down, (route) => route.abort('connectionrefused'));
      await page.getByRole('button', { name: l.sample }).click();
      await expect(toast(page, l.offline)).toBeVisible();
      await expect(page.getByRole('dialog')).toHaveCount(0);
      // The dashboard is still there, with its sidebar and top bar.
      await expect(page.getByTestId('uptime')).toBeVisible();
      await expect(page.getByRole('banner')).toBeVisible();
      expect(documents.count()).toBe(1);
      await page.unroute(down);
    });
  }
});

test.describe('tab titles and the toast region in both languages', () => {
  for (const lang of ['en', 'zh-CN'] as const) {
    const l = TEXT[lang];

    test(`the consent screen and the admins-only notice name their tabs (${lang})`, async ({ page, request }) => {
      const user = await createUser(request, 'e2e-titles');
      await signIn(page, user.username, user.password);
      await inLanguage(page, lang);
      await page.goto('/oauth/consent?request=no-such-request');
      await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
      await expect(page).toHaveTitle(l.consentTitle);
      await page.goto('/users');
      await expect(page.getByRole('alert')).toBeVisible();
      await expect(page).toHaveTitle(l.adminOnlyTitle);
    });

    test(`the toast region and its close button are named in the console's language (${lang})`, async ({
      page,
      context,
      baseURL,
      signedIn,
    }) => {
      expect(signedIn.user.role).toBe(100);
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: baseURL });
      await inLanguage(page, lang);
      await page.goto('/profile');
      await expect(page.getByRole('region', { name: l.region })).toBeAttached();
      if (lang === 'zh-CN') await expect(page.getByRole('region', { name: /Notifications/ })).toHaveCount(0);
      // The API key's Copy says so in a toast, which carries the close button.
      await page.getByRole('button', { name: l.copyKey }).click();
      await expect(page.getByRole('button', { name: l.closeToast })).toBeVisible();
    });
  }
});

test.describe('a Chinese name gets an endpoint name of its own, and the console says which and why', () => {
  const created: string[] = [];
  test.afterAll(async ({ playwright, baseURL }) => {
    const request = await playwright.request.newContext({ baseURL });
    await uninstallNamed(request, await accessToken(request), created);
    await request.dispose();
  });

  for (const [lang, width, name] of [
    ['en', 1440, '天气查询甲'],
    ['zh-CN', 390, '天气查询乙'],
    ['en', 360, '天气查询丙'],
  ] as const) {
    test(`in the create dialog, after creation and in the edit dialog (${lang}, ${width} px)`, async ({ page, signedIn }) => {
      expect(signedIn.user.role).toBe(100);
      const l = TEXT[lang];
      await inLanguage(page, lang);
      await page.setViewportSize({ width, height: 900 });
      await page.goto('/services');
      await page.getByRole('button', { name: l.add }).click();
      await page.getByRole('menuitem', { name: l.custom }).click();
      const dialog = page.getByRole('dialog', { name: l.custom });
      const nameField = dialog.getByLabel(l.name, { exact: true });
      await nameField.fill(name);
      await dialog.getByLabel(l.type, { exact: true }).selectOption('streamableHttp');
      await dialog.getByLabel(l.url, { exact: true }).fill('http://127.0.0.1:9/mcp');
      // Before anything is sent, the field says the name will be the display name, and where the endpoint's comes from.
      await expect(nameField).toHaveAccessibleDescription(l.hint(name));

      const answered = page.waitForResponse((res) => res.url().endsWith('/api/mcp_market/custom_service'));
      await dialog.getByRole('button', { name: l.submit, exact: true }).click();
      const result = (await (await answered).json()).data as { name: string; endpoint_name_derived: boolean };
      created.push(result.name);
      expect(result.endpoint_name_derived).toBe(true);
      expect(result.name).toMatch(/^127-0-0-1/);
      await expect(toast(page, l.created(result.name, name))).toBeVisible();

      // The card shows the endpoint name under the display name; Edit says where it came from.
      const card = page.getByRole('group', { name });
      await expect(card).toContainText(result.name);
      await card.getByRole('button', { name: l.edit(name) }).click();
      const edit = page.getByRole('dialog', { name: l.editTitle });
      const endpoint = edit.getByLabel(l.endpoint, { exact: true });
      await expect(endpoint).toHaveValue(result.name);
      await expect(endpoint).toHaveAccessibleDescription(l.editHint(result.name, name));
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      expect(overflow).toBeLessThanOrEqual(0);
    });
  }
});
