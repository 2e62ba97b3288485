import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addService, addUser, type LiveGateway, setServiceEnabled, setUserEnabled, startGateway } from './gateway-harness.js';
import { initializeBody, openSession, post, raw, SseReader, sseMessages } from './raw-http.js';

const echo = (id: number | string, message: string) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'echo', arguments: { message } },
});
const rpcError = (code: number, message: unknown = expect.any(String)) => ({ jsonrpc: '2.0', id: null, error: { code, message } });

/** What a client sees when something is wrong: statuses and JSON-RPC bodies as docs/protocol.md lists them. */
describe('proxy routes: authentication, validation and session rules', () => {
  let gw: LiveGateway;
  let alice: { id: number; key: string };
  let bob: { id: number; key: string };
  let mcp: string;
  let otherMcp: string;

  beforeAll(async () => {
    gw = await startGateway('sqlite');
    alice = await addUser(gw.ctx, 'alice');
    bob = await addUser(gw.ctx, 'bob');
    await addService(gw.ctx, { name: 'everything' });
    await addService(gw.ctx, { name: 'other' });
    mcp = `${gw.url}/proxy/everything/mcp`;
    otherMcp = `${gw.url}/proxy/other/mcp`;
  });
  afterAll(async () => gw?.close());

  describe('who may call', () => {
    it('refuses a missing or wrong API key with 401 on every route', async () => {
      for (const key of [undefined, 'tpk_not-a-real-key']) {
        const res = await post(mcp, key, initializeBody());
        expect(res.status).toBe(401);
        expect(res.json()).toMatchObject(rpcError(-32000));
        const sse = await raw(`${gw.url}/proxy/everything/sse${key ? `?key=${key}` : ''}`, { headers: { accept: 'text/event-stream' } });
        expect(sse.status).toBe(401);
      }
    });

    it('answers 404 for an unknown service and 503 for a disabled one', async () => {
      const unknown = await post(`${gw.url}/proxy/no-such-service/mcp`, alice.key, initializeBody());
      expect(unknown.status).toBe(404);
      expect(unknown.json()).toMatchObject(rpcError(-32000, expect.stringContaining('no-such-service')));
      const id = await addService(gw.ctx, { name: 'switched-off', enabled: false });
      const disabled = await post(`${gw.url}/proxy/switched-off/mcp`, alice.key, initializeBody());
      expect(disabled.status).toBe(503);
      expect(disabled.json()).toMatchObject(rpcError(-32000));
      await setServiceEnabled(gw.ctx, id, true);
      expect((await post(`${gw.url}/proxy/switched-off/mcp`, alice.key, initializeBody())).status).toBe(200);
    });

    it('refuses a disabled user at once, sessions included, and lets them back when re-enabled', async () => {
      const carol = await addUser(gw.ctx, 'carol');
      const session = await openSession(mcp, carol.key);
      await setUserEnabled(gw.ctx, carol.id, false);
      expect((await post(mcp, carol.key, echo(1, 'x'), { 'mcp-session-id': session })).status).toBe(401);
      await setUserEnabled(gw.ctx, carol.id, true);
      const back = await post(mcp, carol.key, echo(2, 'back'), { 'mcp-session-id': session });
      expect(back.status).toBe(200);
      expect(back.json()).toMatchObject({ id: 2, result: { content: [{ text: 'Echo: back' }] } });
    });

    it('refuses a foreign browser Origin with 403 and accepts the gateway its own origin and the server address', async () => {
      const foreign = await post(mcp, alice.key, initializeBody(), { origin: 'https://evil.example' });
      expect(foreign.status).toBe(403);
      expect(foreign.json()).toMatchObject(rpcError(-32000, expect.stringContaining('Origin')));
      expect((await post(mcp, alice.key, initializeBody(), { origin: gw.url })).status).toBe(200);
      await gw.ctx.options.set('ServerAddress', 'https://tools.example.com');
      expect((await post(mcp, alice.key, initializeBody(), { origin: 'https://tools.example.com' })).status).toBe(200);
      const sse = await raw(`${gw.url}/proxy/everything/sse?key=${alice.key}`, { headers: { origin: 'null' } });
      expect(sse.status).toBe(403);
    });
  });

  describe('what a request must look like', () => {
    it('answers 406 without the right Accept, 415 for a non-JSON body, 413 over 4 MiB, 400 for bad JSON', async () => {
      expect((await post(mcp, alice.key, initializeBody(), { accept: 'application/json' })).status).toBe(406);
      expect((await post(mcp, alice.key, 'x', { 'content-type': 'text/plain' })).status).toBe(415);
      const huge = JSON.stringify({ ...echo(1, 'x'.repeat(4 * 1024 * 1024)) });
      const tooLarge = await post(mcp, alice.key, huge);
      expect(tooLarge.status).toBe(413);
      expect(tooLarge.json()).toMatchObject(rpcError(-32000, expect.stringContaining('4194304')));
      const badJson = await post(mcp, alice.key, '{"jsonrpc":');
      expect(badJson.status).toBe(400);
      expect(badJson.json()).toMatchObject(rpcError(-32700));
      const notRpc = await post(mcp, alice.key, { hello: 'world' });
      expect(notRpc.status).toBe(400);
      expect(notRpc.json()).toMatchObject(rpcError(-32700));
    });

    it('answers 405 with Allow to other methods', async () => {
      const res = await raw(mcp, { method: 'PUT', headers: { authorization: `Bearer ${alice.key}` } });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('GET, POST, DELETE');
      expect((await raw(`${gw.url}/proxy/everything/sse`, { method: 'POST' })).status).toBe(405);
    });
  });

  describe('sessions', () => {
    it('mints a signed session id and answers plain JSON when no notification comes first', async () => {
      const init = await post(mcp, alice.key, initializeBody('2025-06-18'));
      expect(init.status).toBe(200);
      expect(init.headers.get('content-type')).toBe('application/json');
      expect(init.json()).toMatchObject({ id: 1, result: { protocolVersion: '2025-06-18', serverInfo: expect.any(Object) } });
      const id = init.headers.get('mcp-session-id') ?? '';
      expect(id).toMatch(/^[\x21-\x7e]+$/);
      const res = await post(mcp, alice.key, echo(7, 'fast'), { 'mcp-session-id': id, 'mcp-protocol-version': '2025-06-18' });
      expect(res.headers.get('content-type')).toBe('application/json');
      expect(res.json()).toEqual({ jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: 'Echo: fast' }] } });
    });

    it('switches to an event stream when progress comes before the result', async () => {
      const id = await openSession(mcp, alice.key);
      const res = await post(
        mcp,
        alice.key,
        {
          jsonrpc: '2.0',
          id: 'long',
          method: 'tools/call',
          params: { name: 'trigger-long-running-operation', arguments: { duration: 0.3, steps: 3 }, _meta: { progressToken: 'p1' } },
        },
        { 'mcp-session-id': id },
      );
      expect(res.headers.get('content-type')).toBe('text/event-stream');
      // server-everything also logs now and then: a log line while this is its only call in flight rides on this stream
      // too (as it should), so only the call's own messages are counted.
      const messages = sseMessages(res.text).filter((m) => m.method !== 'notifications/message');
      expect(messages.map((m) => m.method ?? 'response')).toEqual([
        'notifications/progress',
        'notifications/progress',
        'notifications/progress',
        'response',
      ]);
      expect(messages[0]).toMatchObject({ params: { progressToken: 'p1', progress: 1, total: 3 } });
      expect(messages[3]).toMatchObject({ id: 'long', result: { content: [{ text: expect.stringContaining('completed') }] } });
    });

    it('requires a session id (400) and refuses unknown, forged or foreign ones (404, -32001)', async () => {
      expect((await post(mcp, alice.key, echo(1, 'x'))).status).toBe(400);
      const unknown = await post(mcp, alice.key, echo(1, 'x'), { 'mcp-session-id': 'not-a-session' });
      expect(unknown.status).toBe(404);
      expect(unknown.json()).toMatchObject(rpcError(-32001));
      const id = await openSession(mcp, alice.key);
      const forged = `${id.slice(0, -3)}${id.endsWith('AAA') ? 'BBB' : 'AAA'}`;
      expect((await post(mcp, alice.key, echo(1, 'x'), { 'mcp-session-id': forged })).status).toBe(404);
      // Another user's key with Alice's session, and Alice's session on another service.
      expect((await post(mcp, bob.key, echo(1, 'x'), { 'mcp-session-id': id })).status).toBe(404);
      expect((await post(otherMcp, alice.key, echo(1, 'x'), { 'mcp-session-id': id })).status).toBe(404);
      expect((await post(mcp, alice.key, echo(1, 'still mine'), { 'mcp-session-id': id })).status).toBe(200);
    });

    it('refuses an unsupported MCP-Protocol-Version, naming the supported ones', async () => {
      const id = await openSession(mcp, alice.key);
      const res = await post(mcp, alice.key, echo(1, 'x'), { 'mcp-session-id': id, 'mcp-protocol-version': '1999-01-01' });
      expect(res.status).toBe(400);
      expect(res.json()).toMatchObject(rpcError(-32000, expect.stringContaining('2025-11-25')));
    });

    it('refuses to initialize a live session again', async () => {
      const id = await openSession(mcp, alice.key);
      const again = await post(mcp, alice.key, initializeBody(), { 'mcp-session-id': id });
      expect(again.status).toBe(400);
      expect(again.json()).toMatchObject(rpcError(-32600));
    });

    it('splits batches of 2025-03-26 sessions and refuses them from later versions', async () => {
      const old = await openSession(mcp, alice.key, '2025-03-26');
      const batch = await post(mcp, alice.key, [echo(1, 'one'), { jsonrpc: '2.0', method: 'notifications/ping-ignored' }, echo(2, 'two')], {
        'mcp-session-id': old,
      });
      expect(batch.status).toBe(200);
      const answers = batch.json() as { id: number; result: { content: { text: string }[] } }[];
      expect(answers.map((a) => [a.id, a.result.content[0]?.text]).sort()).toEqual([
        [1, 'Echo: one'],
        [2, 'Echo: two'],
      ]);
      const current = await openSession(mcp, alice.key, '2025-06-18');
      const refused = await post(mcp, alice.key, [echo(1, 'one')], { 'mcp-session-id': current });
      expect(refused.status).toBe(400);
      expect(refused.json()).toMatchObject(rpcError(-32600));
    });

    it('answers 202 to notifications alone', async () => {
      const id = await openSession(mcp, alice.key);
      const res = await post(mcp, alice.key, { jsonrpc: '2.0', method: 'notifications/roots/list_changed' }, { 'mcp-session-id': id });
      expect(res.status).toBe(202);
    });

    it('allows one GET stream per session (409 for a second)', async () => {
      const id = await openSession(mcp, alice.key);
      const headers = { accept: 'text/event-stream', authorization: `Bearer ${alice.key}`, 'mcp-session-id': id };
      const first = await fetch(mcp, { headers });
      expect(first.status).toBe(200);
      expect(first.headers.get('content-type')).toBe('text/event-stream');
      const second = await raw(mcp, { headers });
      expect(second.status).toBe(409);
      await first.body?.cancel();
      expect((await raw(mcp, { headers: { ...headers, accept: 'application/json' } })).status).toBe(406);
    });

    it('ends a session on DELETE: the id is revoked and answered 404 afterwards', async () => {
      const id = await openSession(mcp, alice.key);
      const del = await raw(mcp, { method: 'DELETE', headers: { authorization: `Bearer ${alice.key}`, 'mcp-session-id': id } });
      expect(del.status).toBe(200);
      const after = await post(mcp, alice.key, echo(1, 'x'), { 'mcp-session-id': id });
      expect(after.status).toBe(404);
      expect(after.json()).toMatchObject(rpcError(-32001));
      const rows = await gw.ctx.db.selectFrom('revoked_sessions').selectAll().execute();
      expect(rows.length).toBeGreaterThan(0);
      expect(rows.every((r) => r.session_hash !== id && r.expires_at > Date.now())).toBe(true);
    });
  });

  describe('legacy HTTP+SSE transport', () => {
    it('refuses unknown sessions and sessions of another user on the message endpoint', async () => {
      const unknown = await post(`${gw.url}/proxy/everything/message?sessionId=nope`, alice.key, echo(1, 'x'));
      expect(unknown.status).toBe(404);
      const stream = SseReader.of(
        await fetch(`${gw.url}/proxy/everything/sse?key=${alice.key}`, { headers: { accept: 'text/event-stream' } }),
      );
      const endpoint = await stream.next();
      expect(endpoint.event).toBe('endpoint');
      expect(endpoint.data).toMatch(/^\/proxy\/everything\/message\?sessionId=[\w-]+&key=tpk_/);
      const asBob = await post(`${gw.url}${endpoint.data.replace(/&key=.*$/, '')}`, bob.key, echo(1, 'x'));
      expect(asBob.status).toBe(404);
      const asAlice = await post(`${gw.url}${endpoint.data}`, undefined, initializeBody());
      expect(asAlice.status).toBe(202);
      expect(await stream.message()).toMatchObject({ id: 1, result: { serverInfo: expect.any(Object) } });
      await stream.cancel();
    });

    it('streams every progress notification and then the result, in order, to the caller only', async () => {
      const open = async (key: string) => {
        const stream = SseReader.of(
          await fetch(`${gw.url}/proxy/everything/sse`, { headers: { accept: 'text/event-stream', authorization: `Bearer ${key}` } }),
        );
        const url = `${gw.url}${(await stream.next()).data}`;
        expect(url).not.toContain('key=');
        await post(url, key, initializeBody('2024-11-05'));
        await stream.message();
        return { stream, url };
      };
      const caller = await open(alice.key);
      const bystander = await open(bob.key);
      const call = {
        jsonrpc: '2.0',
        id: 5,
        method: 'tools/call',
        params: { name: 'trigger-long-running-operation', arguments: { duration: 0.3, steps: 3 }, _meta: { progressToken: 'tok' } },
      };
      expect((await post(caller.url, alice.key, call)).status).toBe(202);
      const seen = [
        await caller.stream.message(),
        await caller.stream.message(),
        await caller.stream.message(),
        await caller.stream.message(),
      ];
      expect(seen.map((m) => (m.method === 'notifications/progress' ? (m.params as { progress: number }).progress : m.id))).toEqual([
        1, 2, 3, 5,
      ]);
      // The bystander's stream next carries its own answer, nothing of the caller's.
      await post(bystander.url, bob.key, { jsonrpc: '2.0', id: 'mine', method: 'ping' });
      expect(await bystander.stream.message()).toEqual({ jsonrpc: '2.0', id: 'mine', result: {} });
      await Promise.all([caller.stream.cancel(), bystander.stream.cancel()]);
    });
  });
});
