import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Role } from '@toolport/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from './clients.js';
import { addService, addUser, addUserWithToken, everythingEntry, type LiveGateway, startGateway } from './gateway-harness.js';
import { ENVELOPE, MODERN, type Mode, modernFixture, modernPost, PIN, texts, v2Client } from './modern-kit.js';

/**
 * The 2026-07-28 revision downstream (docs/protocol.md, decision 0031): the SDK v2 client in each of its
 * negotiation modes through /proxy and /group, against real server-everything upstreams (legacy era),
 * shared and isolated; the input-required round trip for the upstream's elicitation and sampling; the
 * header checks, 405s and the listen stream on the raw wire.
 */
describe('the 2026-07-28 era through the gateway', () => {
  let gw: LiveGateway;
  let alice: { id: number; key: string };
  let bob: { id: number; key: string };
  let sharedId: number;
  let isolatedId: number;
  const proxy = (name: string) => `${gw.url}/proxy/${name}/mcp`;
  const closers: (() => Promise<void>)[] = [];
  const open = async (url: string, key: string, mode: Mode) => {
    const opened = await v2Client(url, key, mode);
    closers.push(() => opened.client.close());
    return opened;
  };

  beforeAll(async () => {
    gw = await startGateway('sqlite');
    alice = await addUser(gw.ctx, 'alice');
    bob = await addUser(gw.ctx, 'bob');
    sharedId = await addService(gw.ctx, { name: 'everything' });
    const isolated = await addService(gw.ctx, { name: 'isolated' });
    isolatedId = isolated;
    await gw.ctx.db.updateTable('services').set({ isolation: 'session' }).where('id', '=', isolated).execute();
    gw.ctx.events.emit({ type: 'service.changed', serviceId: isolated });
    await addService(gw.ctx, { name: 'limited', rpdLimit: 3 });
    await addService(gw.ctx, { name: 'v2-upstream', args: [modernFixture] });
    // A group with the shared service as its member, created through the admin API.
    const { token } = await addUserWithToken(gw.ctx, 'admin1', Role.Admin);
    const created = await fetch(`${gw.url}/api/groups`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'team', members: [{ service_id: sharedId }] }),
    });
    expect(created.status).toBe(201);
    const isolatedGroup = await fetch(`${gw.url}/api/groups`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'isolated-team', members: [{ service_id: isolatedId }] }),
    });
    expect(isolatedGroup.status).toBe(201);
  });
  afterAll(async () => {
    for (const close of closers) await close().catch(() => undefined);
    await gw?.close();
  });

  it('serves the v2 client in legacy mode exactly as before: initialize and a session', async () => {
    const { client } = await open(proxy('everything'), alice.key, 'legacy');
    expect(client.getProtocolEra()).toBe('legacy');
    expect(client.getNegotiatedProtocolVersion()).toBe('2025-11-25');
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('echo');
    expect(texts(await client.callTool({ name: 'echo', arguments: { message: 'old' } }))).toBe('Echo: old');
  });

  for (const mode of ['auto', PIN] as const) {
    const label = mode === 'auto' ? 'auto' : 'pinned 2026-07-28';
    it(`connects a v2 client in ${label} mode in the modern era: lists, calls, and completes an elicitation and a sampling round trip`, async () => {
      const { client, asked } = await open(proxy('everything'), alice.key, mode);
      expect(client.getProtocolEra()).toBe('modern');
      expect(client.getNegotiatedProtocolVersion()).toBe(MODERN);
      const tools = (await client.listTools()).tools.map((t) => t.name);
      // The shared upstream was told every capability: the tools that need them are there.
      expect(tools).toEqual(expect.arrayContaining(['echo', 'trigger-elicitation-request', 'trigger-sampling-request']));
      expect(texts(await client.callTool({ name: 'echo', arguments: { message: 'new' } }))).toBe('Echo: new');
      const elicited = await client.callTool({ name: 'trigger-elicitation-request', arguments: {} });
      expect(texts(elicited)).toContain('Name: Grace Hopper');
      const sampled = await client.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'hi', maxTokens: 5 } });
      expect(texts(sampled)).toContain('sampled in the modern era');
      expect(asked).toEqual({ elicitation: 1, sampling: 1 });
    });
  }

  it('relays the round trip on an isolated upstream, which hears the request’s own capabilities', async () => {
    const { client, asked } = await open(proxy('isolated'), alice.key, PIN);
    expect(texts(await client.callTool({ name: 'trigger-elicitation-request', arguments: {} }))).toContain('Name: Grace Hopper');
    expect(asked.elicitation).toBe(1);
  });

  it('reaches an upstream built on the v2 SDK in its own era and carries its multi-round-trip tool to a modern client', async () => {
    const { client, asked } = await open(proxy('v2-upstream'), alice.key, PIN);
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(['confirm', 'crash', 'echo', 'wait']);
    expect(texts(await client.callTool({ name: 'echo', arguments: { message: 'hi' } }))).toBe('modern echo: hi');
    // The upstream's input-required answer reaches the client as it is (modern-upstream.test.ts looks at the wire).
    client.setRequestHandler('elicitation/create', async (req) => {
      asked.elicitation += 1;
      expect(req.params.message).toBe('Confirm deploy?');
      return { action: 'accept' as const, content: { ok: true } };
    });
    expect(texts(await client.callTool({ name: 'confirm', arguments: { action: 'deploy' } }))).toBe(
      'deploy: confirmed=true (state confirm:deploy)',
    );
    expect(asked.elicitation).toBe(1);
  });

  it('answers the raw wire in modern shape: discover, resultType, ttlMs and cacheScope, input_required and the retry', async () => {
    const discover = await modernPost(proxy('everything'), alice.key, { method: 'server/discover' });
    expect(discover.status).toBe(200);
    expect(discover.body.result).toMatchObject({ supportedVersions: [MODERN], resultType: 'complete', capabilities: { tools: {} } });
    const list = await modernPost(proxy('everything'), alice.key, { method: 'tools/list' });
    expect(list.body.result).toMatchObject({ resultType: 'complete', ttlMs: 0, cacheScope: 'private' });
    expect(list.body.result._meta['io.modelcontextprotocol/serverInfo'].name).toBe('toolport');

    const capable = { 'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } } };
    const call = { method: 'tools/call', params: { name: 'trigger-elicitation-request', arguments: {}, _meta: capable } };
    const first = await modernPost(proxy('everything'), alice.key, call);
    expect(first.body.result.resultType).toBe('input_required');
    const asked = Object.entries(first.body.result.inputRequests) as [string, { method: string }][];
    expect(asked.map(([, r]) => r.method)).toEqual(['elicitation/create']);
    const key = asked[0]?.[0] as string;
    const state = first.body.result.requestState as string;
    // Another user cannot resume it.
    const stolen = await modernPost(proxy('everything'), bob.key, { ...call, params: { ...call.params, requestState: state } });
    expect(stolen.body.error.message).toMatch(/requestState is unknown or has expired/);
    const retry = {
      ...call,
      id: 2,
      params: { ...call.params, requestState: state, inputResponses: { [key]: { action: 'accept', content: { name: 'Ada' } } } },
    };
    const done = await modernPost(proxy('everything'), alice.key, retry);
    // Answered under the retry's own id.
    expect(done.body.id).toBe(2);
    expect(done.body.result.resultType).toBe('complete');
    expect(texts(done.body.result)).toContain('Name: Ada');
    // Used once: the same state again is unknown.
    const again = await modernPost(proxy('everything'), alice.key, retry);
    expect(again.body.error.message).toMatch(/requestState is unknown or has expired/);
  });

  it('refuses headers that disagree with the body, or are missing, with 400 and -32020', async () => {
    const echo = { method: 'tools/call', params: { name: 'echo', arguments: { message: 'x' } } };
    const cases: Record<string, string | undefined>[] = [
      { 'mcp-method': 'tools/list' },
      { 'mcp-method': undefined },
      { 'mcp-name': 'add' },
      { 'mcp-name': undefined },
      { 'mcp-protocol-version': undefined },
      { 'mcp-protocol-version': '2025-11-25' },
    ];
    for (const headers of cases) {
      const res = await modernPost(proxy('everything'), alice.key, echo, headers);
      expect(res.status, JSON.stringify(headers)).toBe(400);
      expect(res.body.error.code, JSON.stringify(headers)).toBe(-32020);
    }
    // The same request with agreeing headers passes, including a Base64-encoded Mcp-Name.
    const ok = await modernPost(proxy('everything'), alice.key, echo, {
      'mcp-name': `=?base64?${Buffer.from('echo').toString('base64')}?=`,
    });
    expect(texts(ok.body.result)).toBe('Echo: x');
    // A modern version header on a request without the envelope: invalid params, 400.
    const bare = await fetch(proxy('everything'), {
      method: 'POST',
      headers: {
        authorization: `Bearer ${alice.key}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': MODERN,
        'mcp-method': 'tools/list',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(bare.status).toBe(400);
    expect(((await bare.json()) as { error: { code: number } }).error.code).toBe(-32602);
  });

  it('answers GET and DELETE from a modern client with 405, while a legacy GET without a session keeps its 400', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(proxy('everything'), {
        method,
        headers: { authorization: `Bearer ${alice.key}`, accept: 'text/event-stream', 'mcp-protocol-version': MODERN },
      });
      expect(res.status, method).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
    }
    const legacy = await fetch(proxy('everything'), { headers: { authorization: `Bearer ${alice.key}`, accept: 'text/event-stream' } });
    expect(legacy.status).toBe(400);
  });

  it('counts a modern call once, round trip or not, against the same daily limit as a legacy call', async () => {
    const { client } = await open(proxy('limited'), bob.key, PIN);
    expect(texts(await client.callTool({ name: 'trigger-elicitation-request', arguments: {} }))).toContain('Grace Hopper');
    expect(texts(await client.callTool({ name: 'echo', arguments: { message: '2' } }))).toBe('Echo: 2');
    expect(texts(await client.callTool({ name: 'echo', arguments: { message: '3' } }))).toBe('Echo: 3');
    await expect(client.callTool({ name: 'echo', arguments: { message: '4' } })).rejects.toThrow(/limit/i);
  });

  it('delivers list changes on a subscriptions/listen stream', async () => {
    const { client } = await open(proxy('everything'), alice.key, PIN);
    const changed = new Promise<void>((resolve) => client.setNotificationHandler('notifications/tools/list_changed', () => resolve()));
    const subscription = await client.listen({ toolsListChanged: true });
    // What a service's clients list changed (a tool override): every listener hears it.
    gw.ctx.events.emit({ type: 'tools.changed', serviceId: sharedId });
    await changed;
    await subscription.close();
  });

  /** A `subscriptions/listen` POST for tool list changes on the raw wire, as the first request of its user. */
  const listenRaw = (url: string, key: string, id: string, signal?: AbortSignal, lang = 'en') =>
    fetch(url, {
      method: 'POST',
      ...(signal ? { signal } : {}),
      headers: {
        'accept-language': lang,
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': MODERN,
        'mcp-method': 'subscriptions/listen',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: 'subscriptions/listen',
        params: { notifications: { toolsListChanged: true }, _meta: ENVELOPE },
      }),
    });

  it('acknowledges a listen stream before an isolated process has started, then delivers its list changes', async () => {
    // A service whose process takes a moment to start: the acknowledgement does not wait for it.
    const started = path.join(mkdtempSync(path.join(tmpdir(), 'slow-start-')), 'started');
    const slow = await addService(gw.ctx, {
      name: 'slow-start',
      command: process.execPath,
      args: [
        '-e',
        `setTimeout(() => { require('node:fs').writeFileSync(${JSON.stringify(started)}, ''); import(${JSON.stringify(pathToFileURL(everythingEntry).href)}); }, 1500)`,
        // process.argv[2], where server-everything reads its transport.
        'entry',
        'stdio',
      ],
    });
    await gw.ctx.db.updateTable('services').set({ isolation: 'session' }).where('id', '=', slow).execute();
    gw.ctx.events.emit({ type: 'service.changed', serviceId: slow });
    // On the raw wire, so that the listen stream is the first request that needs the user's process.
    const abort = new AbortController();
    const res = await listenRaw(proxy('slow-start'), alice.key, 'listen-1', abort.signal);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let buffered = '';
    const nextFrame = async (): Promise<{ method?: string; params?: Record<string, unknown> }> => {
      for (;;) {
        const end = buffered.indexOf('\n\n');
        if (end >= 0) {
          const frame = buffered.slice(0, end);
          buffered = buffered.slice(end + 2);
          const data = frame.split('\n').find((l) => l.startsWith('data: '));
          if (data) return JSON.parse(data.slice(6));
          continue;
        }
        const { value, done } = await reader.read();
        if (done) throw new Error('the listen stream ended');
        buffered += decoder.decode(value, { stream: true });
      }
    };
    try {
      const ack = await nextFrame();
      expect(ack).toMatchObject({
        method: 'notifications/subscriptions/acknowledged',
        params: { notifications: { toolsListChanged: true } },
      });
      // Acknowledged while the listen stream's process had not yet begun to serve.
      expect(existsSync(started)).toBe(false);
      await until(
        () => gw.ctx.gateway.links(slow).some((l) => l.state === 'ready' && l.attached > 0),
        'the listen stream attached',
        20_000,
      );
      gw.ctx.events.emit({ type: 'tools.changed', serviceId: slow });
      expect(await nextFrame()).toMatchObject({ method: 'notifications/tools/list_changed' });
    } finally {
      abort.abort();
    }
  });

  it('says on the listen stream, under its id, that the upstream could not start, and ends it', async () => {
    await addService(gw.ctx, { name: 'never-starts', command: process.execPath, args: ['-e', 'process.exit(3)'] });
    const res = await listenRaw(proxy('never-starts'), alice.key, 'listen-2');
    // The whole stream ends: the acknowledgement, then the refusal.
    const frames = (await res.text())
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .map((l) => JSON.parse(l.slice(6)));
    expect(frames[0]).toMatchObject({ method: 'notifications/subscriptions/acknowledged' });
    expect(frames.at(-1)).toMatchObject({ id: 'listen-2', error: { message: expect.stringMatching(/^Upstream unavailable: /) } });
    // In the client's language: the gateway's words translated, the diagnostic after them as it came.
    const zh = await listenRaw(proxy('never-starts'), alice.key, 'listen-3', undefined, 'zh-CN');
    const zhFrames = (await zh.text())
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .map((l) => JSON.parse(l.slice(6)));
    expect(zhFrames.at(-1)).toMatchObject({ id: 'listen-3', error: { message: expect.stringMatching(/^上游服务不可用：\S/) } });
    const call = await modernPost(
      proxy('never-starts'),
      alice.key,
      { method: 'tools/call', params: { name: 'echo', arguments: {} } },
      { 'accept-language': 'zh-CN' },
    );
    expect(call.body.error?.message).toMatch(/^上游服务不可用：\S/);
  });

  /** A listen stream subscribed to the first of two resources, and the upstream set to update them: only the first is heard. */
  const updatesHeard = async (url: string, user: { key: string }, toggle = 'toggle-subscriber-updates') => {
    const { client } = await open(url, user.key, PIN);
    const [first, second] = (await client.listResources()).resources.map((r) => r.uri) as [string, string];
    const updated: string[] = [];
    client.setNotificationHandler('notifications/resources/updated', (n) => void updated.push(n.params.uri));
    const subscription = await client.listen({ resourceSubscriptions: [first] });
    await client.callTool({ name: toggle, arguments: {} });
    try {
      await until(() => updated.length > 0, 'notifications/resources/updated on the listen stream', 10_000);
      expect(new Set(updated)).toEqual(new Set([first]));
      expect(updated).not.toContain(second);
    } finally {
      await client.callTool({ name: toggle, arguments: {} });
      await subscription.close();
    }
  };

  it('delivers updates of the resources a listen stream subscribed to, and only those', async () => {
    await updatesHeard(proxy('everything'), bob);
  });

  it('delivers them on an isolated service too: the listen stream is on the process the user’s requests run on', async () => {
    // Another user's listen stream on the same URI, opened first: it is on that user's process and hears none of Bob's.
    const other = (await open(proxy('isolated'), alice.key, PIN)).client;
    const uri = (await other.listResources()).resources[0]?.uri as string;
    const otherHeard: string[] = [];
    other.setNotificationHandler('notifications/resources/updated', (n) => void otherHeard.push(n.params.uri));
    const otherListen = await other.listen({ resourceSubscriptions: [uri] });
    try {
      await updatesHeard(proxy('isolated'), bob);
      expect(otherHeard).toEqual([]);
    } finally {
      await otherListen.close();
    }
    // Through a group whose member is isolated: the member's share of the listen stream is placed alike.
    await updatesHeard(`${gw.url}/group/isolated-team/mcp`, bob, 'isolated__toggle-subscriber-updates');
  });

  describe('through a group', () => {
    const group = () => `${gw.url}/group/team/mcp`;
    // A process only Alice's calls run on: Bob's ran on the one before, and a question that names no call may
    // come of his, so it would be refused (decision 0042).
    beforeAll(async () => void (await gw.ctx.gateway.reconnect(sharedId)));

    for (const mode of ['legacy', 'auto', PIN] as const) {
      const label = typeof mode === 'string' ? mode : 'pinned 2026-07-28';
      it(`lists, calls and completes an elicitation round trip with a v2 client in ${label} mode`, async () => {
        const { client, asked } = await open(group(), alice.key, mode);
        expect(client.getProtocolEra()).toBe(mode === 'legacy' ? 'legacy' : 'modern');
        expect((await client.listTools()).tools.map((t) => t.name)).toEqual(expect.arrayContaining(['everything__echo']));
        expect(texts(await client.callTool({ name: 'everything__echo', arguments: { message: 'team' } }))).toBe('Echo: team');
        if (mode === 'legacy') return;
        const elicited = await client.callTool({ name: 'everything__trigger-elicitation-request', arguments: {} });
        expect(texts(elicited)).toContain('Name: Grace Hopper');
        expect(asked.elicitation).toBe(1);
      });
    }

    it('checks the headers and answers GET and DELETE with 405 on the group face too', async () => {
      const mismatch = await modernPost(group(), alice.key, { method: 'tools/list' }, { 'mcp-method': 'tools/call' });
      expect(mismatch.status).toBe(400);
      expect(mismatch.body.error.code).toBe(-32020);
      const discover = await modernPost(group(), alice.key, { method: 'server/discover' });
      expect(discover.body.result).toMatchObject({ supportedVersions: [MODERN], capabilities: { tools: { listChanged: true } } });
      for (const method of ['GET', 'DELETE']) {
        const res = await fetch(group(), { method, headers: { authorization: `Bearer ${alice.key}`, 'mcp-protocol-version': MODERN } });
        expect(res.status, method).toBe(405);
      }
    });
  });
});
