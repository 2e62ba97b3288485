import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type McpClient, textOf } from '../gateway/clients.js';
import { addService, addUser, type LiveGateway, startGateway } from '../gateway/gateway-harness.js';
import { type FakeRemote, type Misbehaviour, startFakeRemote } from './fake-remote-mcp.js';

const CALL_TIMEOUT_S = 2;

/**
 * Remote upstreams that misbehave on a call, each over streamable HTTP and the legacy HTTP+SSE
 * transport: the caller (a real SDK client through the gateway) gets a clear JSON-RPC error (or its
 * answer, when the junk around it can be skipped), well before the SDK's own 60 s, and the next call
 * works once the remote behaves again.
 */
describe.each([
  ['streamableHttp', '/mcp'],
  ['sse', '/sse'],
] as const)('a remote %s upstream that misbehaves', (type, path) => {
  let gw: LiveGateway;
  let remote: FakeRemote;
  let c: McpClient;

  beforeAll(async () => {
    remote = await startFakeRemote();
    gw = await startGateway('sqlite');
    const { key } = await addUser(gw.ctx, 'alice');
    await addService(gw.ctx, { name: 'remote', type, command: `${remote.url}${path}`, args: [] });
    c = await connect(gw.url, 'remote', key, { sdk: 'v1', wire: 'http' });
  });
  afterAll(async () => {
    await c?.close().catch(() => undefined);
    await gw?.close();
    await remote?.close();
  });

  const lostStream = /upstream unavailable: tool server SSE stream lost/;
  const expected: Record<Exclude<Misbehaviour, 'ok'>, RegExp | string> = {
    hang: `upstream did not answer tools/call within ${CALL_TIMEOUT_S} s`,
    reset: type === 'sse' ? lostStream : /the connection to the remote server broke before it answered/,
    garbage: 'echo: garbage',
    badjson: 'the remote server sent an answer that is not valid JSON',
    truncated: type === 'sse' ? lostStream : 'the remote server ended its answer stream without answering',
  };

  it.each(Object.keys(expected) as Exclude<Misbehaviour, 'ok'>[])('%s: a clear answer, then the next call works', async (mode) => {
    expect(textOf(await c.callTool('echo', { text: 'before' }))).toBe('echo: before');
    remote.mode = mode;
    // The per-call timeout preference, short for the server that never answers only: a restart after a
    // lost SSE stream waits out its backoff (1 s, then 2 s) within the call that follows.
    if (mode === 'hang') await gw.ctx.options.set('UpstreamCallTimeoutSeconds', CALL_TIMEOUT_S);
    const startedAt = Date.now();
    const outcome = await c.callTool('echo', { text: mode }, { timeout: 60_000 }).then(
      (r) => textOf(r),
      (err: Error) => err.message,
    );
    await gw.ctx.options.set('UpstreamCallTimeoutSeconds', 300);
    const want = expected[mode];
    if (typeof want === 'string') expect(outcome).toContain(want);
    else expect(outcome).toMatch(want);
    // Answered by the gateway's own timeout at the latest, not left to the client's.
    expect(Date.now() - startedAt).toBeLessThan((CALL_TIMEOUT_S + 8) * 1000);
    remote.mode = 'ok';
    expect(textOf(await c.callTool('echo', { text: `after ${mode}` }))).toBe(`echo: after ${mode}`);
  });
});
