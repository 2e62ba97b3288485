import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { baseUrl, expect, test } from '../support/fixtures';
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
 * clients"): the page is served by a small server of the test's own on another port, another origin than the
 * gateway's (the console's own page would not do: its Content-Security-Policy keeps it to its origin). Until an admin allows that origin its preflight is refused and the browser gives
 * the page nothing; once allowed, the page initialises a session and reads its Mcp-Session-Id.
 */
test('a page on an allowed origin reaches the MCP endpoint, and is refused before and after', async ({ browser, request }) => {
  const token = await accessToken(request);
  const setAllowed = async (value: string) => {
    const res = await request.put('/api/option/', { headers: bearer(token), data: { key: 'AllowedOrigins', value } });
    expect(res.status()).toBe(200);
  };
  const site: Server = createServer((_req, res) =>
    res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>an MCP web client</title>'),
  );
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  try {
    await installEverything(request, token, NAME);
    const apiKey = (await (await request.get('/api/user/self', { headers: bearer(token) })).json()).data.token as string;
    const foreign = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    // A context of its own: the suite's contexts add X-Forwarded-For to every request (support/fixtures.ts),
    // a header a real web client does not send and the gateway does not allow across origins.
    const context = await browser.newContext({ extraHTTPHeaders: {} });
    const page = await context.newPage();
    await page.goto(foreign);

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
    expect(allowed.error).toBeUndefined();
    expect(allowed.status).toBe(200);
    expect(allowed.session).toBeTruthy();
    expect(allowed.serverName).toBeTruthy();
    await setAllowed('');
    expect((await attempt()).error).toContain('Failed to fetch');
    await context.close();
  } finally {
    site.close();
    await setAllowed('');
    await uninstallNamed(request, token, [NAME]);
  }
});
