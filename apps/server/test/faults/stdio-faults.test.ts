import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURE_SERVER } from '../fixtures/upstream-kit.js';
import { connect, type McpClient, textOf, until } from '../gateway/clients.js';
import { addService, addUser, type LiveGateway, liveChildren, startGateway } from '../gateway/gateway-harness.js';

/**
 * Tool servers that misbehave while serving calls, end to end: a real SDK client through the
 * gateway's HTTP endpoint to the fixture server (test/fixtures/fixture-mcp-server.mjs).
 */

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
/** Memory the gateway (this process) holds after a full collection: heap plus buffers. */
const heldBytes = () => {
  gc();
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
};

const MAX_RSS_MB = 150;

describe('misbehaving stdio tool servers, through the gateway', () => {
  let gw: LiveGateway;
  let key: string;
  let userId: number;
  const ids: Record<string, number> = {};
  const open: McpClient[] = [];
  const client = async (service: string) => {
    const c = await connect(gw.url, service, key, { sdk: 'v1', wire: 'http' });
    open.push(c);
    return c;
  };
  const logOf = async (serviceId: number) => {
    await gw.ctx.serviceLog.flush();
    return (await gw.ctx.db.selectFrom('service_logs').select('message').where('service_id', '=', serviceId).orderBy('id').execute()).map(
      (r) => r.message,
    );
  };
  const pidsOf = async (c: McpClient) => JSON.parse(textOf(await c.callTool('pids', {}))) as { pid: number };
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return liveChildren(FIXTURE_SERVER).includes(pid);
    } catch {
      return false;
    }
  };
  const fixture = (mode: string) => ({ args: [FIXTURE_SERVER], env: { FIXTURE_MODE: mode } });

  beforeAll(async () => {
    gw = await startGateway('sqlite', { STDIO_MAX_RSS_MB: String(MAX_RSS_MB) });
    ({ key, id: userId } = await addUser(gw.ctx, 'alice'));
    ids.leaky = await addService(gw.ctx, { name: 'leaky', ...fixture('leak=40') });
    ids.noisy = await addService(gw.ctx, { name: 'noisy', ...fixture('') });
    ids.crashy = await addService(gw.ctx, { name: 'crashy', ...fixture('') });
  });
  afterAll(async () => {
    await Promise.all(open.map((c) => c.close().catch(() => undefined)));
    await gw?.close();
    // Every process the gateway started is gone with it, restarted ones included.
    expect(liveChildren(FIXTURE_SERVER)).toEqual([]);
  });

  it('stops a server whose memory grows without bound, answers its call, says why, and restarts it', { timeout: 40_000 }, async () => {
    const c = await client('leaky');
    const { pid } = await pidsOf(c);
    const startedAt = Date.now();
    const waiting = c.callTool('sleep', { ms: 60_000 }, { timeout: 120_000 });
    const reason = `over the limit of ${MAX_RSS_MB} MiB (STDIO_MAX_RSS_MB)`;
    await expect(waiting).rejects.toThrow(reason);
    // Well before the minute the call would have slept: the watch ended it.
    expect(Date.now() - startedAt).toBeLessThan(30_000);
    expect(alive(pid)).toBe(false);
    const log = await logOf(ids.leaky as number);
    expect(log.some((m) => m.startsWith('tool server stopped by the gateway: it used ') && m.endsWith(reason))).toBe(true);
    expect(log.some((m) => m.endsWith(`${reason}; restarting in 1 s`))).toBe(true);
    // The supervisor brought it back: the next call is served by a new process.
    const again = await pidsOf(c);
    expect(again.pid).not.toBe(pid);
    // It keeps leaking, so it is stopped again, the backoff now doubled.
    await until(async () => (await logOf(ids.leaky as number)).some((m) => m.endsWith(`${reason}; restarting in 2 s`)), 'a second stop');
  });

  it('keeps serving through megabytes of stdout and stderr junk, keeps the log bounded and none of the junk', {
    timeout: 60_000,
  }, async () => {
    const c = await client('noisy');
    expect(textOf(await c.callTool('echo', { text: 'warm' }))).toBe('echo: warm');
    const before = heldBytes();
    const logBefore = (await logOf(ids.noisy as number)).length;
    const started = Date.now();
    // 2 x 120 MiB of lines the gateway must read and throw away, while other calls go on.
    const junk = c.callTool('junk', { stdoutMb: 120, stderrMb: 120 }, { timeout: 120_000 });
    let echoed = 0;
    let junkDone = false;
    // Settled either way (a rejection is reported where `junk` is awaited, not as an unhandled one here).
    const settled = () => {
      junkDone = true;
    };
    junk.then(settled, settled);
    while (!junkDone) {
      expect(textOf(await c.callTool('echo', { text: `during ${echoed}` }))).toBe(`echo: during ${echoed}`);
      echoed += 1;
    }
    expect(textOf(await junk)).toBe('after the junk');
    expect(echoed).toBeGreaterThan(0);
    const seconds = (Date.now() - started) / 1000;

    // One JSON-RPC answer of 9 MiB, over the 8 MiB per message limit: an error for that call at once.
    await expect(c.callTool('huge', { mb: 9 })).rejects.toThrow("the tool server's answer was 9.0 MiB, over the gateway's 8 MiB limit");
    expect(textOf(await c.callTool('echo', { text: 'after' }))).toBe('echo: after');

    // Rate-limited: 20 stderr and 5 stdout lines a second plus one summary line each, not 240 000 lines.
    const log = (await logOf(ids.noisy as number)).slice(logBefore);
    expect(log.length).toBeLessThanOrEqual(Math.ceil(seconds + 2) * 27 + 10);
    expect(log.some((m) => /^\d+ stderr lines suppressed$/.test(m))).toBe(true);
    expect(log.some((m) => /^\d+ more non-JSON-RPC stdout lines ignored$/.test(m))).toBe(true);
    expect(log.some((m) => m.includes('over the 8 MiB limit, was dropped'))).toBe(true);
    // None of the 240 MiB stays in the gateway: what it holds grew by far less than one copy of it.
    expect(heldBytes() - before).toBeLessThan(48 * 1024 * 1024);
  });

  it('keeps the answer written right after 50 MiB of stdout without a newline, and serves the next call', { timeout: 60_000 }, async () => {
    const c = await client('noisy');
    const logBefore = (await logOf(ids.noisy as number)).length;
    const started = Date.now();
    // The answer is glued to the end of a 50 MiB line: not lost with it (which left the caller waiting 300 s).
    expect(textOf(await c.callTool('junk', { stdoutMb: 50, glued: true }, { timeout: 30_000 }))).toBe('after the junk');
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(textOf(await c.callTool('echo', { text: 'next' }))).toBe('echo: next');
    const log = (await logOf(ids.noisy as number)).slice(logBefore);
    expect(
      log.some((m) =>
        /bytes on stdout without a newline, over the 8 MiB limit, were dropped; the message written after them was kept/.test(m),
      ),
    ).toBe(true);
  });

  it('answers a call whose server exits during it at once, counts and records it once, then serves again', {
    timeout: 30_000,
  }, async () => {
    const c = await client('crashy');
    const { pid } = await pidsOf(c);
    await expect(c.callTool('crash', {})).rejects.toThrow('upstream unavailable: tool server exited with code 2');
    expect(alive(pid)).toBe(false);
    expect(textOf(await c.callTool('echo', { text: 'back' }))).toBe('echo: back');
    await gw.ctx.meter.flush();
    const counters = await gw.ctx.db
      .selectFrom('daily_counters')
      .select(['request_count', 'error_count'])
      .where('service_id', '=', ids.crashy as number)
      .where('user_id', '=', userId)
      .execute();
    // pids, crash, echo: three counted calls, one of them failed.
    expect(counters).toEqual([{ request_count: 3, error_count: 1 }]);
    const records = await gw.ctx.db
      .selectFrom('request_records')
      .select(['target', 'outcome', 'error_message'])
      .where('service_id', '=', ids.crashy as number)
      .orderBy('id')
      .execute();
    expect(records).toEqual([
      { target: 'pids', outcome: 'ok', error_message: '' },
      { target: 'crash', outcome: 'error', error_message: 'upstream unavailable: tool server exited with code 2' },
      { target: 'echo', outcome: 'ok', error_message: '' },
    ]);
  });
});
