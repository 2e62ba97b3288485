import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { APIRequestContext, Browser, Page } from '@playwright/test';
import { createUser } from '../support/console-users';
import { baseUrl, expect, signIn, test } from '../support/fixtures';
import { accessToken, installEverything, serviceNamed, setDailyLimit, uninstallNamed } from '../support/services-api';
import { toast } from '../support/toasts';

/**
 * Issue 14's console parts in Chromium against the real server: the personal switch of a role-1 user
 * (and what admins see of it), usage shown right after calls, isolation in the create and edit dialogs,
 * and the idle time of on-demand processes in Preferences. Text is checked in English and Chinese.
 */
const NAME = 'e2e-issue14-everything';
const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

/** The user's own API key, as the console's token page reads it. */
async function apiKeyOf(request: APIRequestContext, username: string, password: string): Promise<string> {
  const token = await accessToken(request, username, password);
  const res = await request.get('/api/user/token', { headers: bearer(token) });
  expect(res.status()).toBe(200);
  return (await res.json()).data as string;
}

/** One `echo` through the gateway with a real MCP client; the error text when the gateway refuses. */
async function echoThrough(key: string, message: string): Promise<string> {
  const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl()}/proxy/${NAME}/mcp`), { requestInit: { headers: bearer(key) } });
  const client = new Client({ name: 'e2e-issue14', version: '1.0.0' });
  try {
    await client.connect(transport);
    const result = await client.callTool({ name: 'echo', arguments: { message } });
    return (result.content as { text?: string }[]).map((c) => c.text ?? '').join('');
  } catch (err) {
    return `refused: ${String(err)}`;
  } finally {
    await client.close().catch(() => undefined);
  }
}

const inChinese = (page: Page) => page.addInitScript(() => localStorage.setItem('i18nextLng', 'zh-CN'));
/** A second tab with a browser context of its own (another signed-in user, or another language). */
const newPage = async (browser: Browser) => (await browser.newContext({ baseURL: baseUrl() })).newPage();

test.describe('issue 14 in the console', () => {
  test.describe.configure({ mode: 'serial' });
  test.setTimeout(120_000);
  let serviceId = 0;
  let user = { username: '', password: '' };

  test.beforeAll(async ({ playwright }) => {
    const request = await playwright.request.newContext({ baseURL: baseUrl() });
    const admin = await accessToken(request);
    await uninstallNamed(request, admin, [NAME]);
    serviceId = (await installEverything(request, admin, NAME)).id;
    user = await createUser(request, 'e2e-i14');
    await request.dispose();
  });
  test.afterAll(async ({ playwright }) => {
    const request = await playwright.request.newContext({ baseURL: baseUrl() });
    const admin = await accessToken(request);
    await uninstallNamed(request, admin, [NAME]);
    await request.dispose();
  });

  test('a role-1 user switches the service off for themselves: Inactive tab, proxy refused; admins see who', async ({
    browser,
    request,
  }) => {
    const key = await apiKeyOf(request, user.username, user.password);
    expect(await echoThrough(key, 'before')).toBe('Echo: before');

    const page = await newPage(browser);
    await signIn(page, user.username, user.password);
    await page.goto('/services');
    const card = page.getByRole('group', { name: NAME });
    const toggle = card.getByRole('switch', { name: `Enable ${NAME}` });
    await expect(toggle).toBeChecked();
    await toggle.click();
    await expect(toggle).not.toBeChecked();
    await page.getByRole('tab', { name: /Inactive/ }).click();
    await expect(page.getByRole('group', { name: NAME })).toBeVisible();
    await page.getByRole('tab', { name: /^Active/ }).click();
    await expect(page.getByRole('group', { name: NAME })).toBeHidden();
    expect(await echoThrough(key, 'while off')).toMatch(/switched off for you/);

    // Admins: still on for everyone, with the user named, in both languages.
    const admin = await newPage(browser);
    await signIn(admin);
    await admin.goto('/services');
    const adminCard = admin.getByRole('group', { name: NAME });
    await expect(adminCard.getByRole('switch', { name: `Enable ${NAME}` })).toBeChecked();
    await expect(adminCard).toContainText(`Switched off by 1 user for themselves: ${user.username}`);
    const zh = await newPage(browser);
    await inChinese(zh);
    await signIn(zh);
    await zh.goto('/services');
    await expect(zh.getByRole('group', { name: NAME })).toContainText(`1 位用户已为自己停用：${user.username}`);

    // On again: the user's calls go through.
    await page.getByRole('tab', { name: /Inactive/ }).click();
    await page
      .getByRole('group', { name: NAME })
      .getByRole('switch', { name: `Enable ${NAME}` })
      .click();
    // On again for them, so it leaves the Inactive tab for the Active one.
    await expect(page.getByRole('group', { name: NAME })).toBeHidden();
    await page.getByRole('tab', { name: /^Active/ }).click();
    await expect(page.getByRole('group', { name: NAME }).getByRole('switch', { name: `Enable ${NAME}` })).toBeChecked();
    expect(await echoThrough(key, 'after')).toBe('Echo: after');
    await Promise.all([page.close(), admin.close(), zh.close()]);
  });

  test('the installed list shows used and remaining right after calls, without waiting for a flush', async ({ page, request }) => {
    const admin = await accessToken(request);
    await setDailyLimit(request, admin, serviceId, 5);
    try {
      const key = await apiKeyOf(request, user.username, user.password);
      const usedBefore = (await serviceNamed(request, await accessToken(request, user.username, user.password), NAME))
        ?.user_daily_request_count;
      expect(usedBefore).toBeDefined();
      for (const m of ['one', 'two']) expect(await echoThrough(key, m)).toBe(`Echo: ${m}`);
      const used = (usedBefore ?? 0) + 2;
      await signIn(page, user.username, user.password);
      // One load, right after the calls: no reload loop.
      await page.goto('/services');
      const bar = page.getByRole('group', { name: NAME }).getByTestId('usage-bar');
      await expect(bar.getByTestId('usage-count')).toHaveText(`${used} / 5`);
      await expect(bar).toContainText(`${5 - used} request${5 - used === 1 ? '' : 's'} remaining`);
    } finally {
      await setDailyLimit(request, admin, serviceId, 0);
    }
  });

  test('isolation is offered in the custom install and edit dialogs with the per-user cap, in both languages', async ({
    page,
    browser,
    request,
  }) => {
    await signIn(page);
    await page.goto('/services');
    await page.getByRole('button', { name: 'Add Service' }).click();
    await page.getByRole('menuitem', { name: 'Custom Install' }).click();
    const create = page.getByRole('dialog', { name: 'Custom Install' });
    await expect(create.getByLabel('Isolation')).toBeHidden();
    await create.getByLabel('Type').selectOption('stdio');
    await expect(create.getByLabel('Isolation')).toHaveValue('shared');
    await expect(create.getByText('each user may run at most 10 such processes per service')).toBeVisible();
    await create.getByRole('button', { name: 'Cancel' }).click();

    await page.getByRole('button', { name: `Edit ${NAME}` }).click();
    const edit = page.getByRole('dialog', { name: 'Edit Service' });
    await expect(edit.getByLabel('Isolation')).toHaveValue('shared');
    await edit.getByLabel('Isolation').selectOption('session');
    await edit.getByRole('button', { name: 'Save' }).click();
    await expect(toast(page, 'Update Successful')).toBeVisible();
    const admin = await accessToken(request);
    await expect
      .poll(async () => (await serviceNamed(request, admin, NAME)) as unknown as { isolation: string })
      .toMatchObject({
        isolation: 'session',
      });

    const zh = await newPage(browser);
    await inChinese(zh);
    await signIn(zh);
    await zh.goto('/services');
    await zh.getByRole('button', { name: `编辑 ${NAME}` }).click();
    const zhEdit = zh.getByRole('dialog', { name: '编辑服务' });
    await expect(zhEdit.getByLabel('隔离方式')).toHaveValue('session');
    await expect(zhEdit.getByText('每个用户每个服务最多运行 10 个此类进程')).toBeVisible();
    await zhEdit.getByLabel('隔离方式').selectOption('shared');
    await zhEdit.getByRole('button', { name: '保存' }).click();
    await expect
      .poll(async () => (await serviceNamed(request, admin, NAME)) as unknown as { isolation: string })
      .toMatchObject({
        isolation: 'shared',
      });
    await zh.close();
  });

  test('the idle time of on-demand processes is set in Preferences, checked, and kept, in both languages', async ({
    page,
    browser,
    request,
  }) => {
    const admin = await accessToken(request);
    const idleOption = async () => {
      const res = await request.get('/api/option/', { headers: bearer(admin) });
      const options = (await res.json()).data as { key: string; value: string }[];
      return options.find((o) => o.key === 'StdioIdleTimeoutMinutes')?.value ?? '10';
    };
    const saved = await idleOption();
    try {
      await signIn(page);
      await page.goto('/preferences');
      const field = page.getByLabel('Stop an on-demand process after (minutes without calls)');
      // The screen loads every preference first (slow on a busy machine).
      await expect(field).toHaveValue(saved, { timeout: 20_000 });
      await expect(page.getByText('Open sessions and health checks do not count as calls.')).toBeVisible();
      await field.fill('0');
      await field.press('Enter');
      await expect(page.getByText('Enter a whole number of minutes from 1 to 1440.')).toBeVisible();
      expect(await idleOption()).toBe(saved);
      await field.fill('7');
      await field.press('Enter');
      await expect(toast(page, 'On-demand processes now stop after 7 minutes without calls.')).toBeVisible();
      await expect.poll(idleOption).toBe('7');
      await page.reload();
      await expect(page.getByLabel('Stop an on-demand process after (minutes without calls)')).toHaveValue('7');

      const zh = await newPage(browser);
      await inChinese(zh);
      await signIn(zh);
      await zh.goto('/preferences');
      const zhField = zh.getByLabel('按需启动的进程在无调用多少分钟后停止');
      await expect(zhField).toHaveValue('7', { timeout: 20_000 });
      await zhField.fill('abc');
      await zhField.press('Enter');
      await expect(zh.getByText('请输入 1 到 1440 之间的整数分钟数。')).toBeVisible();
      await zhField.fill('1');
      await zhField.press('Enter');
      await expect(toast(zh, '按需启动的进程现在在 1 分钟无调用后停止。')).toBeVisible();
      await expect.poll(idleOption).toBe('1');
      await zh.close();
    } finally {
      await request.put('/api/option/', { headers: bearer(admin), data: { key: 'StdioIdleTimeoutMinutes', value: saved } });
    }
  });
});
