import { type JSONRPCMessage, LATEST_PROTOCOL_VERSION, type ProgressNotification } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, callTool, fixtureSpec, stdioSpec, TestSession, testPool, toolText, until } from '../../../test/fixtures/upstream-kit.js';
import type { ServiceSpec } from '../catalog.js';
import type { UpstreamLink } from '../link-api.js';
import type { LinkPool } from './pool.js';

const DOC = 'demo://resource/static/document/architecture.md';
const initParams = (protocolVersion: string) => ({ protocolVersion, capabilities: {}, clientInfo: { name: 'test', version: '1' } });

describe('many sessions over one shared server-everything process', () => {
  const kit = testPool();
  let pool: LinkPool;
  let everything: ServiceSpec;
  const alice = new TestSession('alice', 1);
  const bob = new TestSession('bob', 2);
  let aliceLink: UpstreamLink;
  let bobLink: UpstreamLink;

  beforeAll(async () => {
    pool = kit.make();
    everything = kit.catalog.put(stdioSpec());
    aliceLink = await pool.acquire(everything, alice);
    bobLink = await pool.acquire(everything, bob);
  });
  afterAll(async () => {
    await pool.shutdown();
    kit.cleanup();
  });

  it('shares one link and answers initialize itself with the version each client asked for', async () => {
    expect(bobLink).toBe(aliceLink);
    const old = await aliceLink.initialize(alice, initParams('2025-03-26'));
    expect(old.protocolVersion).toBe('2025-03-26');
    expect(old.serverInfo.name).toBe('mcp-servers/everything');
    expect(old.capabilities.resources?.subscribe).toBe(true);
    // Upstream tasks would show one client's tasks to every other.
    expect(old.capabilities).not.toHaveProperty('tasks');
    const unknown = await bobLink.initialize(bob, initParams('1999-01-01'));
    expect(unknown.protocolVersion).toBe(LATEST_PROTOCOL_VERSION);
    expect(pool.links(everything.id)).toHaveLength(1);
  });

  it('gives each of two sessions using the same ids its own answers', async () => {
    const calls = [];
    for (let id = 1; id <= 25; id++) {
      calls.push(callTool(aliceLink, alice, id, 'echo', { message: `alice-${id}` }).then((r) => ({ who: 'alice', id, r })));
      calls.push(callTool(bobLink, bob, id, 'echo', { message: `bob-${id}` }).then((r) => ({ who: 'bob', id, r })));
    }
    for (const { who, id, r } of await Promise.all(calls)) {
      expect(r.response.id).toBe(id);
      expect(toolText(r)).toBe(`Echo: ${who}-${id}`);
    }
  });

  it('keeps string and number ids apart and answers ping locally', async () => {
    const [asString, asNumber] = await Promise.all([
      callTool(aliceLink, alice, '7', 'echo', { message: 'string' }),
      callTool(aliceLink, alice, 7, 'echo', { message: 'number' }),
    ]);
    expect(asString.response.id).toBe('7');
    expect(toolText(asString)).toBe('Echo: string');
    expect(asNumber.response.id).toBe(7);
    expect(toolText(asNumber)).toBe('Echo: number');
    const pong = await call(aliceLink, alice, { id: 'p', method: 'ping' });
    expect(pong.response).toEqual({ jsonrpc: '2.0', id: 'p', result: {} });
  });

  it('routes progress only to the request that asked, under its own token', async () => {
    const params = (token: string) => ({
      name: 'trigger-long-running-operation',
      arguments: { duration: 0.3, steps: 3 },
      _meta: { progressToken: token },
    });
    const [a, b] = await Promise.all([
      call(aliceLink, alice, { id: 1, method: 'tools/call', params: params('same-token') }),
      call(bobLink, bob, { id: 1, method: 'tools/call', params: params('same-token') }),
    ]);
    for (const r of [a, b]) {
      const progress = r.notifications.filter((n) => n.method === 'notifications/progress') as unknown as ProgressNotification[];
      expect(progress.map((n) => n.params.progress)).toEqual([1, 2, 3]);
      expect(progress.every((n) => n.params.progressToken === 'same-token')).toBe(true);
      expect(toolText(r)).toContain('Long running operation completed');
    }
    expect([...alice.notified, ...bob.notified].some((n) => n.method === 'notifications/progress')).toBe(false);
  });

  it('sends resource updates only to the sessions that subscribed', async () => {
    const updates = (s: TestSession) =>
      s.notified.filter((n) => n.method === 'notifications/resources/updated' && n.params?.uri === DOC).length;
    // server-everything sends every subscribed URI an update the moment updates are switched on
    // (then every 5 s): switching off and on again is an update now.
    let toggles = 0;
    const toggle = () => callTool(aliceLink, alice, `toggle-${++toggles}`, 'toggle-subscriber-updates');
    const updateNow = async () => {
      if (toggles % 2 === 1) await toggle();
      await toggle();
    };

    const sub = await call(aliceLink, alice, { id: 'sub', method: 'resources/subscribe', params: { uri: DOC } });
    expect(sub.response).toMatchObject({ id: 'sub', result: {} });
    await updateNow();
    await until(() => updates(alice) >= 1, 'an update for alice');
    expect(updates(bob)).toBe(0);

    // Bob joins: answered by the gateway, the upstream is already subscribed.
    const bobSub = await call(bobLink, bob, { id: 'bsub', method: 'resources/subscribe', params: { uri: DOC } });
    expect(bobSub.response).toMatchObject({ id: 'bsub', result: {} });
    const aliceBefore = updates(alice);
    await updateNow();
    await until(() => updates(bob) === 1 && updates(alice) === aliceBefore + 1, 'one more update for each');

    // Alice leaves; the upstream stays subscribed for Bob.
    await call(aliceLink, alice, { id: 'unsub', method: 'resources/unsubscribe', params: { uri: DOC } });
    const aliceAfter = updates(alice);
    await updateNow();
    await until(() => updates(bob) === 2, 'another update for bob');
    expect(updates(alice)).toBe(aliceAfter);
    if (toggles % 2 === 1) await toggle();
  });

  it('fans list_changed out to every attached session', async () => {
    const listChanged = (s: TestSession) => s.notified.filter((n) => n.method === 'notifications/resources/list_changed').length;
    const [a, b] = [listChanged(alice), listChanged(bob)];
    // Registering a session resource makes server-everything announce a changed resource list.
    const r = await callTool(aliceLink, alice, 'gz', 'gzip-file-as-resource', {
      name: 'hello.gz',
      data: 'data:text/plain;base64,aGVsbG8=',
    });
    expect('result' in r.response).toBe(true);
    await until(() => listChanged(alice) > a && listChanged(bob) > b, 'list_changed on both sessions');
  });
});

describe('a shared link in front of a fixture server', () => {
  const kit = testPool();
  let pool: LinkPool;
  let spec: ServiceSpec;
  const alice = new TestSession('alice', 1);
  const bob = new TestSession('bob', 2);
  let link: UpstreamLink;

  beforeAll(async () => {
    pool = kit.make();
    spec = kit.catalog.put(fixtureSpec(''));
    link = await pool.acquire(spec, alice);
    await pool.acquire(spec, bob);
    await link.initialize(alice, initParams('2025-06-18'));
  });
  afterAll(async () => {
    await pool.shutdown();
    kit.cleanup();
  });

  const cancelledUpstream = async (): Promise<number[]> => JSON.parse(toolText(await callTool(link, alice, 'c', 'cancelled')));

  it('answers ping without asking the upstream (which refuses it)', async () => {
    const pong = await call(link, alice, { id: 1, method: 'ping' });
    expect(pong.response).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
  });

  it('advertises sampling, elicitation in both modes and roots upstream in shared mode, so no tool vanishes', async () => {
    const result = await link.initialize(bob, initParams('2025-06-18'));
    expect(result.instructions).toBe('capabilities seen: {"sampling":{},"elicitation":{"form":{},"url":{}},"roots":{}}');
  });

  it('forwards a client cancellation under the rewritten id and answers the client', async () => {
    const pending = callTool(link, alice, 'slow', 'sleep', { ms: 60_000 });
    await new Promise((r) => setTimeout(r, 50));
    link.notify(alice, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'slow', reason: 'changed my mind' } });
    const answer = await pending;
    expect('error' in answer.response && answer.response.error.message).toBe('request cancelled');
    const ids = await cancelledUpstream();
    expect(ids).toHaveLength(1);
    expect(typeof ids[0]).toBe('number');
  });

  it('cancels upstream when the client goes away, and answers nothing', async () => {
    const before = (await cancelledUpstream()).length;
    const abort = new AbortController();
    let answered = false;
    link.request(
      alice,
      { jsonrpc: '2.0', id: 'gone', method: 'tools/call', params: { name: 'sleep', arguments: { ms: 60_000 } } },
      { notification: () => undefined, response: () => (answered = true) },
      abort.signal,
    );
    await new Promise((r) => setTimeout(r, 50));
    abort.abort();
    await until(async () => (await cancelledUpstream()).length > before, 'the upstream to see the cancellation');
    expect(answered).toBe(false);
  });

  it('answers with a JSON-RPC error and cancels upstream when a call outlives the per-call timeout', async () => {
    const before = (await cancelledUpstream()).length;
    kit.options.set('UpstreamCallTimeoutSeconds', '1');
    try {
      const r = await callTool(link, alice, 't', 'sleep', { ms: 60_000 });
      expect('error' in r.response && r.response.error).toMatchObject({ code: -32001 });
      expect(r.response.id).toBe('t');
    } finally {
      kit.options.set('UpstreamCallTimeoutSeconds', '300');
    }
    expect((await cancelledUpstream()).length).toBe(before + 1);
  });

  it('gives a log message to the one request in flight, and keeps it from everyone when ambiguous', async () => {
    const r = await callTool(link, alice, 'log', 'log-then-answer');
    expect(r.notifications.map((n) => n.method)).toEqual(['notifications/message']);

    await callTool(link, alice, 'later', 'log-later');
    await until(() => kit.serviceLog.of(spec.id).some((m) => m.includes('unattributed log line')), 'the log line in the service log');
    expect([...alice.notified, ...bob.notified].some((n) => n.method === 'notifications/message')).toBe(false);
  });

  it('answers upstream pings itself in shared mode, and refuses a request its client cannot take', async () => {
    const r = await callTool(link, alice, 'ask', 'ask-client');
    const { ping, sampling } = JSON.parse(toolText(r));
    expect(ping.result).toEqual({});
    expect(sampling.error.message).toContain('sampling/createMessage is not available');
  });

  it('cancels a detached session’s requests upstream and answers each with an error', async () => {
    const carol = new TestSession('carol', 3);
    const carolLink = await pool.acquire(spec, carol);
    const before = (await cancelledUpstream()).length;
    const answers: JSONRPCMessage[] = [];
    carolLink.request(
      carol,
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'sleep', arguments: { ms: 60_000 } } },
      { notification: () => undefined, response: (m) => void answers.push(m) },
    );
    await new Promise((r) => setTimeout(r, 50));
    pool.release(spec.id, carol);
    expect(answers).toEqual([
      { jsonrpc: '2.0', id: 1, error: { code: -32000, message: 'session closed: detached from the upstream connection' } },
    ]);
    await until(async () => (await cancelledUpstream()).length > before, 'the cancellation upstream');
  });
});
