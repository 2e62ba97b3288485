import type { BatchProgressEvent, InstallStatus, McpServersDocument } from '@toolport/contract';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { FIXTURE_SERVER } from '../fixtures/upstream-kit.js';
import { ADMIN_PASSWORD, engines } from '../harness.js';
import { connect, type McpClient, textOf } from './clients.js';
import { addUser, type LiveGateway, startGateway } from './gateway-harness.js';

/**
 * Isolation through batch import and export (issue 14, item 5): an `mcpServers` entry with
 * `isolation: "session"` becomes a service whose client sessions each get a process of their own,
 * and the export writes the key so that importing it elsewhere keeps it.
 */
describe.each(engines)('isolation in batch import and export on %s', (engine) => {
  const gateways: LiveGateway[] = [];
  const clients: McpClient[] = [];
  let source: LiveGateway;

  const rootToken = async (gw: LiveGateway) => {
    const login = await gw.app.inject({ method: 'POST', url: '/api/auth/login', payload: { username: 'root', password: ADMIN_PASSWORD } });
    return login.json().data.access_token as string;
  };
  const api = async <T>(
    gw: LiveGateway,
    method: string,
    url: string,
    payload?: unknown,
  ): Promise<{ status: number; data: T; message: string }> => {
    const res = await gw.app.inject({
      method: method as 'GET',
      url: `/api${url}`,
      headers: { authorization: `Bearer ${await rootToken(gw)}` },
      ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
    });
    const json = res.json();
    return { status: res.statusCode, data: json.data as T, message: json.message as string };
  };
  /** Starts a batch import through the API and waits for its task; the items as the progress log has them. */
  const batchImport = async (gw: LiveGateway, doc: unknown) => {
    const started = await api<{ task_id: string }>(gw, 'POST', '/mcp_market/batch-import', doc);
    expect(started.status, started.message).toBe(200);
    let status: InstallStatus | undefined;
    await vi.waitFor(
      async () => {
        status = (await api<InstallStatus>(gw, 'GET', `/mcp_market/install_status/${started.data.task_id}`)).data;
        expect(status.status).toBe('completed');
      },
      { timeout: 30_000, interval: 200 },
    );
    const events = (status?.logs ?? []).map((line) => JSON.parse(line) as BatchProgressEvent);
    return Object.fromEntries(events.flatMap((e) => ('name' in e ? [[e.name, e] as const] : [])));
  };
  const isolationOf = async (gw: LiveGateway, name: string) =>
    (await api<{ name: string; isolation: string }[]>(gw, 'GET', '/mcp_market/installed')).data.find((s) => s.name === name)?.isolation;
  /** The process id each of two SDK clients (v1 and v2) is answered by. */
  const pidsOfTwoClients = async (gw: LiveGateway, service: string, key: string) => {
    const pair = await Promise.all([
      connect(gw.url, service, key, { sdk: 'v1', wire: 'http' }),
      connect(gw.url, service, key, { sdk: 'v2', wire: 'http' }),
    ]);
    clients.push(...pair);
    return Promise.all(pair.map(async (c) => (JSON.parse(textOf(await c.callTool('pids', {}))) as { pid: number }).pid));
  };

  beforeAll(async () => {
    source = await startGateway(engine);
    gateways.push(source);
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)));
  });
  afterAll(async () => {
    await Promise.all(gateways.map((gw) => gw.close()));
  });

  it('imports isolation: "session" as one process per client session, and refuses an unknown value with the reason', async () => {
    const items = await batchImport(source, {
      mcpServers: {
        'iso-session': { command: 'node', args: [FIXTURE_SERVER], isolation: 'session' },
        'iso-shared': { command: 'node', args: [FIXTURE_SERVER] },
        'iso-wrong': { command: 'node', args: [FIXTURE_SERVER], isolation: 'per-user' },
      },
    });
    expect(items['iso-session']?.status).toBe('success');
    expect(items['iso-shared']?.status).toBe('success');
    expect(items['iso-wrong']).toMatchObject({
      status: 'failed',
      message: expect.stringContaining('"isolation" must be "shared" or "session"'),
    });
    expect(await isolationOf(source, 'iso-session')).toBe('session');
    expect(await isolationOf(source, 'iso-shared')).toBe('shared');
    expect(await isolationOf(source, 'iso-wrong')).toBeUndefined();

    const { key } = await addUser(source.ctx, 'iso_alice');
    const [a, b] = await pidsOfTwoClients(source, 'iso-session', key);
    expect(a).not.toBe(b);
    const [c, d] = await pidsOfTwoClients(source, 'iso-shared', key);
    expect(c).toBe(d);
  });

  it('exports isolation and a fresh instance importing the document keeps it', async () => {
    const exported = await api<McpServersDocument>(source, 'GET', '/mcp_market/export');
    expect(exported.status).toBe(200);
    expect(exported.data.mcpServers['iso-session']).toMatchObject({ isolation: 'session' });
    // The default is left out: the document stays what other MCP clients expect.
    expect(exported.data.mcpServers['iso-shared']).not.toHaveProperty('isolation');

    const fresh = await startGateway(engine);
    gateways.push(fresh);
    const items = await batchImport(fresh, exported.data);
    expect(items['iso-session']?.status).toBe('success');
    expect(await isolationOf(fresh, 'iso-session')).toBe('session');
    expect(await isolationOf(fresh, 'iso-shared')).toBe('shared');
    const { key } = await addUser(fresh.ctx, 'iso_bob');
    const [a, b] = await pidsOfTwoClients(fresh, 'iso-session', key);
    expect(a).not.toBe(b);
  });
});
