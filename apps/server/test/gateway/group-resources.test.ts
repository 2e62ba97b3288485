import path from 'node:path';
import type { ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import { Role } from '@toolport/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_TEMPLATE_URI } from '../../src/gateway/downstream/group-face.js';
import { connect, connectUrl, type McpClient } from './clients.js';
import { addService, addUser, addUserWithToken, apiCall, type LiveGateway, startGateway } from './gateway-harness.js';
import { PIN, v2Client } from './modern-kit.js';

const catalogServer = path.join(import.meta.dirname, '../fixtures/catalog-server.mjs');
const DYNAMIC = 'demo://resource/dynamic/text/7';
const textOfRead = (read: ReadResourceResult) => read.contents.map((c) => ('text' in c ? c.text : '')).join('\n');

/**
 * Resources of a group's members read through the group as through /proxy (docs/decisions/0051-as-direct.md):
 * a URI a member's resource template matches goes to that member, with the official SDK clients (v1 and v2,
 * streamable HTTP and SSE, and the 2026-07-28 era), the first member in group order when templates of two
 * members match, and never a member the caller may not use.
 */
describe('resources through a group', () => {
  let gw: LiveGateway;
  let admin: { id: number; key: string; token: string };
  let alice: { id: number; key: string };
  let catalogA: number;
  const clients: McpClient[] = [];
  const closers: (() => Promise<void>)[] = [];
  const api = (method: string, url: string, body?: unknown) => apiCall(gw.url, admin.token, method, url, body);
  const group = async (name: string, members: number[]) => {
    const created = await api('POST', '/groups', { name, members: members.map((service_id) => ({ service_id })) });
    expect(created.status, created.body.message).toBe(201);
  };
  const open = async (name: string, key: string, wire: 'http' | 'sse', sdk: 'v1' | 'v2') => {
    const client = await connectUrl(new URL(`${gw.url}/group/${name}/${wire === 'http' ? 'mcp' : 'sse'}`), key, { sdk, wire });
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    gw = await startGateway('sqlite');
    admin = await addUserWithToken(gw.ctx, 'admin1', Role.Admin);
    alice = await addUser(gw.ctx, 'alice');
    const everything = await addService(gw.ctx, { name: 'everything' });
    const catalog = await addService(gw.ctx, { name: 'catalog', args: [catalogServer], env: { CATALOG_NAME: 'catalog' } });
    // Two servers with one template (`catalog://shared/items/{id}`), each saying which it is.
    catalogA = await addService(gw.ctx, { name: 'cat-a', args: [catalogServer], env: { CATALOG_NAME: 'shared', CATALOG_SERVED_BY: 'a' } });
    const catalogB = await addService(gw.ctx, {
      name: 'cat-b',
      args: [catalogServer],
      env: { CATALOG_NAME: 'shared', CATALOG_SERVED_BY: 'b' },
    });
    await group('team', [catalog, everything]);
    await group('ab', [catalogA, catalogB]);
    await group('ba', [catalogB, catalogA]);
    await group('only-a', [catalogA]);
  });
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    for (const close of closers) await close().catch(() => undefined);
    await gw?.close();
  });

  it('reads a URI of a member’s resource template, as /proxy does, with SDK v1 and v2 over streamable HTTP and SSE', async () => {
    const proxied = await connect(gw.url, 'everything', alice.key, { sdk: 'v1', wire: 'http' });
    clients.push(proxied);
    // server-everything stamps the text with the time of the read: compared without it.
    const unstamped = (read: ReadResourceResult) => textOfRead(read).replace(/ created at .*$/, '');
    const direct = unstamped(await proxied.readResource(DYNAMIC));
    expect(direct).toBe('Resource 7: This is a plaintext resource');
    for (const [wire, sdk] of [
      ['http', 'v1'],
      ['sse', 'v1'],
      ['http', 'v2'],
      ['sse', 'v2'],
    ] as const) {
      const client = await open('team', alice.key, wire, sdk);
      const templates = (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
      expect(templates).toEqual(expect.arrayContaining(['catalog://catalog/items/{id}', 'demo://resource/dynamic/text/{resourceId}']));
      const read = await client.readResource(DYNAMIC);
      expect(read.contents[0]?.uri, `${wire} ${sdk}`).toBe(DYNAMIC);
      expect(unstamped(read)).toBe(direct);
      expect(textOfRead(await client.readResource('catalog://catalog/items/42'))).toBe('Item 42 of catalog');
      // A URI no member's list or template covers stays unknown.
      await expect(client.readResource('demo://nowhere/7')).rejects.toThrow('Unknown resource: demo://nowhere/7');
      // A crafted, over-long one too (it would match the template, but is matched against none).
      const long = `demo://resource/dynamic/text/${'7'.repeat(MAX_TEMPLATE_URI)}`;
      await expect(client.readResource(long)).rejects.toThrow('Unknown resource: demo://resource/dynamic/text/777');
    }
  });

  it('reads a template URI as the first request of a session, before anything was listed', async () => {
    const carol = await addUser(gw.ctx, 'carol');
    const client = await open('team', carol.key, 'http', 'v1');
    expect(textOfRead(await client.readResource('catalog://catalog/items/5'))).toBe('Item 5 of catalog');
    expect((await client.readResource(DYNAMIC)).contents[0]?.uri).toBe(DYNAMIC);
  });

  it('reads it in the 2026-07-28 era too', async () => {
    const { client } = await v2Client(`${gw.url}/group/team/mcp`, alice.key, PIN);
    closers.push(() => client.close());
    expect(client.getProtocolEra()).toBe('modern');
    const read = await client.readResource({ uri: DYNAMIC });
    expect(read.contents[0]?.uri).toBe(DYNAMIC);
  });

  it('sends a URI two members’ templates match to the first of them in group order, as the templates are listed', async () => {
    for (const [name, first] of [
      ['ab', 'a'],
      ['ba', 'b'],
    ] as const) {
      const client = await open(name, alice.key, 'http', 'v1');
      expect((await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate)).toEqual([
        'catalog://shared/items/{id}',
        'catalog://shared/items/{id}',
      ]);
      expect(textOfRead(await client.readResource('catalog://shared/items/3'))).toBe(`Item 3 of shared from ${first}`);
    }
  });

  it('never routes a URI to a member the caller may not use: the next member that matches takes it, else it is unknown', async () => {
    const restricted = await api('PUT', `/mcp_services/${catalogA}`, { access: { restricted: true, user_ids: [] } });
    expect(restricted.status).toBe(200);
    const dave = await addUser(gw.ctx, 'dave');
    const ab = await open('ab', dave.key, 'http', 'v1');
    expect(textOfRead(await ab.readResource('catalog://shared/items/8'))).toBe('Item 8 of shared from b');
    const onlyA = await open('only-a', dave.key, 'sse', 'v1');
    await expect(onlyA.readResource('catalog://shared/items/8')).rejects.toThrow('Unknown resource: catalog://shared/items/8');
    expect((await onlyA.listResourceTemplates()).resourceTemplates).toEqual([]);
    // An admin may use it: the same read through the same group reaches it.
    const asAdmin = await open('only-a', admin.key, 'http', 'v2');
    expect(textOfRead(await asAdmin.readResource('catalog://shared/items/8'))).toBe('Item 8 of shared from a');
  });
});
