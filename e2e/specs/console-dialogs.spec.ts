import { createHash, randomBytes } from 'node:crypto';
import type { APIRequestContext, Locator, Page } from '@playwright/test';
import { collectConsoleErrors, expectNoRawKeys } from '../support/console-checks';
import { createUser } from '../support/console-users';
import { expect, signIn, test } from '../support/fixtures';
import { accessToken, installEverything, uninstallNamed } from '../support/services-api';

/**
 * Issue 29, the dialogs: the Tools dialog (filter, header and filter in place while the list scrolls, a labelled
 * rename field, Try it that checks required fields, names the tool as clients see it and tells a protocol error
 * from an error the tool answered), create and edit refusals said inline beside their field, the group dialog's
 * tools by the name clients see, the Edit dialog's masked variables, and Connected apps' focus and registrations
 * count. Real server-everything behind the gateway, in English and Chinese, at 1440 and 390 px.
 */

const SERVICE = 'e2e-dialogs-everything';
const GROUP = 'e2e-dialogs-group';
const SECRET = 'hunter2-e2e';

const TEXT = {
  en: {
    tools: `Tools of ${SERVICE}`,
    filter: 'Filter tools',
    shown: (n: number, total: number) => `${n} of ${total} tools shown`,
    none: (f: string) => `No tool matches “${f}”.`,
    aliasLabel: 'Name clients see',
    alias: (n: string) => `Name clients see (${n})`,
    tryIt: 'Try it',
    run: 'Run',
    calls: /Calls the tool as clients see it:\s*say · Original name: echo/,
    required: 'message is required',
    took: /Answered in [\d.]+ ms/,
    protocolInResult: /^Protocol error: the tool server refused the call \(JSON-RPC error -32602\), in [\d.]+ ms/,
    toolError: /^The tool answered with an error \(isError\) in [\d.]+ ms/,
    limited: 'Daily request limit reached',
    limitText: /Your daily request limit for .+ is reached \(1\/1\)/,
    addService: 'Add Service',
    custom: 'Custom Install',
    name: 'Name',
    type: 'Type',
    url: 'Server URL',
    command: 'Command',
    install: 'Install',
    taken: `A service named "${SERVICE}" already exists`,
    notExecutable: '/no/such/e2e-binary does not exist or is not an executable file',
    edit: `Edit ${SERVICE}`,
    editTitle: 'Edit Service',
    env: 'Environment variables',
    show: 'Show values',
    hide: 'Hide values',
    save: 'Save',
    badEnv: 'Invalid variable name "1BAD"',
    updated: 'Update Successful',
    newGroup: 'New group',
    create: 'Create',
    chooseService: 'Choose at least one service.',
    allTools: 'All tools, including tools it gains later',
    original: 'Original name: echo',
    toolOff: 'Switched off on the service: clients cannot call it',
    groupTaken: `A group named "${GROUP}" already exists`,
    apps: 'Connected apps',
    revoke: 'Revoke',
    revokeApp: (c: string) => `Revoke ${c}`,
    registrations: 'Registered 3 times (the client registers anew on each start): one row, revoked together',
    allRevoked: 'All 3 of its registrations are revoked.',
    noApps: /No connected apps/,
  },
  'zh-CN': {
    tools: `${SERVICE} 的工具`,
    filter: '筛选工具',
    shown: (n: number, total: number) => `显示 ${n} / ${total} 个工具`,
    none: (f: string) => `没有与“${f}”匹配的工具。`,
    aliasLabel: '客户端看到的名称',
    alias: (n: string) => `客户端看到的名称（${n}）`,
    tryIt: '试用',
    run: '运行',
    calls: /按客户端看到的名称调用工具：say · 原名：echo/,
    required: 'message 为必填项',
    took: /[\d.]+ 毫秒内返回/,
    protocolInResult: /^协议错误：工具服务器拒绝了这次调用（JSON-RPC 错误 -32602），用时 [\d.]+ 毫秒/,
    toolError: /^工具返回了错误（isError），用时 [\d.]+ 毫秒/,
    limited: '已达每日请求上限',
    limitText: /你对 .+ 的每日请求次数已达上限（1\/1）/,
    addService: '添加服务',
    custom: '自定义安装',
    name: '名称',
    type: '类型',
    url: '服务器地址',
    command: '命令',
    install: '安装',
    taken: `名为“${SERVICE}”的服务已存在`,
    notExecutable: '/no/such/e2e-binary 不存在或不是可执行文件',
    edit: `编辑 ${SERVICE}`,
    editTitle: '编辑服务',
    env: '环境变量',
    show: '显示值',
    hide: '隐藏值',
    save: '保存',
    badEnv: '变量名“1BAD”无效',
    updated: '更新成功',
    newGroup: '新建分组',
    create: '创建',
    chooseService: '请至少选择一个服务。',
    allTools: '全部工具，包括以后新增的工具',
    original: '原名：echo',
    toolOff: '已在服务中停用：客户端无法调用',
    groupTaken: `名为“${GROUP}”的分组已存在`,
    apps: '已连接应用',
    revoke: '撤销',
    revokeApp: (c: string) => `撤销 ${c}`,
    registrations: '已注册 3 次（该客户端每次启动都重新注册）：合为一行，一并撤销',
    allRevoked: '其全部 3 次注册都将被撤销。',
    noApps: /暂无已连接应用/,
  },
} as const;

type Lang = keyof typeof TEXT;

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

async function removeFixtures(request: APIRequestContext, token: string): Promise<void> {
  const groups = (await (await request.get('/api/groups', { headers: bearer(token) })).json()) as { data: { id: number; name: string }[] };
  for (const g of groups.data) if (g.name === GROUP) await request.delete(`/api/groups/${g.id}`, { headers: bearer(token) });
  await uninstallNamed(request, token, [SERVICE]);
}

async function openPage(page: Page, lang: Lang, width: number, path: string): Promise<void> {
  if (lang === 'zh-CN') await page.addInitScript(() => localStorage.setItem('i18nextLng', 'zh-CN'));
  await page.setViewportSize({ width, height: 900 });
  await page.goto(path);
}

/** `inner` lies wholly inside the screen's height and width. */
async function expectInView(page: Page, inner: Locator, what: string): Promise<void> {
  const box = await inner.boundingBox();
  const view = page.viewportSize();
  expect(box, what).not.toBeNull();
  if (!box || !view) return;
  expect(box.y, `${what} is above the screen`).toBeGreaterThanOrEqual(0);
  expect(box.y + box.height, `${what} is below the screen`).toBeLessThanOrEqual(view.height);
  expect(box.x + box.width, `${what} is past the right edge`).toBeLessThanOrEqual(view.width);
}

/** A row of the Tools dialog by the tool's name as clients see it (its first line). */
const toolRow = (dialog: Locator, name: string) =>
  dialog.getByTestId('tool-row').filter({ has: dialog.page().locator('p.font-mono.font-semibold', { hasText: new RegExp(`^${name}$`) }) });

/** Registers an MCP client through the real OAuth endpoints, and the user allows it, `times` times: one grant each. */
async function approveClient(request: APIRequestContext, userToken: string, clientName: string, times: number): Promise<void> {
  for (let i = 0; i < times; i += 1) {
    const redirect = 'http://127.0.0.1:9/callback';
    const registered = await request.post('/oauth2/register', {
      data: { client_name: clientName, redirect_uris: [redirect], token_endpoint_auth_method: 'none' },
    });
    expect(registered.status(), await registered.text()).toBe(201);
    const clientId = (await registered.json()).client_id as string;
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: redirect,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: `s${i}`,
    });
    const authorize = await request.get(`/oauth2/authorize?${query}`, { maxRedirects: 0 });
    expect(authorize.status(), await authorize.text()).toBe(302);
    const consent = new URL(authorize.headers().location ?? '', 'http://x');
    const requestId = consent.searchParams.get('request');
    expect(consent.pathname, authorize.headers().location).toBe('/oauth/consent');
    const decided = await request.post(`/api/oauth-server/requests/${requestId}`, { headers: bearer(userToken), data: { allow: true } });
    expect(decided.ok(), await decided.text()).toBe(true);
  }
}

test.describe('the console dialogs (issue 29)', () => {
  test.setTimeout(120_000);
  let serviceId = 0;

  test.beforeAll(async ({ playwright, baseURL }) => {
    const request = await playwright.request.newContext({ baseURL });
    const token = await accessToken(request);
    await removeFixtures(request, token);
    serviceId = (await installEverything(request, token, SERVICE)).id;
    const headers = bearer(token);
    // echo is known to clients as "say"; get-sum is switched off.
    for (const [tool, body] of [
      ['echo', { alias: 'say' }],
      ['get-sum', { enabled: false }],
    ] as const) {
      const res = await request.put(`/api/mcp_services/${serviceId}/tools/${tool}`, { headers, data: body });
      expect(res.ok(), await res.text()).toBe(true);
    }
    const env = await request.put(`/api/mcp_services/${serviceId}`, {
      headers,
      data: { default_envs_json: JSON.stringify({ E2E_SECRET: SECRET }) },
    });
    expect(env.ok(), await env.text()).toBe(true);
    const group = await request.post('/api/groups', { headers, data: { name: GROUP, members: [{ service_id: serviceId }] } });
    expect(group.ok(), await group.text()).toBe(true);
    await request.dispose();
  });

  test.afterAll(async ({ playwright, baseURL }) => {
    const request = await playwright.request.newContext({ baseURL });
    await removeFixtures(request, await accessToken(request));
    await request.dispose();
  });

  for (const lang of ['en', 'zh-CN'] as const) {
    const text = TEXT[lang];
    for (const width of [1440, 390]) {
      test(`${lang} at ${width} px: the Tools dialog filters, keeps its header in place, and Try it says what happened`, async ({
        page,
        signedIn,
      }) => {
        expect(signedIn.user.role).toBe(100);
        const errors = collectConsoleErrors(page);
        await openPage(page, lang, width, '/services');
        await page.getByRole('button', { name: text.tools }).first().click();
        const dialog = page.getByRole('dialog');
        const title = dialog.getByRole('heading', { name: text.tools });
        const filter = dialog.getByRole('searchbox', { name: text.filter });
        await expect(dialog.getByTestId('tool-row').first()).toBeVisible();
        const total = await dialog.getByTestId('tool-row').count();
        expect(total).toBeGreaterThan(10);

        // The dialog fits the screen; the list scrolls inside it while the title and the filter stay.
        await expectInView(page, dialog, 'the Tools dialog');
        const list = dialog.getByTestId('tools-list');
        expect(await list.evaluate((el) => el.scrollHeight > el.clientHeight + 200)).toBe(true);
        await list.evaluate((el) => el.scrollTo(0, el.scrollHeight));
        await expect.poll(() => list.evaluate((el) => el.scrollTop)).toBeGreaterThan(200);
        await expectInView(page, title, 'the title after scrolling');
        await expectInView(page, filter, 'the filter after scrolling');
        await expectInView(page, dialog.getByRole('button', { name: lang === 'en' ? 'Close' : '关闭', exact: true }), 'Close');

        // The rename field has a visible label.
        await expect(dialog.getByText(text.aliasLabel, { exact: true }).first()).toBeVisible();

        // Filter by the name clients see, by the original name, and by description.
        await filter.fill('say');
        await expect(dialog.getByTestId('tool-row').filter({ visible: true })).toHaveCount(1);
        await expect(dialog.getByText(text.shown(1, total))).toBeVisible();
        await filter.fill('ECHO');
        await expect(dialog.getByTestId('tool-row').filter({ visible: true })).toHaveCount(1);
        await filter.fill('compress');
        await expect(dialog.getByTestId('tool-row').filter({ visible: true })).toHaveCount(1);
        await filter.fill('no-such-tool-anywhere');
        await expect(dialog.getByTestId('tool-row').filter({ visible: true })).toHaveCount(0);
        await expect(dialog.getByText(text.none('no-such-tool-anywhere'))).toBeVisible();

        // Try it on echo, known to clients as "say": named so, and an empty required field is not sent.
        await filter.fill('say');
        const say = toolRow(dialog, 'say');
        await expect(say.getByRole('textbox', { name: text.alias('echo') })).toHaveValue('say');
        await say.getByText(text.tryIt, { exact: true }).click();
        await expect(say.getByTestId('try-tool')).toContainText(text.calls);
        let calls = 0;
        page.on('request', (r) => {
          if (r.url().includes('/tools/echo/call')) calls += 1;
        });
        await say.getByRole('button', { name: text.run }).click();
        const message = say.getByLabel('message *');
        await expect(message).toHaveAttribute('aria-invalid', 'true');
        await expect(say.getByText(text.required)).toBeVisible();
        await expect(message).toBeFocused();
        expect(calls).toBe(0);
        await message.fill('hello from the console');
        await expect(message).not.toHaveAttribute('aria-invalid', 'true');
        await say.getByRole('button', { name: text.run }).click();
        await expect(say.getByTestId('try-result')).toContainText('Echo: hello from the console');
        await expect(say.getByTestId('try-result')).toContainText(text.took);
        expect(calls).toBe(1);

        // gzip-file-as-resource: arguments its schema refuses are a protocol error (the SDK returns it as an error
        // result, "MCP error -32602"); an address it cannot fetch is an error the tool answered.
        await filter.fill('gzip');
        const gzip = toolRow(dialog, 'gzip-file-as-resource');
        await gzip.getByText(text.tryIt, { exact: true }).click();
        await gzip.getByLabel('data', { exact: true }).fill('not a url');
        await gzip.getByRole('button', { name: text.run }).click();
        await expect(gzip.getByTestId('try-result').locator('p').first()).toHaveText(text.protocolInResult);
        await gzip.getByLabel('data', { exact: true }).fill('ftp://example.invalid/file.txt');
        await gzip.getByRole('button', { name: text.run }).click();
        await expect(gzip.getByTestId('try-result').locator('p').first()).toHaveText(text.toolError);
        await expect(gzip.getByTestId('try-result')).toContainText('Unsupported URL protocol');

        await expectNoRawKeys(page);
        expect(errors).toEqual([]);
      });
    }

    test(`${lang}: a role-1 user over the daily limit is told so in their language, not as the tool's answer`, async ({
      page,
      request,
    }) => {
      const admin = await accessToken(request);
      const user = await createUser(request, 'dialogs');
      await request.put(`/api/mcp_services/${serviceId}`, { headers: bearer(admin), data: { rpd_limit: 1 } });
      try {
        await signIn(page, user.username, user.password);
        await openPage(page, lang, 390, '/services');
        await page.getByRole('button', { name: text.tools }).first().click();
        const dialog = page.getByRole('dialog');
        await dialog.getByRole('searchbox', { name: text.filter }).fill('say');
        const say = toolRow(dialog, 'say');
        await say.getByText(text.tryIt, { exact: true }).click();
        await say.getByLabel('message *').fill('one');
        await say.getByRole('button', { name: text.run }).click();
        await expect(say.getByTestId('try-result')).toContainText('Echo: one');
        // The limit is reached with the first call (the count may take a moment to land).
        const failure = say.getByTestId('try-failure');
        await expect(async () => {
          await say.getByRole('button', { name: text.run }).click();
          await expect(failure).toBeVisible({ timeout: 2_000 });
        }).toPass({ timeout: 20_000 });
        await expect(failure.locator('p').first()).toHaveText(text.limited);
        await expect(failure).toContainText(text.limitText);
        await expect(failure).not.toContainText('daily request limit exceeded');
        await expect(say.getByTestId('try-result')).toHaveCount(0);
      } finally {
        await request.put(`/api/mcp_services/${serviceId}`, { headers: bearer(admin), data: { rpd_limit: 0 } });
      }
    });

    for (const width of [1440, 390]) {
      test(`${lang} at ${width} px: refusals of Custom Install, Edit and the group dialog stay in the dialog, beside their field`, async ({
        page,
        request,
        signedIn,
      }) => {
        expect(signedIn.user.role).toBe(100);
        const errors = collectConsoleErrors(page);
        await openPage(page, lang, width, '/services');

        // Custom Install: a name already taken, then a path that does not exist.
        await page.getByRole('button', { name: text.addService }).click();
        await page.getByRole('menuitem', { name: text.custom }).click();
        const custom = page.getByRole('dialog', { name: text.custom });
        await custom.getByLabel(text.name, { exact: true }).fill(SERVICE);
        await custom.getByLabel(text.url).fill('http://127.0.0.1:9/mcp');
        await custom.getByRole('button', { name: text.install }).click();
        const name = custom.getByLabel(text.name, { exact: true });
        await expect(name).toHaveAttribute('aria-invalid', 'true');
        await expect(name).toHaveAccessibleDescription(new RegExp(text.taken));
        await expect(name).toBeFocused();
        await expect(custom.getByText(text.taken)).toBeVisible();
        await expect(custom.getByLabel(text.url)).toHaveValue('http://127.0.0.1:9/mcp');
        await expect(page.locator('[data-sonner-toast]').filter({ hasText: text.taken })).toHaveCount(0);
        await expectInView(page, custom.getByText(text.taken), 'the refusal');

        await name.fill('e2e-dialogs-missing');
        await expect(name).not.toHaveAttribute('aria-invalid', 'true');
        await custom.getByLabel(text.type).selectOption('stdio');
        await custom.getByLabel(text.command).fill('/no/such/e2e-binary --flag');
        await custom.getByRole('button', { name: text.install }).click();
        const command = custom.getByLabel(text.command);
        await expect(command).toHaveAttribute('aria-invalid', 'true');
        await expect(command).toBeFocused();
        await expect(custom.getByText(text.notExecutable)).toBeVisible();
        await expect(command).toHaveValue('/no/such/e2e-binary --flag');
        await page.keyboard.press('Escape');
        await expect(custom).toBeHidden();

        // Edit: the variables are masked until shown; a refused variable is said beside the field.
        await page.getByRole('button', { name: text.edit }).first().click();
        const edit = page.getByRole('dialog', { name: text.editTitle });
        const env = edit.getByLabel(text.env);
        await expect(env).toHaveValue('E2E_SECRET=••••••••');
        await expect(edit.getByText(SECRET)).toHaveCount(0);
        await edit.getByRole('button', { name: text.show }).click();
        await expect(env).toHaveValue(`E2E_SECRET=${SECRET}`);
        await env.fill(`E2E_SECRET=${SECRET}\n1BAD=x`);
        await edit.getByRole('button', { name: text.save }).click();
        await expect(env).toHaveAttribute('aria-invalid', 'true');
        await expect(edit.getByText(text.badEnv)).toBeVisible();
        await env.fill(`E2E_SECRET=${SECRET}`);
        await expect(env).not.toHaveAttribute('aria-invalid', 'true');
        await edit.getByRole('button', { name: text.hide }).click();
        await expect(env).toHaveValue('E2E_SECRET=••••••••');
        await edit.getByRole('button', { name: text.save }).click();
        await expect(edit).toBeHidden();
        // Saved with the masked field: the value is kept.
        const admin = await accessToken(request);
        const stored = (await (await request.get('/api/mcp_market/installed', { headers: bearer(admin) })).json()).data.find(
          (s: { id: number }) => s.id === serviceId,
        ) as { default_envs_json: string };
        expect(JSON.parse(stored.default_envs_json)).toEqual({ E2E_SECRET: SECRET });

        // The group dialog: its member error goes once a service is chosen; tools by the name clients see;
        // a tool switched off is not offered; a name taken is said beside the name.
        await page.goto('/groups');
        await page.getByRole('button', { name: text.newGroup }).click();
        const group = page.getByRole('dialog', { name: text.newGroup });
        await group.getByLabel(text.name, { exact: true }).fill(GROUP);
        await group.getByRole('button', { name: text.create }).click();
        await expect(group.getByText(text.chooseService)).toBeVisible();
        await group.getByRole('checkbox', { name: SERVICE, exact: true }).check();
        await expect(group.getByText(text.chooseService)).toHaveCount(0);
        await group.getByRole('checkbox', { name: text.allTools }).uncheck();
        const picker = group.getByRole('group', { name: SERVICE, exact: true });
        const say = picker.getByRole('checkbox', { name: new RegExp(`^say\\s*${text.original}`) });
        await expect(say).toBeChecked();
        const sum = picker.getByRole('checkbox', { name: /^get-sum/ });
        await expect(sum).toBeDisabled();
        await expect(sum).not.toBeChecked();
        await expect(sum).toHaveAccessibleDescription(text.toolOff);
        await group.getByRole('button', { name: text.create }).click();
        const groupName = group.getByLabel(text.name, { exact: true });
        await expect(groupName).toHaveAttribute('aria-invalid', 'true');
        await expect(group.getByText(text.groupTaken)).toBeVisible();
        await expect(say).toBeChecked();

        await expectNoRawKeys(page);
        // The refusals themselves are logged by the browser as failed loads; nothing else may be.
        expect(errors.filter((e) => !/^Failed to load resource: the server responded with a status of 40[09]/.test(e))).toEqual([]);
      });
    }

    test(`${lang}: Connected apps say how many registrations a row stands for, and Revoke keeps the focus in the list`, async ({
      page,
      request,
    }) => {
      const user = await createUser(request, 'apps');
      const token = await accessToken(request, user.username, user.password);
      await approveClient(request, token, 'mcp-remote', 3);
      await approveClient(request, token, 'E2E Other Client', 1);

      await signIn(page, user.username, user.password);
      await openPage(page, lang, 390, '/profile');
      const apps = page.getByRole('region', { name: text.apps });
      const remote = apps.getByRole('listitem', { name: 'mcp-remote' });
      await expect(apps.getByRole('listitem')).toHaveCount(2);
      await expect(remote.getByTestId('grant-count')).toHaveText(text.registrations);
      await expect(apps.getByRole('listitem', { name: 'E2E Other Client' }).getByTestId('grant-count')).toHaveCount(0);

      // Revoke the first row by keyboard: the focus goes to the next row's Revoke, then to the list.
      const first = apps.getByRole('listitem').first();
      const firstName = (await first.getAttribute('aria-label')) as string;
      const secondName = firstName === 'mcp-remote' ? 'E2E Other Client' : 'mcp-remote';
      await first.getByRole('button', { name: text.revokeApp(firstName) }).focus();
      await page.keyboard.press('Enter');
      const confirm = page.getByRole('alertdialog');
      if (firstName === 'mcp-remote') await expect(confirm).toContainText(text.allRevoked);
      await confirm.getByRole('button', { name: text.revoke, exact: true }).press('Enter');
      await expect(apps.getByRole('listitem')).toHaveCount(1);
      await expect(apps.getByRole('button', { name: text.revokeApp(secondName) })).toBeFocused();

      await page.keyboard.press('Enter');
      await page.getByRole('alertdialog').getByRole('button', { name: text.revoke, exact: true }).press('Enter');
      await expect(apps.getByText(text.noApps)).toBeVisible();
      await expect(apps).toBeFocused();
      expect(await page.evaluate(() => document.activeElement === document.body)).toBe(false);
      await expectNoRawKeys(page);
    });
  }
});
