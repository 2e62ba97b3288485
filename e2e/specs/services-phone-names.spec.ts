import type { APIRequestContext, Page } from '@playwright/test';
import { expect, test } from '../support/fixtures';
import { expectNoSidewaysScroll, expectOnScreen, isCard } from '../support/phone-fit';
import { accessToken, serviceNamed, uninstallNamed } from '../support/services-api';

/**
 * Issue 29, item 1: the Services page on a phone with real names. A scoped package's display name and a long
 * Chinese one made the one-column grid (which had no template) as wide as the longest title, so every card's
 * switch and buttons and every dialog opened from the page went past the screen's edge.
 */

/** Port 9 (discard) on loopback: nothing listens, so each service is created at once (and stays unhealthy). */
const DEAD_URL = 'http://127.0.0.1:9/mcp';
const SERVICES = [
  { name: 'e2e-phone-scoped', display: '@modelcontextprotocol/server-memory' },
  { name: 'e2e-phone-chinese', display: '企业知识库检索与文档管理服务（测试环境）' },
];
const GROUP = 'e2e-phone-group';

const TEXT = {
  en: {
    configure: 'Configure',
    tools: (n: string) => `Tools of ${n}`,
    edit: (n: string) => `Edit ${n}`,
    uninstall: (n: string) => `Uninstall ${n}`,
    enable: (n: string) => `Enable ${n}`,
    close: 'Close',
    list: 'List view',
  },
  'zh-CN': {
    configure: '配置',
    tools: (n: string) => `${n} 的工具`,
    edit: (n: string) => `编辑 ${n}`,
    uninstall: (n: string) => `卸载 ${n}`,
    enable: (n: string) => `启用 ${n}`,
    close: '关闭',
    list: '列表视图',
  },
} as const;

async function removeFixtures(request: APIRequestContext, token: string): Promise<void> {
  const headers = { Authorization: `Bearer ${token}` };
  const groups = (await (await request.get('/api/groups', { headers })).json()) as { data: { id: number; name: string }[] };
  for (const g of groups.data) if (g.name === GROUP) await request.delete(`/api/groups/${g.id}`, { headers });
  await uninstallNamed(
    request,
    token,
    SERVICES.map((s) => s.name),
  );
}

async function expectDialogFits(page: Page, width: number, close: string, what: string): Promise<void> {
  const dialog = page.getByRole('dialog');
  await expect(dialog, what).toBeVisible();
  const box = await dialog.boundingBox();
  expect(box && box.x >= 0 && box.x + box.width <= width, `${what}: dialog box ${JSON.stringify(box)}`).toBe(true);
  expect(await dialog.evaluate((el) => el.scrollWidth - el.clientWidth), `${what} scrolls sideways`).toBeLessThanOrEqual(0);
  // The X in the corner (every dialog has one); some have a Close button in the footer too.
  const closers = dialog.getByRole('button', { name: close, exact: true });
  await expect(closers.first()).toBeVisible();
  for (const closer of await closers.filter({ visible: true }).all()) await expectOnScreen(closer, width, `${what}: ${close}`);
  await expectNoSidewaysScroll(page, what);
  await page.keyboard.press('Escape');
  await expect(dialog).toBeHidden();
}

test.describe('the Services page with long scoped and Chinese names', () => {
  test.setTimeout(180_000);

  test.beforeAll(async ({ playwright, baseURL }) => {
    const request = await playwright.request.newContext({ baseURL });
    const token = await accessToken(request);
    const headers = { Authorization: `Bearer ${token}` };
    await removeFixtures(request, token);
    const ids: number[] = [];
    for (const { name, display } of SERVICES) {
      const made = await request.post('/api/mcp_market/custom_service', {
        headers,
        data: { name, type: 'streamableHttp', url: DEAD_URL, command: '', description: '' },
      });
      expect(made.status(), await made.text()).toBe(201);
      const row = await serviceNamed(request, token, name);
      if (!row) throw new Error(`${name} is not in the installed list`);
      const renamed = await request.put(`/api/mcp_services/${row.id}`, { headers, data: { display_name: display } });
      expect(renamed.ok(), await renamed.text()).toBe(true);
      ids.push(row.id);
    }
    const group = await request.post('/api/groups', {
      headers,
      data: { name: GROUP, display_name: '企业知识库检索与文档管理服务组（测试环境）', members: ids.map((service_id) => ({ service_id })) },
    });
    expect(group.ok(), await group.text()).toBe(true);
    await request.dispose();
  });

  test.afterAll(async ({ playwright, baseURL }) => {
    const request = await playwright.request.newContext({ baseURL });
    await removeFixtures(request, await accessToken(request));
    await request.dispose();
  });

  for (const lang of ['en', 'zh-CN'] as const) {
    for (const width of [1440, 390, 360]) {
      test(`${lang} at ${width} px: nothing scrolls sideways, every card's controls and dialogs are on screen`, async ({
        page,
        signedIn,
      }) => {
        expect(signedIn.user.role).toBe(100);
        const text = TEXT[lang];
        if (lang === 'zh-CN') await page.addInitScript(() => localStorage.setItem('i18nextLng', 'zh-CN'));
        await page.setViewportSize({ width, height: 900 });
        await page.goto('/services');

        for (const { display } of SERVICES) {
          const card = page.getByRole('group', { name: display, exact: true });
          await expect(card).toBeVisible();
          await expectNoSidewaysScroll(page, `/services with ${display}`);
          await expectOnScreen(card.getByRole('switch', { name: text.enable(display) }), width, `switch of ${display}`);
          await expectOnScreen(card.getByRole('button', { name: text.edit(display) }), width, `edit of ${display}`);
          await expectOnScreen(card.getByRole('button', { name: text.uninstall(display) }), width, `uninstall of ${display}`);

          await card.getByRole('button', { name: text.configure, exact: true }).click();
          await expectDialogFits(page, width, text.close, `Configure ${display}`);
          await card.getByRole('button', { name: text.tools(display) }).click();
          await expectDialogFits(page, width, text.close, `Tools of ${display}`);
          await card.getByRole('button', { name: text.edit(display) }).click();
          await expectDialogFits(page, width, text.close, `Edit ${display}`);
        }

        // The list view: a table on a wide screen, one card per service on a phone, its controls on screen.
        await page.getByRole('button', { name: text.list }).click();
        const rows = page.getByTestId('service-row');
        await expect(rows.first()).toBeVisible();
        await expectNoSidewaysScroll(page, '/services, list view');
        for (const { display } of SERVICES) {
          const row = rows.filter({ has: page.getByRole('switch', { name: text.enable(display) }) });
          expect(await isCard(row), `the row of ${display} is a card`).toBe(width < 1000);
          await expectOnScreen(row.getByRole('switch', { name: text.enable(display) }), width, `list switch of ${display}`);
          await expectOnScreen(row.getByRole('button', { name: text.edit(display) }), width, `list edit of ${display}`);
          await expectOnScreen(row.getByRole('button', { name: text.uninstall(display) }), width, `list uninstall of ${display}`);
        }

        await page.goto('/groups');
        const group = page.getByTestId('group-row').filter({ hasText: '/group/e2e-phone-group/mcp' });
        await expect(group).toBeVisible();
        await expectNoSidewaysScroll(page, '/groups');
        expect(await isCard(group), 'the group row is a card').toBe(width < 1000);
        for (const button of await group.getByRole('button').all())
          await expectOnScreen(button, width, `group ${await button.innerText()}`);
      });
    }
  }
});
