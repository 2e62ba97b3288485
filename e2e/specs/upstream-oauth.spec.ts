import { type OAuthMcpServer, startOAuthMcpServer } from '../../apps/server/test/fixtures/oauth-mcp-server';
import { collectConsoleErrors, expectNoRawKeys } from '../support/console-checks';
import { expect, test } from '../support/fixtures';
import { accessToken, serviceNamed, uninstallNamed } from '../support/services-api';

const NAME = 'e2e-oauth-remote';

/**
 * The Connect flow of a remote service that requires OAuth (issue 19), in Chromium against the built
 * server: the service is found to need authorization, the admin presses Connect, the browser goes to
 * the provider (a real OAuth-protected MCP server on loopback) and back through Toolport's callback to
 * the console page that tells the result; then Disconnect and Connect again in Chinese.
 */
test.describe('connecting a remote service with OAuth', () => {
  test.setTimeout(90_000);
  let upstream: OAuthMcpServer;

  test.beforeAll(async ({ playwright, baseURL }) => {
    upstream = await startOAuthMcpServer();
    const request = await playwright.request.newContext({ baseURL });
    const admin = await accessToken(request);
    await uninstallNamed(request, admin, [NAME]);
    const created = await request.post('/api/mcp_market/custom_service', {
      headers: { authorization: `Bearer ${admin}` },
      data: { name: NAME, type: 'streamableHttp', url: upstream.mcpUrl },
    });
    expect(created.status(), await created.text()).toBe(201);
    const row = await serviceNamed(request, admin, NAME);
    // A check meets the 401 and discovers the provider: the service now needs authorization.
    await request.post(`/api/mcp_services/${row?.id}/health/check`, { headers: { authorization: `Bearer ${admin}` } });
    await expect
      .poll(
        async () =>
          (await (await request.get(`/api/mcp_services/${row?.id}/oauth`, { headers: { authorization: `Bearer ${admin}` } })).json()).data
            ?.oauth_status,
        {
          timeout: 20_000,
        },
      )
      .toBe('needs_authorization');
    await request.dispose();
  });

  test.afterAll(async ({ playwright, baseURL }) => {
    const request = await playwright.request.newContext({ baseURL });
    await uninstallNamed(request, await accessToken(request), [NAME]);
    await request.dispose();
    await upstream?.close();
  });

  test('an admin connects, sees the result, disconnects and connects again in Chinese', async ({ page, signedIn }) => {
    expect(signedIn.user.role).toBeGreaterThanOrEqual(10);
    const consoleErrors = collectConsoleErrors(page);
    await page.goto('/services');
    await page.getByRole('group', { name: NAME }).getByRole('button', { name: 'Configure' }).click();
    const dialog = page.getByRole('dialog', { name: NAME });
    await expect(dialog.getByTestId('oauth-status')).toHaveText('Needs authorization');
    await dialog.getByRole('button', { name: 'Connect', exact: true }).click();
    await expect(page).toHaveURL(/\/oauth\/upstream\?result=connected/);
    await expect(page.getByTestId('oauth-result')).toHaveText(`${NAME} is connected. Calls through Toolport now use this account.`);
    expect(upstream.seen.codeGrants).toBe(1);

    await page.getByRole('link', { name: 'Back to services' }).click();
    await page.evaluate(() => localStorage.setItem('i18nextLng', 'zh-CN'));
    await page.reload();
    await page.getByRole('group', { name: NAME }).getByRole('button', { name: '配置' }).click();
    const zh = page.getByRole('dialog', { name: NAME });
    await expect(zh.getByTestId('oauth-status')).toHaveText('已连接');
    await expectNoRawKeys(page);
    await zh.getByRole('button', { name: '断开连接' }).click();
    await expect(zh.getByTestId('oauth-status')).toHaveText('需要授权');
    expect(upstream.seen.revoked).toContain('refresh_token');
    await zh.getByRole('button', { name: '连接', exact: true }).click();
    await expect(page.getByTestId('oauth-result')).toHaveText(`${NAME} 已连接。通过 Toolport 的调用现在使用此账号。`);
    await expectNoRawKeys(page);

    // A replayed return is refused, and said so in the console's language.
    await page.goto('/api/upstream_oauth/callback?state=replayed&code=x');
    await expect(page.getByTestId('oauth-result')).toHaveText('此授权链接无效、已过期或已被使用。请从服务的“配置”对话框重新开始。');
    expect(consoleErrors).toEqual([]);
  });
});
