import type { AddressInfo } from 'node:net';
import { auth } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addService } from '../gateway/gateway-harness.js';
import { createTestApp, engines, type TestApp } from '../harness.js';
import { consent, fixtureServer, MemoryProvider, metadataHost, REDIRECT } from './oauth-kit.js';

const text = (r: CallToolResult) => (r.content[0] as { text: string }).text;

/**
 * The official SDK client's OAuth support (v1 `OAuthClientProvider` with `auth()`) end to end
 * against the real server on loopback: discovery from the 401, registration or a Client ID Metadata
 * Document, the user's Allow, the token, a tool call, refresh, revocation.
 */
describe.each(engines)('MCP client sign-in through OAuth (%s)', (engine) => {
  let t: TestApp;
  let base: string;
  let user: { id: number; token: string };
  let docs: Awaited<ReturnType<typeof metadataHost>>;

  beforeAll(async () => {
    // The metadata documents below are served on loopback: the operator allows that explicitly (decision 0041).
    t = await createTestApp(engine, { ALLOW_PRIVATE_NETWORK_CLIENT_FETCHES: 'true' });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    await addService(t.ctx, { name: 'echo', args: [fixtureServer] });
    await addService(t.ctx, { name: 'other', args: [fixtureServer] });
    user = await t.createUser();
    docs = await metadataHost();
  }, 60_000);
  afterAll(async () => {
    await docs?.close();
    await t?.close();
  });

  const connect = async (provider: MemoryProvider, service = 'echo') => {
    const client = new Client({ name: 'oauth-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/proxy/${service}/mcp`), { authProvider: provider }));
    return client;
  };

  /** The whole first connection: 401, discovery, registration (unless a metadata URL), consent, code exchange. */
  const signIn = async (provider: MemoryProvider, service = 'echo', token = user.token) => {
    const serverUrl = new URL(`${base}/proxy/${service}/mcp`);
    const transport = new StreamableHTTPClientTransport(serverUrl, { authProvider: provider });
    const client = new Client({ name: 'oauth-test', version: '1.0.0' });
    await expect(client.connect(transport)).rejects.toThrow(/Unauthorized/);
    expect(provider.authorizationUrl?.href.startsWith(`${base}/oauth2/authorize?`)).toBe(true);
    const back = await consent(provider.authorizationUrl as URL, token);
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
    expect(back.searchParams.get('state')).toBe('state-123');
    expect(back.searchParams.get('iss')).toBe(base);
    await transport.finishAuth(back.searchParams.get('code') as string);
    return provider;
  };

  it('registers, signs in, calls a tool, refreshes and is revoked', async () => {
    const unauth = await fetch(`${base}/proxy/echo/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: '{}',
    });
    expect(unauth.status).toBe(401);
    expect(unauth.headers.get('www-authenticate')).toContain(
      `resource_metadata="${base}/.well-known/oauth-protected-resource/proxy/echo/mcp"`,
    );

    const provider = await signIn(new MemoryProvider());
    expect(provider.info?.client_id).toMatch(/^tpc_/);
    expect(provider.saved?.refresh_token).toBeTruthy();

    const client = await connect(provider);
    expect(text((await client.callTool({ name: 'echo', arguments: { text: 'hi' } })) as CallToolResult)).toBe('echo: hi');
    await client.close();

    // The token names its endpoint: another endpoint refuses it with invalid_token.
    const elsewhere = await fetch(`${base}/proxy/other/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${provider.saved?.access_token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    expect(elsewhere.status).toBe(401);
    expect(elsewhere.headers.get('www-authenticate')).toContain('error="invalid_token"');

    // Refresh rotates: a new pair, the old refresh token is spent.
    const first = provider.saved;
    expect(await auth(provider, { serverUrl: new URL(`${base}/proxy/echo/mcp`) })).toBe('AUTHORIZED');
    expect(provider.saved?.refresh_token).not.toBe(first?.refresh_token);
    const again = await connect(provider);
    expect(text((await again.callTool({ name: 'echo', arguments: { text: 'after refresh' } })) as CallToolResult)).toBe(
      'echo: after refresh',
    );
    await again.close();

    // The app shows on the user's Connected apps, then is revoked through RFC 7009.
    const apps = await t.app.inject({ method: 'GET', url: '/api/oauth-server/grants', headers: { authorization: `Bearer ${user.token}` } });
    expect(
      apps
        .json()
        .data.some(
          (a: { client_name: string; last_used_at: number | null }) => a.client_name === 'Test MCP Client' && a.last_used_at !== null,
        ),
    ).toBe(true);
    const revoke = await fetch(`${base}/oauth2/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: provider.saved?.refresh_token as string, client_id: provider.info?.client_id as string }),
    });
    expect(revoke.status).toBe(200);
    const after = await fetch(`${base}/proxy/echo/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${provider.saved?.access_token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
      }),
    });
    expect(after.status).toBe(401);
    expect(after.headers.get('www-authenticate')).toContain('error="invalid_token"');
  }, 60_000);

  it('a client that registers anew on every start is one Connected app per user; revoking it ends every registration', async () => {
    const [ann, ben] = [await t.createUser(), await t.createUser()];
    const appsOf = async (who: { token: string }) => {
      const res = await t.app.inject({ method: 'GET', url: '/api/oauth-server/grants', headers: { authorization: `Bearer ${who.token}` } });
      expect(res.statusCode, res.body).toBe(200);
      return res.json().data as { id: number; client_id: string; client_name: string; resource: string; grant_count: number }[];
    };
    // Three starts of the same client for ann (a new registration each time, as mcp-remote does), one for ben,
    // and one start for ann at another endpoint.
    const anns = [];
    for (let start = 0; start < 3; start++) anns.push(await signIn(new MemoryProvider(), 'echo', ann.token));
    const bens = await signIn(new MemoryProvider(), 'echo', ben.token);
    await signIn(new MemoryProvider(), 'other', ann.token);
    expect(new Set(anns.map((p) => p.info?.client_id)).size).toBe(3);

    const listed = await appsOf(ann);
    expect(listed.map((a) => [a.client_name, a.resource, a.grant_count])).toEqual([
      ['Test MCP Client', `${base}/proxy/other/mcp`, 1],
      ['Test MCP Client', `${base}/proxy/echo/mcp`, 3],
    ]);
    // The newest registration names the row. Two users' identical clients never merge.
    const echoRow = listed[1] as (typeof listed)[number];
    expect(echoRow.client_id).toBe(anns[2]?.info?.client_id);
    expect((await appsOf(ben)).map((a) => a.grant_count)).toEqual([1]);

    // Ben cannot revoke ann's app by its id; an admin's view of ann lists the same rows.
    const foreign = await t.app.inject({
      method: 'DELETE',
      url: `/api/oauth-server/grants/${echoRow.id}`,
      headers: { authorization: `Bearer ${ben.token}`, 'accept-language': 'zh-CN' },
    });
    expect(foreign.statusCode).toBe(404);
    const admin = await t.rootToken();
    const viewed = await t.app.inject({
      method: 'GET',
      url: `/api/oauth-server/users/${ann.id}/grants`,
      headers: { authorization: `Bearer ${admin}` },
    });
    expect(viewed.json().data.map((a: { grant_count: number }) => a.grant_count)).toEqual([1, 3]);

    const revoked = await t.app.inject({
      method: 'DELETE',
      url: `/api/oauth-server/grants/${echoRow.id}`,
      headers: { authorization: `Bearer ${ann.token}` },
    });
    expect(revoked.statusCode, revoked.body).toBe(200);
    expect((await appsOf(ann)).map((a) => a.resource)).toEqual([`${base}/proxy/other/mcp`]);
    // Every registration's token is refused now; ben's and ann's other endpoint still work.
    for (const provider of anns) await expect(connect(provider)).rejects.toThrow();
    const still = await connect(bens);
    expect(text((await still.callTool({ name: 'echo', arguments: { text: 'ben' } })) as CallToolResult)).toBe('echo: ben');
    await still.close();
    expect((await appsOf(ben)).map((a) => a.grant_count)).toEqual([1]);
  }, 120_000);

  it('signs in with a Client ID Metadata Document served on loopback, for all endpoints', async () => {
    docs.documents.set('/client.json', {
      body: JSON.stringify({ client_id: `${docs.url}/client.json`, client_name: 'Metadata Client', redirect_uris: [REDIRECT] }),
    });
    const provider = new MemoryProvider(`${docs.url}/client.json`);
    await signIn(provider);
    expect(provider.info?.client_id).toBe(`${docs.url}/client.json`);
    const client = await connect(provider);
    expect(text((await client.callTool({ name: 'echo', arguments: { text: 'cimd' } })) as CallToolResult)).toBe('echo: cimd');
    await client.close();
    const view = await t.app.inject({ method: 'GET', url: '/api/oauth-server/grants', headers: { authorization: `Bearer ${user.token}` } });
    expect(view.json().data.map((a: { client_name: string }) => a.client_name)).toContain('Metadata Client');
  }, 60_000);
});
