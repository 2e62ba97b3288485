import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { APIRequestContext, Page } from '@playwright/test';
import { createUser } from '../support/console-users';
import { baseUrl, expect, signIn, test } from '../support/fixtures';
import { accessToken, installEverything, setDailyLimit, uninstallNamed } from '../support/services-api';

/**
 * Issue 29: numbers that change while a page is open (usage, health, tool counts) move without a reload, at a
 * cost the server does not feel; and a user's Tools dialog says the same "N of M tools enabled" as the card.
 */

const NAME = 'e2e-live-everything';
const LIMIT = 50;
const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

const text = {
  en: { tools: (name: string) => `Tools of ${name}`, tryIt: 'Try it', run: 'Run', count: /^\d+ of \d+ tools enabled$/ },
  'zh-CN': { tools: (name: string) => `${name} 的工具`, tryIt: '试用', run: '运行', count: /^已启用 \d+ \/ \d+ 个工具$/ },
} as const;

/** Requests for the services list a page makes, counted as they leave the browser. */
function countListRequests(page: Page): { count(): number } {
  let n = 0;
  page.on('request', (req) => {
    if (req.method() === 'GET' && new URL(req.url()).pathname === '/api/mcp_market/installed') n += 1;
  });
  return { count: () => n };
}

function countDocuments(page: Page): { count(): number } {
  let n = 0;
  page.on('request', (req) => {
    if (req.resourceType() === 'document') n += 1;
  });
  return { count: () => n };
}

/** One tools/call of `echo` through /proxy with the user's own API key, as any MCP client makes it. */
async function echoAsClient(request: APIRequestContext, userToken: string): Promise<void> {
  const self = await request.get('/api/user/self', { headers: bearer(userToken) });
  const key = (await self.json()).data.token as string;
  const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl()}/proxy/${NAME}/mcp`), {
    requestInit: { headers: bearer(key) },
  });
  const client = new Client({ name: 'e2e-live-numbers', version: '1.0.0' });
  await client.connect(transport);
  try {
    await client.callTool({ name: 'echo', arguments: { message: 'from a client' } });
  } finally {
    await client.close();
  }
}

/** What the browser does when the user switches to another tab and back (the Page Visibility API). */
async function setVisibility(page: Page, state: 'hidden' | 'visible'): Promise<void> {
  await page.evaluate((s) => {
    Object.defineProperty(document, 'visibilityState', { value: s, configurable: true });
    Object.defineProperty(document, 'hidden', { value: s === 'hidden', configurable: true });
    document.dispatchEvent(new Event('visibilitychange', { bubbles: true }));
  }, state);
}

test.describe('numbers that change while the page is open', () => {
  test.describe.configure({ mode: 'serial' });
  let serviceId = 0;

  test.beforeAll(async ({ playwright }) => {
    test.setTimeout(120_000);
    const request = await playwright.request.newContext({ baseURL: baseUrl() });
    const admin = await accessToken(request);
    await uninstallNamed(request, admin, [NAME]);
    serviceId = (await installEverything(request, admin, NAME)).id;
    await setDailyLimit(request, admin, serviceId, LIMIT);
    // An admin switches one tool off: a user is not given it, but both counts still say it exists.
    const off = await request.put(`/api/mcp_services/${serviceId}/tools/get-sum`, { headers: bearer(admin), data: { enabled: false } });
    expect(off.status(), await off.text()).toBe(200);
    await request.dispose();
  });

  test.afterAll(async ({ playwright }) => {
    const request = await playwright.request.newContext({ baseURL: baseUrl() });
    await uninstallNamed(request, await accessToken(request), [NAME]);
    await request.dispose();
  });

  for (const [lang, width] of [
    ['en', 1440],
    ['zh-CN', 390],
  ] as const) {
    test(`a user's Try it moves the usage bar at once, and the Tools dialog counts as the card does (${lang}, ${width} px)`, async ({
      page,
      request,
    }) => {
      const words = text[lang];
      const user = await createUser(request, 'e2e-live');
      await signIn(page, user.username, user.password);
      await page.addInitScript((l) => localStorage.setItem('i18nextLng', l), lang);
      await page.setViewportSize({ width, height: 900 });
      const documents = countDocuments(page);
      await page.goto('/services');

      const card = page.getByRole('group', { name: NAME });
      await expect(card.getByTestId('usage-count')).toHaveText(`0 / ${LIMIT}`);
      const cardCount = card.getByText(words.count);
      await expect(cardCount).toBeVisible();
      const onCard = (await cardCount.textContent()) ?? '';

      await card.getByRole('button', { name: words.tools(NAME) }).click();
      const dialog = page.getByRole('dialog');
      // One source: the dialog's count is the card's, although the user is not given the tool that is off.
      await expect(dialog.getByText(words.count)).toHaveText(onCard);
      const admin = await accessToken(request);
      const all = (await (await request.get(`/api/mcp_services/${serviceId}/tools`, { headers: bearer(admin) })).json()).data;
      const enabled = (all.tools as { enabled: boolean }[]).filter((t) => t.enabled).length;
      expect(onCard).toContain(String(all.tools.length));
      expect(onCard).toContain(String(enabled));
      expect(enabled).toBe(all.tools.length - 1);

      const echo = dialog.getByTestId('tool-row').filter({ has: page.getByText('echo', { exact: true }) });
      await echo.getByText(words.tryIt, { exact: true }).click();
      await echo.getByTestId('try-tool').getByRole('textbox').first().fill('hello');
      await echo.getByRole('button', { name: words.run }).click();
      await expect(echo.getByTestId('try-result')).toContainText('Echo: hello');
      await page.keyboard.press('Escape');
      await expect(dialog).toBeHidden();

      // The bar moved without a reload of the page.
      await expect(card.getByTestId('usage-count')).toHaveText(`1 / ${LIMIT}`);
      await expect(cardCount).toHaveText(onCard);
      expect(documents.count()).toBe(1);
    });
  }

  test('calls from a client show within the refresh interval; a hidden tab asks nothing, and asks at once when shown', async ({
    page,
    request,
  }) => {
    test.setTimeout(150_000);
    const user = await createUser(request, 'e2e-live-poll');
    const userToken = await accessToken(request, user.username, user.password);
    await signIn(page, user.username, user.password);
    const documents = countDocuments(page);
    const list = countListRequests(page);
    await page.goto('/services');
    const usage = page.getByRole('group', { name: NAME }).getByTestId('usage-count');
    await expect(usage).toHaveText(`0 / ${LIMIT}`);
    const opened = Date.now();

    await echoAsClient(request, userToken);
    await echoAsClient(request, userToken);
    // No reload and no click: the next refresh (at most 30 s away) brings the count.
    await expect(usage).toHaveText(`2 / ${LIMIT}`, { timeout: 40_000 });
    const seconds = (Date.now() - opened) / 1000;
    expect(documents.count()).toBe(1);
    // The page load, then one request per 30 s: never more than that.
    expect(list.count()).toBeLessThanOrEqual(1 + Math.ceil(seconds / 30));

    // In a hidden tab nothing is asked for, however long it stays hidden.
    await setVisibility(page, 'hidden');
    const before = list.count();
    await echoAsClient(request, userToken);
    await page.waitForTimeout(35_000);
    expect(list.count()).toBe(before);
    await expect(usage).toHaveText(`2 / ${LIMIT}`);

    // Back in view: asked at once, and the count is there. (The wait is for a loaded machine; one request, well
    // within the 30 s between refreshes, says it was the one the tab's return asked for.)
    await setVisibility(page, 'visible');
    await expect(usage).toHaveText(`3 / ${LIMIT}`, { timeout: 15_000 });
    expect(list.count()).toBe(before + 1);
    expect(documents.count()).toBe(1);
  });

  test('what one refresh costs the server (measured, for docs/console.md)', async ({ request }) => {
    const admin = await accessToken(request);
    const rounds = 20;
    const times: number[] = [];
    for (let i = 0; i < rounds; i += 1) {
      const started = performance.now();
      const res = await request.get('/api/mcp_market/installed', { headers: bearer(admin) });
      expect(res.status()).toBe(200);
      const body = (await res.json()) as { data: unknown[] };
      times.push(performance.now() - started);
      // A whole answer each time: the list the card shows, not an error envelope.
      expect(Array.isArray(body.data) && body.data.length).toBeGreaterThan(0);
    }
    times.sort((a, b) => a - b);
    const median = times[Math.floor(rounds / 2)] ?? 0;
    const p95 = times[Math.floor(rounds * 0.95) - 1] ?? 0;
    test
      .info()
      .annotations.push({ type: 'GET /api/mcp_market/installed', description: `median ${median.toFixed(1)} ms, p95 ${p95.toFixed(1)} ms` });
    console.log(`GET /api/mcp_market/installed over ${rounds} rounds: median ${median.toFixed(1)} ms, p95 ${p95.toFixed(1)} ms`);
    // The numbers are for docs/console.md, not a bound: on a machine shared with the vitest suites a p95 of 525 ms
    // was seen once (one open tab asks every 30 s, so even that is under 2 % of a core).
  });
});
