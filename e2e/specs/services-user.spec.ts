import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Page } from '@playwright/test';
import { baseUrl, expect, signIn, test } from '../support/fixtures';
import { accessToken, ensureUser, installEverything, setDailyLimit, uninstallNamed } from '../support/services-api';
import { toast } from '../support/toasts';

const NAME = 'e2e-user-everything';
const USERNAME = 'e2e-services-user';
const PASSWORD = 'e2e-user-password';

interface CopiedConfig {
  mcpServers: Record<string, { type: string; url: string; headers?: Record<string, string> }>;
}

/** Copies the dialog's JSON config with its own button and reads it back from the real clipboard. */
async function copyConfig(page: Page): Promise<CopiedConfig> {
  const dialog = page.getByRole('dialog', { name: NAME });
  await expect(dialog.getByTestId('config-json')).toContainText('Bearer');
  await dialog.getByRole('button', { name: 'Copy JSON' }).click();
  // The button says "Copied" for 1.2 s only, the toast stays 5 s: the short-lived state is checked first.
  await expect(dialog.getByRole('button', { name: 'Copied' })).toBeVisible();
  await expect(toast(page, 'JSON configuration copied')).toBeVisible();
  return JSON.parse(await page.evaluate(() => navigator.clipboard.readText())) as CopiedConfig;
}

/** A real MCP client with the copied configuration: lists the tools and calls `echo` (one counted request). */
async function echoThrough(config: CopiedConfig, message: string): Promise<string[]> {
  const entry = config.mcpServers[NAME];
  if (!entry) throw new Error(`no ${NAME} in the copied config`);
  const requestInit = { headers: entry.headers ?? {} };
  const transport =
    entry.type === 'sse'
      ? new SSEClientTransport(new URL(entry.url), {
          requestInit,
          eventSourceInit: { fetch: (url, init) => fetch(url, { ...init, headers: { ...init?.headers, ...requestInit.headers } }) },
        })
      : new StreamableHTTPClientTransport(new URL(entry.url), { requestInit });
  const client = new Client({ name: 'e2e-services-user', version: '1.0.0' });
  await client.connect(transport);
  try {
    const tools = await client.listTools();
    const result = await client.callTool({ name: 'echo', arguments: { message } });
    const texts = (result.content as { type: string; text?: string }[]).map((c) => c.text ?? '');
    return [...tools.tools.map((t) => t.name).filter((n) => n === 'echo'), ...texts];
  } finally {
    await client.close();
  }
}

/**
 * Reloads until the card shows `count`: the gateway writes its counters in batches about a second apart,
 * so a request made just now may not be in the list yet.
 */
async function expectUsageAfterReload(page: Page, count: string): Promise<void> {
  await expect(async () => {
    await page.reload();
    await expect(page.getByRole('group', { name: NAME }).getByTestId('usage-count')).toHaveText(count, { timeout: 1_000 });
  }).toPass({ timeout: 20_000 });
}

test.describe('services: a user’s journey', () => {
  test.setTimeout(120_000);
  let serviceId = 0;

  test.beforeAll(async ({ playwright }) => {
    const request = await playwright.request.newContext({ baseURL: baseUrl() });
    const admin = await accessToken(request);
    await uninstallNamed(request, admin, [NAME]);
    serviceId = (await installEverything(request, admin, NAME)).id;
    await ensureUser(request, admin, USERNAME, PASSWORD);
    await request.dispose();
  });

  test.afterAll(async ({ playwright }) => {
    const request = await playwright.request.newContext({ baseURL: baseUrl() });
    await uninstallNamed(request, await accessToken(request), [NAME]);
    await request.dispose();
  });

  test('sees the service, copies its config, calls it through the gateway and watches the usage bar', async ({
    page,
    context,
    request,
  }) => {
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: baseUrl() });
    await signIn(page, USERNAME, PASSWORD);
    await page.goto('/services');

    const card = page.getByRole('group', { name: NAME });
    await expect(card).toBeVisible();
    await expect(page.getByRole('button', { name: 'Add Service' })).toBeHidden();
    await expect(card.getByRole('button', { name: `Edit ${NAME}` })).toBeHidden();
    // A user's switch is their own (off for them alone), so it is offered to them too.
    await expect(card.getByRole('switch')).toBeEnabled();
    await expect(card.getByTestId('usage-bar')).toBeHidden();

    await card.getByRole('button', { name: 'Configure' }).click();
    const dialog = page.getByRole('dialog', { name: NAME });
    await expect(dialog.getByLabel('Endpoint URL')).toHaveValue(new RegExp(`/proxy/${NAME}/mcp$`));
    await expect(dialog.getByLabel('Daily request limit per user')).toBeHidden();

    await test.step('the streamable HTTP config works in a real MCP client', async () => {
      const config = await copyConfig(page);
      expect(config.mcpServers[NAME]?.type).toBe('streamableHttp');
      expect(await echoThrough(config, 'hello over http')).toEqual(['echo', 'Echo: hello over http']);
    });

    await test.step('so does the SSE config', async () => {
      await dialog.getByRole('radio', { name: 'SSE' }).click();
      await expect(dialog.getByLabel('Endpoint URL')).toHaveValue(new RegExp(`/proxy/${NAME}/sse$`));
      await expect(dialog.getByLabel('Request header')).toHaveValue(/^Authorization=Bearer \S+$/);
      const config = await copyConfig(page);
      expect(config.mcpServers[NAME]?.type).toBe('sse');
      expect(await echoThrough(config, 'hello over sse')).toEqual(['echo', 'Echo: hello over sse']);
    });

    await test.step('the Open WebUI connection reaches the same tools over OpenAPI', async () => {
      await expect(dialog.getByLabel('OpenAPI URL')).toHaveValue(new RegExp(`/openapi/proxy/${NAME}$`));
      await expect(dialog.getByTestId('snippet-openwebui')).toContainText('bearer');
      await dialog.getByRole('button', { name: 'Open WebUI connection' }).click();
      await expect(toast(page, 'Configuration copied')).toBeVisible();
      const [connection] = JSON.parse(await page.evaluate(() => navigator.clipboard.readText())) as {
        url: string;
        path: string;
        key: string;
      }[];
      if (!connection) throw new Error('no connection in the copied snippet');
      // What Open WebUI does with it: read {url}/{path} with the key, then POST {url}{operation path}.
      const headers = { authorization: `Bearer ${connection.key}` };
      const doc = (await (await fetch(`${connection.url}/${connection.path}`, { headers })).json()) as {
        paths: Record<string, { post: { operationId: string } }>;
      };
      expect(doc.paths['/echo']?.post.operationId).toBe('echo');
      const answer = await fetch(`${connection.url}/echo`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify({ message: 'hello over openapi' }),
      });
      expect(await answer.json()).toBe('Echo: hello over openapi');
    });

    await test.step('after the admin sets a limit, the usage bar shows today’s count', async () => {
      const admin = await accessToken(request);
      await setDailyLimit(request, admin, serviceId, 5);
      const bar = card.getByTestId('usage-bar');
      // Two MCP calls and one over OpenAPI: the same counter.
      await expectUsageAfterReload(page, '3 / 5');
      await expect(bar).toContainText('2 requests remaining');
      await expect(bar.getByRole('progressbar').locator('[data-tone]')).toHaveAttribute('data-tone', 'green');

      await card.getByRole('button', { name: 'Configure' }).click();
      const config = await copyConfig(page);
      await echoThrough(config, 'one more');
      await expectUsageAfterReload(page, '4 / 5');
      await expect(bar).toContainText('1 request remaining');
      await expect(bar.getByRole('progressbar').locator('[data-tone]')).toHaveAttribute('data-tone', 'yellow');
      await setDailyLimit(request, admin, serviceId, 0);
    });
  });
});
