import { readFileSync } from 'node:fs';
import type { Page } from '@playwright/test';
import { collectConsoleErrors, expectNoRawKeys } from '../support/console-checks';
import { baseUrl, expect, test } from '../support/fixtures';
import { accessToken } from '../support/services-api';
import { expectChineseOnly } from '../support/zh-text-check';

/**
 * The Audit screen against the real server: a user created and disabled through the admin API and a refused
 * sign-in of that user are found by actor and by object, in English and in Chinese; the change is shown with
 * its password masked, and the export is the same entries as JSON lines.
 */

const tag = Math.random().toString(36).slice(2, 8);
const PLANTED = `e2e-audit-secret-${tag}`;
let username: string;
let userId: number;

test.beforeAll(async ({ playwright }) => {
  const request = await playwright.request.newContext({ baseURL: baseUrl(), extraHTTPHeaders: { 'X-Forwarded-For': '10.77.0.9' } });
  const headers = { authorization: `Bearer ${await accessToken(request)}` };
  username = `audited-${tag}`;
  const made = await request.post('/api/user', { headers, data: { username, password: `${PLANTED}-password`, display_name: 'Audited' } });
  expect(made.status(), await made.text()).toBe(201);
  userId = (await made.json()).data.id;
  const disabled = await request.post('/api/user/manage', { headers, data: { username, action: 'disable' } });
  expect(disabled.status()).toBe(200);
  const refused = await request.post('/api/auth/login', { data: { username, password: `${PLANTED}-wrong` } });
  expect(refused.status()).toBeGreaterThanOrEqual(400);
  await request.dispose();
});

const rows = (page: Page) => page.getByTestId('audit-row');

async function search(page: Page, filters: { actor?: string; object?: string; objectId?: string }, labels = EN): Promise<void> {
  await page.getByLabel(labels.actor, { exact: true }).fill(filters.actor ?? '');
  await page.getByLabel(labels.object, { exact: true }).selectOption(filters.object ?? 'all');
  await page.getByLabel(labels.objectId, { exact: true }).fill(filters.objectId ?? '');
  await page.getByRole('button', { name: labels.search }).click();
}

const EN = { actor: 'Actor', object: 'Object', objectId: 'Object ID', search: 'Search' };
const ZH = { actor: '操作者', object: '对象', objectId: '对象 ID', search: '搜索' };

test.describe('audit: who changed what', () => {
  test('finds the changes to a user and its refused sign-in, masked, and exports them', async ({ page, signedIn }) => {
    expect(signedIn.user.role).toBeGreaterThanOrEqual(10);
    const consoleErrors = collectConsoleErrors(page);
    await page.goto('/dashboard');
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Audit' }).click();
    await expect(page.getByRole('heading', { name: 'Audit', level: 1 })).toBeVisible();
    await expect(page).toHaveURL(/\/audit$/);

    // By object: the two changes the admin made, newest first.
    await search(page, { object: 'user', objectId: String(userId) });
    await expect(page).toHaveURL(new RegExp(`\\?object_type=user&object_id=${userId}$`));
    await expect(rows(page)).toHaveCount(2);
    await expect(rows(page).getByTestId('audit-action')).toHaveText(['Disable', 'Create']);
    await expect(rows(page).getByTestId('audit-actor')).toHaveText(['root', 'root']);
    await expect(page.getByTestId('logs-showing')).toHaveText('Showing 1 to 2 of 2');
    const created = rows(page).nth(1);
    await created.locator('summary').click();
    const change = JSON.parse((await created.getByTestId('audit-change').textContent()) ?? '{}');
    expect(change).toMatchObject({ body: { username, password: '********', display_name: 'Audited' } });

    // By actor: the refused sign-in names the account it tried.
    await search(page, { actor: username });
    await expect(rows(page)).toHaveCount(1);
    const refused = rows(page).first();
    await expect(refused.getByTestId('audit-action')).toHaveText('Sign in');
    await expect(refused.locator('[data-outcome]')).toHaveText('Refused');
    await expect(refused).toContainText('Not signed in');
    await expect(refused).not.toContainText(PLANTED);

    // The export: the filtered entries as JSON lines, no secret in them.
    await search(page, { object: 'user', objectId: String(userId) });
    await expect(rows(page)).toHaveCount(2);
    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Export JSON lines' }).click();
    const file = await (await download).path();
    const text = readFileSync(file, 'utf8');
    const lines = text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { action: string; object_id: string });
    expect(lines.map((l) => [l.action, l.object_id])).toEqual([
      ['create', String(userId)],
      ['disable', String(userId)],
    ]);
    expect(text).not.toContain(PLANTED);
    expect(consoleErrors).toEqual([]);
  });

  test('在中文界面中按操作者和对象筛选，无英文、无原始键', async ({ page, signedIn }) => {
    expect(signedIn.user.role).toBeGreaterThanOrEqual(10);
    const consoleErrors = collectConsoleErrors(page);
    await page.addInitScript(() => localStorage.setItem('i18nextLng', 'zh-CN'));
    await page.goto('/audit');
    await expect(page.getByRole('heading', { name: '审计', level: 1 })).toBeVisible();
    await expect(page.getByRole('navigation', { name: '页面' }).getByRole('link', { name: '审计' })).toHaveAttribute(
      'aria-current',
      'page',
    );

    await search(page, { object: 'user', objectId: String(userId) }, ZH);
    await expect(rows(page)).toHaveCount(2);
    await expect(rows(page).getByTestId('audit-action')).toHaveText(['禁用', '创建']);
    await expect(rows(page).getByTestId('audit-object')).toHaveText(['用户', '用户']);
    await expect(page.getByRole('columnheader', { name: '变更' })).toBeVisible();
    await expectChineseOnly(page, ['common', 'audit'], ['Toolport']);
    await expectNoRawKeys(page);

    await search(page, { actor: username }, ZH);
    await expect(rows(page)).toHaveCount(1);
    await expect(rows(page).first().locator('[data-outcome]')).toHaveText('已拒绝');
    await expect(rows(page).first()).toContainText('未登录');

    // Nothing matches: said in Chinese.
    await search(page, { actor: `${username}-nobody` }, ZH);
    await expect(page.getByText('没有审计记录')).toBeVisible();
    await expectChineseOnly(page, ['common', 'audit'], ['Toolport']);
    expect(consoleErrors).toEqual([]);
  });
});
