import { expect, test } from '@playwright/test';
import { baseUrl } from '../support/fixtures';
import { accessToken, installEverything, uninstallNamed } from '../support/services-api';

const NAME = 'e2e-browser-origin-everything';
const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

interface Attempt {
  status?: number;
  session?: string | null;
  serverName?: string;
  error?: string;
}

/**
 * A browser-based MCP client on another site, in real Chromium (docs/security.md, "DNS rebinding and browser
 * clients"): the page is served from `http://localhost:<port>`, another origin than the gateway's
 * `http://127.0.0.1:<port>`. Until an admin allows that origin its preflight is refused and the browser gives
 * the page nothing; once allowed, the page initialises a session and reads its Mcp-Session-Id.
 */
test('a page on an allowed origin reaches the MCP endpoint, and is refused before and after', async ({ page, request }) => {
  const token = await accessToken(request);
  const setAllowed = async (value: string) => {
    const res = await request.put('/api/option/', { headers: bearer(token), data: { key: 'AllowedOrigins', value } });
    expect(res.status()).toBe(200);
  };
  try {
    await installEverything(request, token, NAME);
    const apiKey = (await (await request.get('/api/user/self', { headers: bearer(token) })).json()).data.token as string;
    const foreign = baseUrl().replace('127.0.0.1', 'localhost');
    await page.goto(`${foreign}/login`);

    const attempt = () =>
      page.evaluate(
        async ({ url, key }): Promise<Attempt> => {
          try {
            const res = await fetch(url, {
              method: 'POST',
              headers: {
                authorization: `Bearer ${key}`,
                'content-type': 'application/json',
                accept: 'application/json, text/event-stream',
              },
              body: JSON.stringify({
                jsonrpc: '2.0',
                id: 1,
                method: 'initialize',
                params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'browser-page', version: '1' } },
              }),
            });
            const body = await res.json();
            return { status: res.status, session: res.headers.get('mcp-session-id'), serverName: body.result?.serverInfo?.name };
          } catch (err) {
            return { error: String(err) };
          }
        },
        { url: `${baseUrl()}/proxy/${NAME}/mcp`, key: apiKey },
      );

    expect((await attempt()).error).toContain('Failed to fetch');
    await setAllowed(foreign);
    const allowed = await attempt();
    expect(allowed.status).toBe(200);
    expect(allowed.session).toBeTruthy();
    expect(allowed.serverName).toBeTruthy();
    await setAllowed('');
    expect((await attempt()).error).toContain('Failed to fetch');
  } finally {
    await setAllowed('');
    await uninstallNamed(request, token, [NAME]);
  }
});
