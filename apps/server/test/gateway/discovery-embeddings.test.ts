import path from 'node:path';
import { Role } from '@toolport/contract';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type FakeEmbeddings, startFakeEmbeddings } from '../fake-embeddings.js';
import { connectUrl, type McpClient } from './clients.js';
import { addService, addUser, addUserWithToken, apiCall, type LiveGateway, startGateway } from './gateway-harness.js';

const publishedTools = path.join(import.meta.dirname, '../fixtures/published-tools-server.mjs');
const KEY = 'sk-test-embeddings-key-0123456789';

interface Answer {
  tools: { name: string }[];
  mode: 'lexical' | 'hybrid';
}

/**
 * Issue 28, item 2: an OpenAI-compatible embeddings provider set in Preferences (a fake one on loopback
 * that speaks the real wire format), tool vectors computed once per tool version and kept in the
 * database, hybrid ranking, and lexical at once when the provider is slow, down or refuses the key,
 * with the reason shown in Preferences.
 */
describe('discovery search with an embeddings provider', () => {
  let gw: LiveGateway;
  let fake: FakeEmbeddings;
  let admin: { id: number; key: string; token: string };
  let user: { id: number; key: string };
  const clients: McpClient[] = [];
  const api = (method: string, url: string, body?: unknown) => apiCall(gw.url, admin.token, method, url, body);
  const setOption = async (key: string, value: string) => expect((await api('PUT', '/option/', { key, value })).status).toBe(200);
  const status = async () => (await api('GET', '/option/embeddings')).body.data;
  const search = async (query: string): Promise<Answer> => {
    const client = await connectUrl(new URL(`${gw.url}/group/semantic/mcp`), user.key, { sdk: 'v1', wire: 'http' });
    clients.push(client);
    return (await client.callTool('search_tools', { query })).structuredContent as unknown as Answer;
  };
  /** A query the hashing model matches clearly (a tool's own description), new each time it is asked. */
  let asked = 0;
  const query = () => {
    asked += 1;
    return `${'please '.repeat(asked)}post a new message to a slack channel`;
  };
  /** What the provider was asked to embed other than queries: tool texts. */
  const toolTexts = () => fake.requests.flatMap((r) => r.input).filter((text) => text.includes('__'));

  beforeAll(async () => {
    fake = await startFakeEmbeddings();
    gw = await startGateway('sqlite');
    admin = await addUserWithToken(gw.ctx, 'admin1', Role.Admin);
    user = await addUser(gw.ctx, 'sam');
    const code = await addService(gw.ctx, { name: 'code', args: [publishedTools], env: { CATALOG_SERVERS: 'github,slack,notion' } });
    const made = await api('POST', '/groups', { name: 'semantic', mode: 'discovery', members: [{ service_id: code }] });
    expect(made.status).toBe(201);
  });
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await gw?.close();
    await fake?.close();
  });

  it('keeps the provider in Preferences, its key encrypted and masked, and checks it on demand', async () => {
    const plain = await addUserWithToken(gw.ctx, 'plain');
    expect((await apiCall(gw.url, plain.token, 'GET', '/option/embeddings')).status).toBe(403);
    expect((await apiCall(gw.url, plain.token, 'POST', '/option/embeddings/check')).status).toBe(403);
    expect(await status()).toMatchObject({ state: 'off', vectors: 0 });
    expect((await search('create a pull request')).mode).toBe('lexical');

    const refused = await api('PUT', '/option/', { key: 'EmbeddingsURL', value: 'ftp://models.example' });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toContain('EmbeddingsURL');
    await setOption('EmbeddingsURL', fake.url);
    await setOption('EmbeddingsModel', 'text-embedding-3-small');
    await setOption('EmbeddingsAPIKey', KEY);
    await setOption('EmbeddingsDimensions', '256');
    await setOption('EmbeddingsTimeoutMs', '2000');
    const listed = (await api('GET', '/option/')).body.data as { key: string; value: string }[];
    expect(listed.find((o) => o.key === 'EmbeddingsAPIKey')?.value).toBe('********');
    const row = await gw.ctx.db.selectFrom('options').select('value').where('key', '=', 'EmbeddingsAPIKey').executeTakeFirst();
    expect(row?.value).not.toContain(KEY);
    expect(await status()).toMatchObject({ state: 'unknown', model: 'text-embedding-3-small' });

    const checked = (await api('POST', '/option/embeddings/check')).body.data;
    expect(checked).toMatchObject({ state: 'ok', reason: null, dimensions: 256 });
    expect(fake.requests.at(-1)).toMatchObject({ model: 'text-embedding-3-small', dimensions: 256, authorization: `Bearer ${KEY}` });
  });

  it('ranks hybrid once the tools’ vectors are stored, and computes them once per tool version', async () => {
    // The first search finds no vectors: it is lexical, and the vectors are computed meanwhile.
    const wanted = 'post a new message to a slack channel';
    expect((await search(wanted)).mode).toBe('lexical');
    await vi.waitFor(async () => expect((await search(wanted)).mode).toBe('hybrid'), {
      timeout: 20_000,
      interval: 300,
    });
    const tools = 26 + 8 + 24;
    expect(toolTexts()).toHaveLength(tools);
    expect(await status()).toMatchObject({ state: 'ok', vectors: tools });
    const hybrid = await search('Post a new message to a Slack channel');
    expect(hybrid.mode).toBe('hybrid');
    expect(hybrid.tools[0]?.name).toBe('code__slack_post_message');

    // A restart reads the vectors from the database: only queries are embedded again.
    await gw.restart();
    expect((await search('reply to a specific message thread in slack')).mode).toBe('hybrid');
    expect(toolTexts()).toHaveLength(tools);
  });

  it('ranks lexically at once when the provider is slow, down or refuses the key, and says why', async () => {
    fake.mode.delayMs = 5000;
    await setOption('EmbeddingsTimeoutMs', '300');
    expect((await search('list the slack channels')).mode).toBe('lexical');
    expect(await status()).toMatchObject({ state: 'failing', reason: 'timeout', detail: 'no answer within 300 ms' });
    // Paused after a failure: the next searches do not wait for the provider, nor ask it.
    const asked = fake.requests.length;
    expect((await search('post a message to a channel')).mode).toBe('lexical');
    expect(fake.requests).toHaveLength(asked);

    fake.mode.delayMs = 0;
    fake.mode.status = 503;
    await setOption('EmbeddingsTimeoutMs', '2000');
    expect((await search('fork a repository')).mode).toBe('lexical');
    expect(await status()).toMatchObject({ state: 'failing', reason: 'http' });
    expect((await status()).detail).toContain('HTTP 503');

    fake.mode.status = 200;
    fake.mode.key = 'another-key';
    const refused = (await api('POST', '/option/embeddings/check')).body.data;
    expect(refused).toMatchObject({ state: 'failing', reason: 'http' });
    // The provider repeats the key it was sent: the status never shows it.
    expect(refused.detail).toContain('Incorrect API key provided: Bearer [REDACTED]');
    expect(JSON.stringify(refused)).not.toContain(KEY);

    fake.mode.key = undefined;
    await setOption('EmbeddingsTimeoutMs', '2000');
    expect((await search(query())).mode).toBe('hybrid');
    expect(await status()).toMatchObject({ state: 'ok' });
  });
});
