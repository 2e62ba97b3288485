import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type APIRequestContext, type Page, request } from '@playwright/test';
import { collectConsoleErrors, expectNoRawKeys } from '../support/console-checks';
import { ADMIN_PASSWORD, expect, test } from '../support/fixtures';
import { consoleContext, rootPage } from '../support/oauth-setup';
import { type RunningServer, startServer } from '../support/server';
import { accessToken, installEverything, serviceNamed } from '../support/services-api';
import { toast } from '../support/toasts';
import { expectChineseOnly } from '../support/zh-text-check';

const NAME = 'e2e-startup-everything';

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

/** What the gateway did with a service so far: how many times it started its process, and its health. */
interface Runs {
  starts: number;
  health: string;
}

async function runsOf(api: APIRequestContext, token: string, id: number): Promise<Runs> {
  let starts = 0;
  for (let page = 1; ; page += 1) {
    const res = await api.get('/api/mcp_logs', { headers: bearer(token), params: { service_id: id, phase: 'run', page, page_size: 100 } });
    expect(res.status()).toBe(200);
    const { logs, total } = (await res.json()).data as { logs: { message: string }[]; total: number };
    // The gateway logs every process it starts (docs/architecture.md §8): "starting: <command line>".
    starts += logs.filter((l) => l.message.startsWith('starting: ')).length;
    if (logs.length === 0 || page * 100 >= total) break;
  }
  return { starts, health: (await serviceNamed(api, token, NAME))?.health_status ?? 'missing' };
}

/** The count once the service log has written everything pending (it writes in half-second batches). */
async function settledRuns(api: APIRequestContext, token: string, id: number): Promise<Runs> {
  let last = await runsOf(api, token, id);
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const now = await runsOf(api, token, id);
    if (now.starts === last.starts && now.health === last.health) return now;
    last = now;
  }
}

async function toggle(api: APIRequestContext, token: string, id: number, expected: boolean): Promise<void> {
  const res = await api.post(`/api/mcp_services/${id}/toggle`, { headers: bearer(token) });
  expect(res.status()).toBe(200);
  expect((await res.json()).data.enabled).toBe(expected);
}

/** An MCP client's first call through the gateway. */
async function listToolsThrough(server: RunningServer, apiKey: string): Promise<string[]> {
  const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/proxy/${NAME}/mcp`), {
    requestInit: { headers: bearer(apiKey) },
  });
  const client = new Client({ name: 'e2e-preferences', version: '1.0.0' });
  await client.connect(transport);
  try {
    return (await client.listTools()).tools.map((t) => t.name);
  } finally {
    await client.close();
  }
}

async function chooseStrategy(page: Page, label: string, applied: string): Promise<void> {
  const startup = page.getByRole('region', { name: 'Stdio startup strategy' });
  await startup.getByRole('radio', { name: label }).click();
  await expect(toast(page, applied)).toBeVisible();
  await expect(startup.getByRole('radio', { name: label })).toBeChecked();
}

test.describe('preferences saved and taking effect (a server of their own)', () => {
  test.describe.configure({ mode: 'serial' });

  let server: RunningServer;
  test.beforeAll(async () => {
    server = await startServer(ADMIN_PASSWORD);
  });
  test.afterAll(async () => server?.stop());

  test('each preference is saved, survives a reload and reaches the public status', async ({ browser }) => {
    const { page } = await rootPage(browser, server.url);
    const consoleErrors = collectConsoleErrors(page);
    await page.goto('/preferences');
    await expect(page.getByRole('heading', { name: 'Preferences', level: 1 })).toBeVisible();

    const addressCard = page.getByRole('region', { name: 'Server address' });
    const address = addressCard.getByRole('textbox', { name: 'Server address' });
    await address.fill('ftp://gateway.example.com');
    await addressCard.getByRole('button', { name: 'Save' }).click();
    await expect(addressCard.getByRole('alert')).toHaveText(
      'Could not save the server address: The address must start with http:// or https://',
    );
    await address.fill('https://gateway.example.com/');
    await addressCard.getByRole('button', { name: 'Save' }).click();
    await expect(addressCard.getByRole('status')).toHaveText('Server address saved');
    await expect(address).toHaveValue('https://gateway.example.com');
    await expect(page.getByTestId('github-callback-url')).toHaveValue('https://gateway.example.com/oauth/github');
    await expect(page.getByTestId('google-callback-url')).toHaveValue('https://gateway.example.com/oauth/google');

    const github = page.getByRole('region', { name: 'GitHub sign-in' });
    const githubSwitch = github.getByRole('switch', { name: 'Enable GitHub sign-in' });
    await githubSwitch.click();
    await expect(toast(page, 'Save the GitHub client ID before enabling GitHub sign-in.')).toBeVisible();
    await expect(githubSwitch).toHaveAttribute('aria-checked', 'false');

    await github.getByLabel('Client ID').fill('Iv1.e2e-client');
    await github.getByLabel('Client secret').fill('e2e-github-secret-value');
    await github.getByRole('button', { name: 'Save credentials' }).click();
    await expect(toast(page, 'GitHub credentials saved')).toBeVisible();
    await githubSwitch.click();
    await expect(toast(page, 'GitHub sign-in enabled')).toBeVisible();
    await expect(github.getByTestId('github-readiness')).toHaveText('On the sign-in page');
    await chooseStrategy(page, 'On demand (demand)', 'Stdio services now start on their first request.');
    const allowPrivate = page
      .getByRole('region', { name: 'Remote services' })
      .getByRole('switch', { name: 'Allow remote services on private networks' });
    await expect(allowPrivate).toHaveAttribute('aria-checked', 'true');
    await allowPrivate.click();
    await expect(toast(page, 'Remote services on loopback, private and link-local addresses are now refused.')).toBeVisible();

    await page.reload();
    await expect(allowPrivate).toHaveAttribute('aria-checked', 'false');
    await expect(address).toHaveValue('https://gateway.example.com');
    await expect(githubSwitch).toHaveAttribute('aria-checked', 'true');
    await expect(page.getByRole('radio', { name: 'On demand (demand)' })).toBeChecked();
    await expect(github.getByLabel('Client ID')).toHaveValue('Iv1.e2e-client');
    // The stored secret comes back as the server's mask only: as a placeholder, never in the field or the page.
    await expect(github.getByLabel('Client secret')).toHaveValue('');
    await expect(github.getByLabel('Client secret')).toHaveAttribute('placeholder', '********');
    expect(await page.content()).not.toContain('e2e-github-secret-value');

    const status = (await (await page.request.get('/api/status')).json()).data;
    expect(status).toMatchObject({ server_address: 'https://gateway.example.com', github_oauth: true, github_client_id: 'Iv1.e2e-client' });

    // With private networks off, a remote service on a loopback address is refused.
    const api = await request.newContext({ baseURL: server.url });
    const refused = await api.post('/api/mcp_market/custom_service', {
      headers: bearer(await accessToken(api)),
      data: { name: 'e2e-loopback', type: 'streamableHttp', url: 'http://127.0.0.1:9/mcp', command: '', description: '' },
    });
    expect(refused.status()).toBe(400);
    expect((await refused.json()).message).toContain('127.0.0.1 is a loopback address');
    await api.dispose();

    // A visitor's sign-in page offers GitHub now, and still not Google.
    const visitor = await (await consoleContext(browser, server.url)).newPage();
    await visitor.goto('/login');
    await expect(visitor.getByRole('button', { name: 'Continue with GitHub' })).not.toHaveAttribute('aria-disabled', 'true');
    await expect(visitor.getByRole('button', { name: 'Continue with Google' })).toHaveAttribute('aria-disabled', 'true');
    await visitor.context().close();

    // Back to the defaults the next test starts from.
    await githubSwitch.click();
    await expect(toast(page, 'GitHub sign-in disabled')).toBeVisible();
    await chooseStrategy(page, 'At boot (boot)', 'Enabled stdio services start now and keep running.');
    await allowPrivate.click();
    await expect(toast(page, 'Remote services may use private network addresses again.')).toBeVisible();
    expect(consoleErrors).toEqual([]);
    await page.context().close();
  });

  test('switching the startup strategy changes when a stdio service starts', async ({ browser }) => {
    test.setTimeout(180_000);
    const api = await request.newContext({ baseURL: server.url });
    const token = await accessToken(api);
    const apiKey = (await (await api.get('/api/user/self', { headers: bearer(token) })).json()).data.token as string;
    const { id } = await installEverything(api, token, NAME);
    const runs = () => runsOf(api, token, id);
    const { page } = await rootPage(browser, server.url);
    await page.goto('/preferences');
    await expect(page.getByRole('radio', { name: 'At boot (boot)' })).toBeChecked();

    // boot: enabling the service starts its process, with no client anywhere.
    await toggle(api, token, id, false);
    const stopped = await settledRuns(api, token, id);
    expect(stopped.health).toBe('stopped');
    const enabledAt = Date.now();
    await toggle(api, token, id, true);
    await expect.poll(runs, { timeout: 30_000 }).toEqual({ starts: stopped.starts + 1, health: 'healthy' });
    const bootStartMs = Date.now() - enabledAt;

    // demand: enabling starts nothing; the first call does.
    await chooseStrategy(page, 'On demand (demand)', 'Stdio services now start on their first request.');
    await toggle(api, token, id, false);
    const beforeDemand = await settledRuns(api, token, id);
    await toggle(api, token, id, true);
    // Several times as long as the boot start took: had enabling started it, it would have shown by now.
    await page.waitForTimeout(Math.max(3_000, 3 * bootStartMs));
    expect(await settledRuns(api, token, id)).toEqual({ starts: beforeDemand.starts, health: 'unknown' });
    expect(await listToolsThrough(server, apiKey)).toContain('echo');
    await expect.poll(runs, { timeout: 30_000 }).toEqual({ starts: beforeDemand.starts + 1, health: 'healthy' });

    // Switching back to boot on the screen starts the enabled service at once, again without a call.
    await toggle(api, token, id, false);
    expect((await settledRuns(api, token, id)).health).toBe('stopped');
    await toggle(api, token, id, true);
    const armed = await settledRuns(api, token, id);
    expect(armed.health).toBe('unknown');
    await chooseStrategy(page, 'At boot (boot)', 'Enabled stdio services start now and keep running.');
    await expect.poll(runs, { timeout: 30_000 }).toEqual({ starts: armed.starts + 1, health: 'healthy' });

    await page.context().close();
    await api.post('/api/mcp_market/uninstall', { headers: bearer(token), data: { service_id: id } });
    await api.dispose();
  });

  test('the screen in Chinese and the dark theme shows no raw key and no English sentence', async ({ browser }) => {
    const { page } = await rootPage(browser, server.url, { language: 'zh-CN', theme: 'dark' });
    const consoleErrors = collectConsoleErrors(page);
    await page.goto('/preferences');
    await expect(page.getByRole('heading', { name: '偏好设置', level: 1 })).toBeVisible();
    await expect(page.locator('html')).toHaveClass(/dark/);
    await expect(page.getByRole('radio', { name: '启动时（boot）' })).toBeChecked();
    const translated = async () => {
      await expectChineseOnly(page, ['common', 'preferences'], ['Microsoft Entra ID']);
      await expectNoRawKeys(page);
    };
    await translated();

    const addressCard = page.getByRole('region', { name: '服务器地址' });
    await addressCard.getByRole('textbox', { name: '服务器地址' }).fill('gateway');
    await addressCard.getByRole('button', { name: '保存' }).click();
    await expect(addressCard.getByRole('alert')).toHaveText('服务器地址保存失败：请输入完整的 URL，例如 https://gateway.example.com');
    await page.getByRole('switch', { name: '启用 Google 登录' }).click();
    await expect(toast(page, '启用 Google 登录前，请先保存其 Client ID。')).toBeVisible();
    await translated();

    await page.getByRole('region', { name: 'Google 登录' }).getByLabel('Client ID').fill('1234-e2e.apps.googleusercontent.com');
    await page.getByRole('region', { name: 'Google 登录' }).getByRole('button', { name: '保存凭据' }).click();
    await expect(toast(page, 'Google 凭据已保存')).toBeVisible();
    await page.getByRole('switch', { name: '启用 Google 登录' }).click();
    await expect(toast(page, '已启用 Google 登录')).toBeVisible();
    await expect(page.getByTestId('google-readiness')).toHaveText('配置不完整');
    await translated();
    expect(consoleErrors).toEqual([]);
    await page.context().close();
  });
});
