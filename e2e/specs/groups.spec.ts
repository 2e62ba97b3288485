import { collectConsoleErrors, expectNoRawKeys } from '../support/console-checks';
import { baseUrl, expect, test } from '../support/fixtures';
import { accessToken, installEverything, uninstallNamed } from '../support/services-api';
import { expectChineseOnly } from '../support/zh-text-check';

const FIRST = 'e2e-group-everything-a';
const SECOND = 'e2e-group-everything-b';
const GROUP = 'e2e-group';
const DISCOVERY = 'e2e-group-discovery';
const ALLOWED = ['Claude Code', 'Cherry Studio', 'VS Code'];

async function deleteGroupNamed(request: import('@playwright/test').APIRequestContext, token: string): Promise<void> {
  const headers = { Authorization: `Bearer ${token}` };
  const list = (await (await request.get('/api/groups', { headers })).json()) as { data: { id: number; name: string }[] };
  for (const g of list.data) if (g.name === GROUP || g.name === DISCOVERY) await request.delete(`/api/groups/${g.id}`, { headers });
}

test.describe('Groups page (docs/console.md §2.9b)', () => {
  test.setTimeout(120_000);

  test.beforeAll(async ({ playwright, baseURL }) => {
    const request = await playwright.request.newContext({ baseURL });
    const admin = await accessToken(request);
    await deleteGroupNamed(request, admin);
    await uninstallNamed(request, admin, [FIRST, SECOND]);
    await installEverything(request, admin, FIRST);
    await installEverything(request, admin, SECOND);
    await request.dispose();
  });

  test.afterAll(async ({ playwright, baseURL }) => {
    const request = await playwright.request.newContext({ baseURL });
    const admin = await accessToken(request);
    await deleteGroupNamed(request, admin);
    await uninstallNamed(request, admin, [FIRST, SECOND]);
    await request.dispose();
  });

  test('an admin creates a group of two services with a subset of tools, copies its config, and reads it in Chinese', async ({
    page,
    context,
    request,
    signedIn,
  }) => {
    const consoleErrors = collectConsoleErrors(page);
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: baseUrl() });
    await page.goto('/groups');
    await expect(page.getByRole('heading', { name: 'Groups', level: 1 })).toBeVisible();
    await expect(page.getByRole('navigation').getByRole('link', { name: 'Groups' }).first()).toBeVisible();

    await page.getByRole('button', { name: 'New group' }).click();
    const dialog = page.getByRole('dialog', { name: 'New group' });
    await dialog.getByLabel('Name', { exact: true }).fill(GROUP);
    await dialog.getByRole('checkbox', { name: FIRST, exact: true }).check();
    await dialog.getByRole('checkbox', { name: SECOND, exact: true }).check();
    // Only echo of the first service: "all tools" off starts from every listed tool, then the rest go.
    await dialog.getByRole('checkbox', { name: 'All tools, including tools it gains later' }).first().uncheck();
    const picker = dialog.getByRole('group', { name: FIRST, exact: true });
    await expect(picker.getByRole('checkbox', { name: 'echo', exact: true })).toBeChecked();
    for (const box of await picker.getByRole('checkbox').all()) {
      if ((await box.getAttribute('id'))?.endsWith('-echo')) continue;
      await box.uncheck();
    }
    await dialog.getByRole('button', { name: 'Create' }).click();
    await expect(dialog).toBeHidden();

    // What the page showed is what the server keeps.
    const headers = { Authorization: `Bearer ${await accessToken(request)}` };
    const groups = (await (await request.get('/api/groups', { headers })).json()).data as {
      name: string;
      members: { service_id: number; tools?: string[] }[];
    }[];
    const saved = groups.find((g) => g.name === GROUP);
    expect(saved?.members).toHaveLength(2);
    expect(saved?.members[0]?.tools).toEqual(['echo']);
    expect(saved?.members[1]?.tools).toBeUndefined();

    const row = page.getByTestId('group-row').filter({ hasText: GROUP });
    await expect(row).toContainText('1 tool');
    await expect(row).toContainText('all tools');
    await row.getByRole('button', { name: 'Configure' }).click();
    const config = page.getByRole('dialog');
    await expect(config.getByLabel('Endpoint URL')).toHaveValue(new RegExp(`/group/${GROUP}/mcp$`));
    await config.getByRole('button', { name: 'Copy JSON' }).click();
    await expect(config.getByRole('button', { name: 'Copied' })).toBeVisible();
    const copied = JSON.parse(await page.evaluate(() => navigator.clipboard.readText())) as {
      mcpServers: Record<string, { url: string; headers?: { Authorization: string } }>;
    };
    expect(copied.mcpServers[GROUP]?.url).toMatch(new RegExp(`/group/${GROUP}/mcp$`));
    expect(copied.mcpServers[GROUP]?.headers?.Authorization).toMatch(/^Bearer /);
    await expectNoRawKeys(page);
    await page.keyboard.press('Escape');

    await page.evaluate(() => localStorage.setItem('i18nextLng', 'zh-CN'));
    await page.reload();
    await expect(page.getByRole('heading', { name: '分组', level: 1 })).toBeVisible();
    await expect(page.getByTestId('group-row').filter({ hasText: GROUP })).toContainText('全部工具');
    await expectChineseOnly(page, ['common', 'groups'], ALLOWED);
    await expectNoRawKeys(page);
    await page.getByRole('button', { name: '新建分组' }).click();
    await expect(page.getByRole('dialog', { name: '新建分组' })).toBeVisible();
    await expectChineseOnly(page, ['common', 'groups'], ALLOWED);
    await expectNoRawKeys(page);
    expect(signedIn.user.role).toBeGreaterThanOrEqual(10);
    expect(consoleErrors).toEqual([]);
  });

  test('an admin makes a discovery group: two tools, search and call, chosen in the dialog and kept on edit', async ({
    page,
    request,
    signedIn,
  }) => {
    const consoleErrors = collectConsoleErrors(page);
    await page.goto('/groups');
    await page.getByRole('button', { name: 'New group' }).click();
    const dialog = page.getByRole('dialog', { name: 'New group' });
    await expect(dialog.getByRole('radio', { name: 'All tools' })).toBeChecked();
    await dialog.getByLabel('Name', { exact: true }).fill(DISCOVERY);
    await dialog.getByRole('radio', { name: 'Discovery: two tools, search and call' }).click();
    await dialog.getByRole('checkbox', { name: FIRST, exact: true }).check();
    await dialog.getByRole('button', { name: 'Create' }).click();
    await expect(dialog).toBeHidden();

    const headers = { Authorization: `Bearer ${await accessToken(request)}` };
    const groups = (await (await request.get('/api/groups', { headers })).json()).data as { name: string; mode: string }[];
    expect(groups.find((g) => g.name === DISCOVERY)?.mode).toBe('discovery');
    const row = page.getByTestId('group-row').filter({ hasText: DISCOVERY });
    await expect(row.getByTestId('group-mode')).toHaveText('Discovery');

    await page.evaluate(() => localStorage.setItem('i18nextLng', 'zh-CN'));
    await page.reload();
    await page.getByTestId('group-row').filter({ hasText: DISCOVERY }).getByRole('button', { name: '编辑' }).click();
    const edit = page.getByRole('dialog', { name: '编辑分组' });
    await expect(edit.getByRole('radio', { name: '发现模式：两个工具，搜索和调用' })).toBeChecked();
    await expectChineseOnly(page, ['common', 'groups'], ALLOWED);
    await expectNoRawKeys(page);
    await edit.getByRole('button', { name: '保存' }).click();
    await expect(edit).toBeHidden();
    const after = (await (await request.get('/api/groups', { headers })).json()).data as { name: string; mode: string }[];
    expect(after.find((g) => g.name === DISCOVERY)?.mode).toBe('discovery');
    expect(signedIn.user.role).toBeGreaterThanOrEqual(10);
    expect(consoleErrors).toEqual([]);
  });
});
