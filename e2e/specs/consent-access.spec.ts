import { createHash, randomBytes } from 'node:crypto';
import type { APIRequestContext, Page } from '@playwright/test';
import { createUser } from '../support/console-users';
import { baseUrl, expect, signIn, test } from '../support/fixtures';
import { accessToken, installEverything } from '../support/services-api';

/**
 * The consent page honours access lists (issue 24, decision 0040), in Chromium against the real server: a
 * client asks a role-1 user for an endpoint that user may not use (a service or a group restricted to
 * others); the page says why, in English and Chinese, with Allow disabled; Deny sends the browser back with
 * access_denied; and an Allow sent to the decision API anyway (the page bypassed) gets access_denied and no code.
 */

/** The client's redirect URI: never served, the browser's arrival there is intercepted. */
const REDIRECT = 'http://127.0.0.1:7777/callback';
const suffix = Date.now().toString(36);
const service = `vault-${suffix}`;
const group = `finance-${suffix}`;

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

async function authorizeUrl(request: APIRequestContext, resource: string): Promise<string> {
  const registered = await request.post('/oauth2/register', { data: { client_name: 'Access E2E Client', redirect_uris: [REDIRECT] } });
  expect(registered.status()).toBe(201);
  const challenge = createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url');
  const q = new URLSearchParams({
    response_type: 'code',
    client_id: (await registered.json()).client_id,
    redirect_uri: REDIRECT,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: 'e2e-state',
    resource: `${baseUrl()}${resource}`,
  });
  return `/oauth2/authorize?${q}`;
}

/** Where the browser lands at the client, caught before anything is fetched there. */
async function catchReturn(page: Page): Promise<() => URL | undefined> {
  let landed: URL | undefined;
  await page.route('http://127.0.0.1:7777/**', async (route) => {
    landed = new URL(route.request().url());
    await route.fulfill({ contentType: 'text/html', body: '<p>back at the client</p>' });
  });
  return () => landed;
}

test.describe('the consent page honours access lists', () => {
  test.beforeAll(async ({ request }) => {
    const admin = await accessToken(request);
    const row = await installEverything(request, admin, service);
    // Restricted to nobody: only admins may use it.
    const restricted = await request.put(`/api/mcp_services/${row.id}`, {
      headers: bearer(admin),
      data: { access: { restricted: true, user_ids: [] } },
    });
    expect(restricted.ok()).toBe(true);
    const created = await request.post('/api/groups', {
      headers: bearer(admin),
      data: { name: group, members: [{ service_id: row.id }], access: { restricted: true, user_ids: [] } },
    });
    expect(created.status()).toBe(201);
  });

  test('says why Allow is disabled for a restricted service, and a forged Allow gets access_denied, no code', async ({ page, request }) => {
    test.setTimeout(60_000);
    const user = await createUser(request, 'consent');
    const session = await signIn(page, user.username, user.password);
    await page.goto(await authorizeUrl(request, `/proxy/${service}/mcp`));
    await expect(page).toHaveURL(/\/oauth\/consent\?request=/);
    await expect(page.getByRole('heading', { name: 'Access E2E Client wants to use your Toolport account' })).toBeVisible();
    const notice = page.getByRole('alert');
    await expect(notice).toContainText('You cannot approve this');
    await expect(notice).toContainText(
      `Your account is not on the access list of the MCP service ${service}. Ask an administrator for access, or Deny to send the app back.`,
    );
    await expect(page.getByRole('button', { name: 'Allow' })).toBeDisabled();
    await expect(page.getByRole('button', { name: 'Deny' })).toBeEnabled();

    // The page bypassed: the decision API called directly with Allow.
    const id = new URL(page.url()).searchParams.get('request') as string;
    const forged = await page.request.post(`/api/oauth-server/requests/${id}`, { headers: bearer(session.token), data: { allow: true } });
    expect(forged.status()).toBe(200);
    const back = new URL((await forged.json()).data.redirect_to);
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('state')).toBe('e2e-state');
    expect(back.searchParams.get('code')).toBeNull();
    // Decided once: the page now says the request is gone.
    await page.reload();
    await expect(page.getByRole('alert')).toContainText('already answered');
    await expect(page.getByRole('button', { name: 'Allow' })).toHaveCount(0);
  });

  test('says why in Chinese for a restricted group (拒绝 sends the app back with access_denied)', async ({ page, request }) => {
    test.setTimeout(60_000);
    const user = await createUser(request, 'consent-zh');
    await signIn(page, user.username, user.password);
    await page.addInitScript(() => localStorage.setItem('i18nextLng', 'zh-CN'));
    const landed = await catchReturn(page);
    await page.goto(await authorizeUrl(request, `/group/${group}/mcp`));
    await expect(page.getByRole('heading', { name: 'Access E2E Client 请求使用你的 Toolport 账户' })).toBeVisible();
    await expect(page.getByText(`MCP 分组 ${group}`, { exact: true })).toBeVisible();
    await expect(page.getByRole('alert')).toContainText(
      `你的账户不在 MCP 分组 ${group} 的访问名单中。请向管理员申请访问权限，或点击拒绝，让应用返回。`,
    );
    await expect(page.getByRole('button', { name: '允许' })).toBeDisabled();
    await page.getByRole('button', { name: '拒绝' }).click();
    await expect.poll(() => landed()?.searchParams.get('error')).toBe('access_denied');
    expect(landed()?.searchParams.get('code')).toBeNull();
  });
});
