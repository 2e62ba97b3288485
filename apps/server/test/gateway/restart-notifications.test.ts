import { Role } from '@toolport/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, connectUrl, type McpClient, until } from './clients.js';
import {
  addService,
  addUser,
  addUserWithToken,
  apiCall,
  everythingEntry,
  type LiveGateway,
  liveChildren,
  startGateway,
} from './gateway-harness.js';
import { PIN, v2Client } from './modern-kit.js';

const TOOLS = 'notifications/tools/list_changed';
const RESOURCES = 'notifications/resources/list_changed';

/**
 * One upstream restart is one change of its lists (docs/decisions/0051-as-direct.md): every session attached to
 * it hears `tools/list_changed` exactly once, however many the fresh process sends while it starts
 * (server-everything registers its capability-dependent tools one by one after `initialized`, each with a
 * list_changed of its own). Real clients on /proxy and on a group, over streamable HTTP and SSE, SDK v1 and v2,
 * and a 2026-07-28 listen stream; the process killed once and restarted through the API once.
 */
describe('list changes after an upstream restart', () => {
  let gw: LiveGateway;
  let serviceId: number;
  const sessions: { name: string; seen: string[] }[] = [];
  const closers: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    gw = await startGateway('sqlite');
    serviceId = await addService(gw.ctx, { name: 'everything' });
    const admin = await addUserWithToken(gw.ctx, 'admin1', Role.Admin);
    const created = await apiCall(gw.url, admin.token, 'POST', '/groups', { name: 'team', members: [{ service_id: serviceId }] });
    expect(created.status).toBe(201);
    const alice = await addUser(gw.ctx, 'alice');
    const bob = await addUser(gw.ctx, 'bob');
    const add = async (name: string, client: McpClient) => {
      closers.push(() => client.close());
      // Each session has listed what it is told about later.
      await client.listTools();
      await client.listResources();
      sessions.push({
        name,
        get seen() {
          return client.notifications.map((n) => n.method);
        },
      });
    };
    const group = (key: string, wire: 'http' | 'sse', sdk: 'v1' | 'v2') =>
      connectUrl(new URL(`${gw.url}/group/team/${wire === 'http' ? 'mcp' : 'sse'}`), key, { sdk, wire });
    await add('proxy http v1', await connect(gw.url, 'everything', alice.key, { sdk: 'v1', wire: 'http' }));
    await add('proxy sse v1', await connect(gw.url, 'everything', bob.key, { sdk: 'v1', wire: 'sse' }));
    await add('proxy http v2', await connect(gw.url, 'everything', alice.key, { sdk: 'v2', wire: 'http' }));
    await add('group http v1', await group(alice.key, 'http', 'v1'));
    // The same user's second group session gets its lists from the group's cache: it must hear the member all the same.
    await add('group sse v1', await group(alice.key, 'sse', 'v1'));
    await add('group sse v2', await group(bob.key, 'sse', 'v2'));
    // A 2026-07-28 client's listen stream on the service.
    const { client } = await v2Client(`${gw.url}/proxy/everything/mcp`, bob.key, PIN);
    const heard: string[] = [];
    client.setNotificationHandler(TOOLS, () => void heard.push(TOOLS));
    client.setNotificationHandler(RESOURCES, () => void heard.push(RESOURCES));
    const listen = await client.listen({ toolsListChanged: true, resourcesListChanged: true });
    closers.push(async () => {
      await listen.close();
      await client.close();
    });
    sessions.push({ name: 'listen stream', seen: heard });
  });
  afterAll(async () => {
    for (const close of closers) await close().catch(() => undefined);
    await gw?.close();
  });

  /** The one server-everything process this gateway runs (the shared link's; each test file runs in a process of its own). */
  const pidOf = () => {
    const pids = liveChildren(everythingEntry);
    expect(pids).toHaveLength(1);
    return pids[0] as number;
  };

  for (const how of ['killed', 'restarted through the API'] as const) {
    it(`tells every session once when the tool server is ${how}`, async () => {
      const before = sessions.map((s) => s.seen.length);
      const pid = pidOf();
      expect(pid).toBeGreaterThan(0);
      // The process leads its own group (docs/architecture.md §3): the whole group goes.
      if (how === 'killed') process.kill(-pid, 'SIGKILL');
      else await gw.ctx.gateway.reconnect(serviceId);
      // The gateway's own announcement ends with resources/list_changed; a stream delivers in order, so what
      // came before it on each session is all there once it arrived.
      const since = (i: number) => (sessions[i] as { seen: string[] }).seen.slice(before[i]);
      // (Not arriving is reported by the comparison below, which names the session.) The bound is for a loaded machine:
      // the restart's backoff, a cold start of server-everything and its handshake come first.
      await until(() => sessions.every((_, i) => since(i).includes(RESOURCES)), 'resources/list_changed on every session', 40_000).catch(
        () => undefined,
      );
      await until(() => liveChildren(everythingEntry).length === 1, 'one server-everything process after the restart');
      expect(pidOf()).not.toBe(pid);
      const counts = Object.fromEntries(
        sessions.map((s, i) => [
          s.name,
          { tools: since(i).filter((m) => m === TOOLS).length, resources: since(i).filter((m) => m === RESOURCES).length },
        ]),
      );
      expect(counts).toEqual(Object.fromEntries(sessions.map((s) => [s.name, { tools: 1, resources: 1 }])));
    });
  }
});
