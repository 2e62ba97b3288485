import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { auth, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { Page } from '@playwright/test';
import { ADMIN_PASSWORD, ADMIN_USERNAME, baseUrl, expect, test } from '../support/fixtures';
import { accessToken, installEverything } from '../support/services-api';

/**
 * An MCP client signs in through Toolport's OAuth server, the user's part played in Chromium: the
 * official SDK client (v1 `OAuthClientProvider` with `auth()`) discovers the server from the 401,
 * registers (or names its Client ID Metadata Document), sends the browser to the authorize URL; the
 * console asks the user to sign in, shows the consent page, and Allow (or Deny) sends the browser to
 * the client's loopback redirect URI, where this spec's server receives the code.
 */

/** The client's loopback redirect URI (RFC 8252) and, on the same server, its metadata document. */
class LoopbackClient {
  private server: Server | undefined;
  url = '';
  metadata: object | undefined;
  readonly returns: URL[] = [];

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', this.url);
      if (url.pathname === '/client.json' && this.metadata) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(this.metadata));
        return;
      }
      if (url.pathname === '/callback') this.returns.push(url);
      res.writeHead(200, { 'content-type': 'text/html' }).end('<p>You can close this window.</p>');
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

class Provider implements OAuthClientProvider {
  info: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  authorizationUrl: URL | undefined;
  constructor(
    private readonly redirect: string,
    clientId?: string,
  ) {
    if (clientId) this.info = { client_id: clientId };
  }
  get redirectUrl() {
    return this.redirect;
  }
  get clientMetadata(): OAuthClientMetadata {
    return { client_name: 'E2E MCP Client', redirect_uris: [this.redirect], token_endpoint_auth_method: 'none' };
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
}

const service = `oauth-e2e-${Date.now().toString(36)}`;
const endpoint = () => new URL(`${baseUrl()}/proxy/${service}/mcp`);

/** The first connection: refused with 401, which starts discovery, registration and the browser step. */
async function startSignIn(provider: Provider): Promise<StreamableHTTPClientTransport> {
  const transport = new StreamableHTTPClientTransport(endpoint(), { authProvider: provider });
  await expect(new Client({ name: 'e2e', version: '1.0.0' }).connect(transport)).rejects.toThrow(/Unauthorized/);
  expect(provider.authorizationUrl?.pathname).toBe('/oauth2/authorize');
  return transport;
}

async function signInOnTheConsole(page: Page): Promise<void> {
  await expect(page).toHaveURL(/\/login$/);
  await page.getByLabel('Username').fill(ADMIN_USERNAME);
  await page.getByLabel('Password', { exact: true }).fill(ADMIN_PASSWORD);
  await page.getByRole('button', { name: 'Continue', exact: true }).click();
}

async function echo(provider: Provider, text: string): Promise<string> {
  const client = new Client({ name: 'e2e', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(endpoint(), { authProvider: provider }));
  try {
    const result = await client.callTool({ name: 'echo', arguments: { message: text } });
    return (result.content as { text: string }[])[0]?.text ?? '';
  } finally {
    await client.close();
  }
}

test.describe('an MCP client signs in with OAuth', () => {
  const loopback = new LoopbackClient();

  test.beforeAll(async ({ request }) => {
    await loopback.start();
    await installEverything(request, await accessToken(request), service);
  });
  test.afterAll(() => loopback.close());

  test('registers, the user signs in and allows, the client calls a tool, refreshes, and the user revokes it', async ({ page }) => {
    test.setTimeout(60_000);
    const provider = new Provider(`${loopback.url}/callback`);
    const transport = await startSignIn(provider);
    expect(provider.info?.client_id).toMatch(/^tpc_/);

    await page.goto(provider.authorizationUrl?.href as string);
    await signInOnTheConsole(page);
    await expect(page).toHaveURL(/\/oauth\/consent\?request=/);
    await expect(page.getByRole('heading', { name: 'E2E MCP Client wants to use your Toolport account' })).toBeVisible();
    await expect(page.getByText(`The MCP service ${service}`)).toBeVisible();
    await expect(page.getByText(new URL(loopback.url).host)).toBeVisible();
    await page.getByRole('button', { name: 'Allow' }).click();
    await expect(page).toHaveURL(/\/callback\?/);

    const back = loopback.returns.at(-1) as URL;
    expect(back.searchParams.get('iss')).toBe(baseUrl());
    await transport.finishAuth(back.searchParams.get('code') as string);
    expect(await echo(provider, 'hello')).toContain('hello');

    const before = provider.saved?.refresh_token;
    expect(await auth(provider, { serverUrl: endpoint() })).toBe('AUTHORIZED');
    expect(provider.saved?.refresh_token).not.toBe(before);
    expect(await echo(provider, 'refreshed')).toContain('refreshed');

    // Profile → Connected apps → Revoke: the app's tokens stop working.
    await page.goto('/profile');
    const card = page.getByRole('list', { name: 'Connected apps' });
    await expect(card.getByRole('listitem', { name: 'E2E MCP Client' }).first()).toBeVisible();
    await card.getByRole('button', { name: 'Revoke E2E MCP Client' }).first().click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Revoke' }).click();
    await expect(page.getByText('App access revoked')).toBeVisible();
    const refused = await fetch(endpoint(), {
      method: 'POST',
      headers: {
        authorization: `Bearer ${provider.saved?.access_token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });

  test('a client known by its metadata document is denied in Chinese (拒绝)', async ({ page, signedIn }) => {
    expect(signedIn.user.username).toBe(ADMIN_USERNAME);
    loopback.metadata = {
      client_id: `${loopback.url}/client.json`,
      client_name: 'Metadata Doc Client',
      redirect_uris: [`${loopback.url}/callback`],
    };
    const provider = new Provider(`${loopback.url}/callback`, `${loopback.url}/client.json`);
    await startSignIn(provider);
    await page.addInitScript(() => localStorage.setItem('i18nextLng', 'zh-CN'));
    await page.goto(provider.authorizationUrl?.href as string);
    await expect(page.getByRole('heading', { name: 'Metadata Doc Client 请求使用你的 Toolport 账户' })).toBeVisible();
    await expect(page.getByRole('button', { name: '允许' })).toBeEnabled();
    await page.getByRole('button', { name: '拒绝' }).click();
    await expect(page).toHaveURL(/\/callback\?/);
    const back = loopback.returns.at(-1) as URL;
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('code')).toBeNull();
  });
  test('a malformed request stays on Toolport’s error page (in Chinese) until the user has approved the client', async ({
    page,
    signedIn,
  }) => {
    expect(signedIn.user.username).toBe(ADMIN_USERNAME);
    const provider = new Provider(`${loopback.url}/callback`);
    await startSignIn(provider);
    const good = provider.authorizationUrl as URL;
    const bad = new URL(good);
    bad.searchParams.set('response_type', 'token');
    const returned = loopback.returns.length;
    await page.addInitScript(() => localStorage.setItem('i18nextLng', 'zh-CN'));
    // A client anyone registered and nobody approved: no open redirector (RFC 9700 §4.11.2).
    await page.goto(bad.href);
    await expect(page).toHaveURL(/\/oauth\/error\?error=unsupported_response_type&reason=response_type_code$/);
    await expect(page.getByRole('heading', { name: '无法使用此登录链接' })).toBeVisible();
    await expect(page.getByRole('alert')).toContainText('仅支持 response_type=code');
    expect(loopback.returns.length).toBe(returned);
    // Once this browser's user allowed the client, its errors go back to it.
    await page.goto(good.href);
    await page.getByRole('button', { name: '允许' }).click();
    await expect(page).toHaveURL(/\/callback\?code=/);
    await page.goto(bad.href);
    await expect(page).toHaveURL(/\/callback\?error=unsupported_response_type/);
    expect(loopback.returns.at(-1)?.searchParams.get('state')).toBe(good.searchParams.get('state'));
  });
});
