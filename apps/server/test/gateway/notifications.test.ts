import path from 'node:path';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connect, expectOwnProgress, type McpClient, textOf, until } from './clients.js';
import { addService, addUser, type LiveGateway, startGateway } from './gateway-harness.js';
import { ACCEPT_BOTH } from './raw-http.js';

const probeServer = path.join(import.meta.dirname, 'fixtures/probe-server.mjs');

/** Notifications reach exactly the sessions they belong to; cancellations reach the upstream. */
describe('notifications and cancellation through a shared upstream', () => {
  let gw: LiveGateway;
  let alice: string;
  let bob: string;
  const open: McpClient[] = [];
  const client = async (...args: Parameters<typeof connect>) => {
    const c = await connect(...args);
    open.push(c);
    return c;
  };

  beforeAll(async () => {
    gw = await startGateway('sqlite');
    alice = (await addUser(gw.ctx, 'alice')).key;
    bob = (await addUser(gw.ctx, 'bob')).key;
    await addService(gw.ctx, { name: 'everything' });
    await addService(gw.ctx, { name: 'probe', args: [probeServer] });
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((c) => c.close()));
  });
  afterAll(async () => gw?.close());

  const probeState = async (c: McpClient) =>
    JSON.parse(textOf(await c.callTool('probe-state', {}))) as { waiting: number; cancelled: number };
  const streamOpen = (c: McpClient) => gw.ctx.gateway.session(c.sessionId() ?? '')?.streamOpen === true;

  it('delivers progress of a long-running tool only to the client that called it', async () => {
    const a = await client(gw.url, 'everything', alice, { sdk: 'v1', wire: 'http' });
    const b = await client(gw.url, 'everything', bob, { sdk: 'v2', wire: 'sse' });
    const c = await client(gw.url, 'everything', alice, { sdk: 'v2', wire: 'http' });
    const progressA: Progress[] = [];
    const progressB: Progress[] = [];
    const [ra, rb] = await Promise.all([
      a.callTool('trigger-long-running-operation', { duration: 1, steps: 5 }, { onprogress: (p) => progressA.push(p) }),
      b.callTool('trigger-long-running-operation', { duration: 0.6, steps: 3 }, { onprogress: (p) => progressB.push(p) }),
      ...Array.from({ length: 5 }, (_, i) => c.callTool('echo', { message: `c${i}` })),
    ]);
    expect(textOf(ra)).toContain('Steps: 5');
    expect(textOf(rb)).toContain('Steps: 3');
    expectOwnProgress(a, progressA, 5);
    expectOwnProgress(b, progressB, 3);
    expect(c.errors).toEqual([]);
    for (const x of [a, b, c]) expect(x.notifications.filter((n) => n.method === 'notifications/progress')).toEqual([]);
  });

  it('forwards a client cancellation to the upstream', async () => {
    const caller = await client(gw.url, 'probe', alice, { sdk: 'v1', wire: 'http' });
    const watcher = await client(gw.url, 'probe', bob, { sdk: 'v2', wire: 'http' });
    const before = (await probeState(watcher)).cancelled;
    const abort = new AbortController();
    const pending = caller.callTool('wait-for-cancel', {}, { signal: abort.signal });
    await until(async () => (await probeState(watcher)).waiting === 1, 'the call to reach the upstream');
    abort.abort();
    await expect(pending).rejects.toThrow();
    await until(async () => (await probeState(watcher)).cancelled === before + 1, 'the cancellation to reach the upstream');
    expect((await probeState(watcher)).waiting).toBe(0);
  });

  it('cancels upstream when a client disconnects from a pending POST', async () => {
    const watcher = await client(gw.url, 'probe', bob, { sdk: 'v1', wire: 'http' });
    const session = await client(gw.url, 'probe', alice, { sdk: 'v1', wire: 'http' });
    const before = (await probeState(watcher)).cancelled;
    const abort = new AbortController();
    const request = fetch(`${gw.url}/proxy/probe/mcp`, {
      method: 'POST',
      signal: abort.signal,
      headers: {
        accept: ACCEPT_BOTH,
        'content-type': 'application/json',
        authorization: `Bearer ${alice}`,
        'mcp-session-id': session.sessionId() ?? '',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'wait-for-cancel', arguments: {} } }),
    });
    await until(async () => (await probeState(watcher)).waiting === 1, 'the call to reach the upstream');
    abort.abort();
    await expect(request).rejects.toThrow();
    await until(async () => (await probeState(watcher)).cancelled === before + 1, 'the cancellation to reach the upstream');
  });

  it('sends resource updates only to the sessions that subscribed to that resource', async () => {
    const a = await client(gw.url, 'everything', alice, { sdk: 'v1', wire: 'http' });
    const b = await client(gw.url, 'everything', bob, { sdk: 'v2', wire: 'sse' });
    const c = await client(gw.url, 'everything', bob, { sdk: 'v2', wire: 'http' });
    await until(() => streamOpen(a) && streamOpen(c), 'the GET streams to open');
    const [first, second] = (await a.listResources()).resources.map((r) => r.uri);
    expect(first && second).toBeTruthy();
    await a.subscribe(first as string);
    await b.subscribe(second as string);
    await c.callTool('toggle-subscriber-updates', {});
    const updates = (x: McpClient) =>
      x.notifications.filter((n) => n.method === 'notifications/resources/updated').map((n) => n.params?.uri);
    await until(() => updates(a).length > 0 && updates(b).length > 0, 'both subscribers to get their update');
    await Promise.all([a.ping(), b.ping(), c.ping()]);
    expect(new Set(updates(a))).toEqual(new Set([first]));
    expect(new Set(updates(b))).toEqual(new Set([second]));
    expect(updates(c)).toEqual([]);
  });
});
