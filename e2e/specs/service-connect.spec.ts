import type { APIRequestContext, Page } from '@playwright/test';
import { type OAuthMcpServer, startOAuthMcpServer } from '../../apps/server/test/fixtures/oauth-mcp-server';
import { collectConsoleErrors, expectNoRawKeys } from '../support/console-checks';
import { createUser } from '../support/console-users';
import { expect, signIn, test } from '../support/fixtures';
import { accessToken, serviceNamed, uninstallNamed } from '../support/services-api';

/**
 * Issue 29, item 2: a remote service that needs OAuth says so on its card, its list row and its phone card, with
 * Connect right there (admins for a shared connection, each user for a per-user one); after the provider sends the
 * browser back, the card shows the new health and the real tool count by itself.
 */

const SHARED = 'e2e-connect-shared';
const PER_USER = 'e2e-connect-per-user';

const text = {
  en: {
    needs: 'Needs authorization: connect its account to use it',
    needsAdmin: 'Needs authorization: an administrator must connect its account',
    needsMine: 'Needs your authorization: connect your own account to use it',
    connect: 'Connect',
    connected: (name: string) => `${name} is connected. Calls through Toolport now use this account.`,
    back: 'Back to services',
    oneTool: /^1 tool, answered in \d+ ms/,
    threeTools: /^3 tools, answered in \d+ ms/,
    listView: 'List view',
    title: 'Service authorization · Toolport',
  },
  'zh-CN': {
    needs: '需要授权：连接其账号后即可使用',
    needsAdmin: '需要授权：需由管理员连接其账号',
    needsMine: '需要你的授权：连接你自己的账号后即可使用',
    connect: '连接',
    connected: (name: string) => `${name} 已连接。通过 Toolport 的调用现在使用此账号。`,
    back: '返回服务列表',
    oneTool: /^1 个工具，响应用时 \d+ 毫秒/,
    threeTools: /^3 个工具，响应用时 \d+ 毫秒/,
    listView: '列表视图',
    title: '服务授权 · Toolport',
  },
} as const;
type Lang = keyof typeof text;

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

async function createRemote(request: APIRequestContext, admin: string, name: string, url: string): Promise<number> {
  const created = await request.post('/api/mcp_market/custom_service', {
    headers: bearer(admin),
    data: { name, type: 'streamableHttp', url },
  });
  expect(created.status(), await created.text()).toBe(201);
  const row = await serviceNamed(request, admin, name);
  if (!row) throw new Error(`${name} was not created`);
  return row.id;
}

/** Forgets the shared connection and checks again, so the service needs authorization once more. */
async function needAuthorizationAgain(request: APIRequestContext, admin: string, id: number): Promise<void> {
  await request.post(`/api/mcp_services/${id}/oauth/disconnect`, { headers: bearer(admin) });
  await expect
    .poll(
      async () => {
        const checked = await request.post(`/api/mcp_services/${id}/health/check`, { headers: bearer(admin) });
        return (await checked.json()).data?.health_status;
      },
      { timeout: 20_000 },
    )
    .toBe('needs_authorization');
}

const inLanguage = (page: Page, lang: Lang) => page.addInitScript((l) => localStorage.setItem('i18nextLng', l), lang);

/** The health line of the service's card in the grid, or of its row in the list view. */
const cardOf = (page: Page, name: string) => page.getByRole('group', { name });
const rowOf = (page: Page, name: string) => page.getByTestId('service-row').filter({ hasText: name });

async function expectNoSidewaysScroll(page: Page): Promise<void> {
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  expect(width).toBeLessThanOrEqual(page.viewportSize()?.width ?? 0);
}

test.describe('Connect on the card of a service that needs authorization', () => {
  test.describe.configure({ mode: 'serial' });
  test.setTimeout(120_000);
  let upstream: OAuthMcpServer;
  let sharedId = 0;

  test.beforeAll(async ({ playwright, baseURL }) => {
    upstream = await startOAuthMcpServer();
    const request = await playwright.request.newContext({ baseURL });
    const admin = await accessToken(request);
    await uninstallNamed(request, admin, [SHARED, PER_USER]);
    sharedId = await createRemote(request, admin, SHARED, upstream.mcpUrl);
    // The first check meets the 401 and discovers the provider: the service needs authorization.
    await expect
      .poll(
        async () =>
          (await (await request.post(`/api/mcp_services/${sharedId}/health/check`, { headers: bearer(admin) })).json()).data?.health_status,
        {
          timeout: 20_000,
        },
      )
      .toBe('needs_authorization');
    await request.dispose();
  });

  test.afterAll(async ({ playwright, baseURL }) => {
    const request = await playwright.request.newContext({ baseURL });
    await uninstallNamed(request, await accessToken(request), [SHARED, PER_USER]);
    await request.dispose();
    await upstream?.close();
  });

  for (const [lang, width] of [
    ['en', 1440],
    ['zh-CN', 390],
    ['en', 360],
  ] as const) {
    test(`an admin connects from the card; the card shows the real tool count by itself (${lang}, ${width} px)`, async ({
      page,
      request,
      signedIn,
    }) => {
      const words = text[lang];
      await needAuthorizationAgain(request, signedIn.token, sharedId);
      const consoleErrors = collectConsoleErrors(page);
      await inLanguage(page, lang);
      await page.setViewportSize({ width, height: 900 });
      await page.goto('/services');

      const card = cardOf(page, SHARED);
      const reason = card.getByTestId('health-reason');
      await expect(reason).toContainText(words.needs);
      await expect(card.locator('[data-health="needs_authorization"]')).toBeVisible();
      // The card says it in the console's words, never the upstream's 401 body.
      await expect(card).not.toContainText('invalid_token');
      const connect = reason.getByRole('button', { name: `${words.connect} ${SHARED}` });
      await expect(connect).toBeVisible();
      // Other specs share this server's service list, so the card may be below the fold: on screen once scrolled to,
      // that is, not cut off at the side.
      await connect.scrollIntoViewIfNeeded();
      await expect(connect).toBeInViewport();
      await expectNoSidewaysScroll(page);

      // The list view's row (a card of its own on a phone) says the same, with the same Connect.
      await page.getByRole('button', { name: words.listView }).click();
      const row = rowOf(page, SHARED);
      await expect(row.getByTestId('health-reason')).toContainText(words.needs);
      await row.getByRole('button', { name: `${words.connect} ${SHARED}` }).scrollIntoViewIfNeeded();
      await expect(row.getByRole('button', { name: `${words.connect} ${SHARED}` })).toBeInViewport();
      await expectNoSidewaysScroll(page);

      const grants = upstream.seen.codeGrants;
      await row.getByRole('button', { name: `${words.connect} ${SHARED}` }).click();
      await expect(page).toHaveURL(/\/oauth\/upstream\?result=connected/);
      await expect(page.getByTestId('oauth-result')).toHaveText(words.connected(SHARED));
      await expect(page).toHaveTitle(words.title);
      expect(upstream.seen.codeGrants).toBe(grants + 1);

      // Back on Services nobody presses the health check: the card is healthy with the service's one tool.
      await page.getByRole('link', { name: words.back }).click();
      await expect(cardOf(page, SHARED).getByTestId('health-reason')).toHaveText(words.oneTool);
      await expect(cardOf(page, SHARED).locator('[data-health="healthy"]')).toBeVisible();
      await expect(cardOf(page, SHARED).getByRole('button', { name: `${words.connect} ${SHARED}` })).toHaveCount(0);
      await expectNoRawKeys(page);
      expect(consoleErrors).toEqual([]);
    });
  }

  for (const lang of ['en', 'zh-CN'] as const) {
    test(`a user sees that an administrator must connect the shared account, without a Connect (${lang})`, async ({ page, request }) => {
      const admin = await accessToken(request);
      await needAuthorizationAgain(request, admin, sharedId);
      const user = await createUser(request, 'e2e-connect');
      await signIn(page, user.username, user.password);
      await inLanguage(page, lang);
      await page.setViewportSize({ width: 390, height: 900 });
      await page.goto('/services');
      const card = cardOf(page, SHARED);
      await expect(card.getByTestId('health-reason')).toHaveText(text[lang].needsAdmin);
      await expect(card.getByRole('button', { name: `${text[lang].connect} ${SHARED}` })).toHaveCount(0);
    });
  }

  test('per user: each user connects their own account from the card (zh-CN, 360 px)', async ({ page, request }) => {
    const admin = await accessToken(request);
    const id = await createRemote(request, admin, PER_USER, upstream.mcpUrl);
    await expect
      .poll(
        async () =>
          (await (await request.post(`/api/mcp_services/${id}/health/check`, { headers: bearer(admin) })).json()).data?.health_status,
        {
          timeout: 20_000,
        },
      )
      .toBe('needs_authorization');
    const mode = await request.put(`/api/mcp_services/${id}/oauth`, { headers: bearer(admin), data: { oauth_mode: 'per_user' } });
    expect(mode.status(), await mode.text()).toBe(200);

    // This user's upstream account has three tools (the shared connection above had one): the card must show theirs.
    upstream.extraTools.set('alice', ['list_repos', 'create_issue']);
    const user = await createUser(request, 'e2e-connect-pu');
    await signIn(page, user.username, user.password);
    await inLanguage(page, 'zh-CN');
    await page.setViewportSize({ width: 360, height: 800 });
    await page.goto('/services');
    const card = cardOf(page, PER_USER);
    await expect(card.getByTestId('health-reason')).toContainText(text['zh-CN'].needsMine);
    await card.getByRole('button', { name: `${text['zh-CN'].connect} ${PER_USER}` }).click();
    await expect(page.getByTestId('oauth-result')).toHaveText(text['zh-CN'].connected(PER_USER));
    await page.getByRole('link', { name: text['zh-CN'].back }).click();
    await expect(cardOf(page, PER_USER).getByTestId('health-reason')).not.toContainText(text['zh-CN'].needsMine);
    await expect(cardOf(page, PER_USER).getByRole('button', { name: `${text['zh-CN'].connect} ${PER_USER}` })).toHaveCount(0);
    // Nobody pressed the health check: the card has their own connection's health and tool count (issue 29).
    await expect(cardOf(page, PER_USER).getByTestId('health-reason')).toHaveText(text['zh-CN'].threeTools);
    await expectNoSidewaysScroll(page);

    // Another user has not connected theirs: their card still asks them to, in English.
    const other = await createUser(request, 'e2e-connect-pu2');
    const otherToken = await accessToken(request, other.username, other.password);
    const listed = await request.get('/api/mcp_market/installed', { headers: bearer(otherToken) });
    const row = ((await listed.json()).data as { name: string; oauth_status: string }[]).find((s) => s.name === PER_USER);
    expect(row?.oauth_status).toBe('needs_authorization');
    expect((row as { tool_count?: number } | undefined)?.tool_count).not.toBe(3);
    upstream.extraTools.delete('alice');
  });
});

test.describe('the tab title of the connection result', () => {
  for (const lang of ['en', 'zh-CN'] as const) {
    test(`/oauth/upstream names its tab (${lang})`, async ({ page, signedIn }) => {
      expect(signedIn.user.role).toBe(100);
      await inLanguage(page, lang);
      await page.goto('/oauth/upstream?result=invalid_state');
      await expect(page.getByTestId('oauth-result')).toBeVisible();
      await expect(page).toHaveTitle(text[lang].title);
    });
  }
});
