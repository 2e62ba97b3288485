import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { gatewayInternalsForTests } from '../../src/gateway/testing.js';
import { engines } from '../harness.js';
import { connect, type McpClient, textOf, until } from './clients.js';
import { addService, addUser, type LiveGateway, setServiceEnabled, setUserEnabled, startGateway } from './gateway-harness.js';
import { ACCEPT_BOTH, openSession, post } from './raw-http.js';

const probeServer = path.join(import.meta.dirname, 'fixtures/probe-server.mjs');
const SLOW = 'wait-for-cancel';

/**
 * A session that ends while it has a call in flight (its service or user disabled, the client's
 * DELETE, eviction by the per-user cap or the idle sweep): the client hears an error at once on the
 * channel it is listening on, the upstream is told to cancel, and the call is counted and recorded
 * exactly once, as an error.
 */
describe.each(engines)('ending a session with calls in flight on %s', (engine) => {
  let gw: LiveGateway;
  let watcherKey: string;
  let probeId: number;
  let users = 0;
  const open: McpClient[] = [];
  const client = async (...args: Parameters<typeof connect>) => {
    const c = await connect(...args);
    open.push(c);
    return c;
  };
  /** A user of its own for each test: its counter and records are those of the one call. */
  const freshUser = () => {
    users += 1;
    return addUser(gw.ctx, `caller-${users}`);
  };

  beforeAll(async () => {
    gw = await startGateway(engine);
    watcherKey = (await addUser(gw.ctx, 'watcher')).key;
    probeId = await addService(gw.ctx, { name: 'probe', args: [probeServer] });
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((c) => c.close().catch(() => undefined)));
  });
  afterAll(async () => gw?.close());

  const probeState = async (c: McpClient) =>
    JSON.parse(textOf(await c.callTool('probe-state', {}))) as { waiting: number; cancelled: number };

  /** Counted errors of tools/call on a service in the metrics. */
  const metricErrors = async (service: string): Promise<number> => {
    const metric = gw.ctx.metrics.registry.getSingleMetric('toolport_mcp_requests_total');
    const values = (await metric?.get())?.values ?? [];
    return values
      .filter((v) => v.labels.service === service && v.labels.method === 'tools/call' && v.labels.outcome === 'error')
      .reduce((n, v) => n + v.value, 0);
  };

  /** The user's records and daily counter on a service, as stored. */
  const stored = async (serviceId: number, userId: number) => {
    await gw.ctx.meter.flush();
    const records = await gw.ctx.db
      .selectFrom('request_records')
      .select(['method', 'target', 'outcome', 'error_message'])
      .where('service_id', '=', serviceId)
      .where('user_id', '=', userId)
      .execute();
    const counters = await gw.ctx.db
      .selectFrom('daily_counters')
      .select(['request_count', 'error_count'])
      .where('service_id', '=', serviceId)
      .where('user_id', '=', userId)
      .execute();
    return {
      records,
      requests: counters.reduce((n, c) => n + Number(c.request_count), 0),
      errors: counters.reduce((n, c) => n + Number(c.error_count), 0),
    };
  };

  const expectOneFailedCall = async (serviceId: number, userId: number, message: RegExp) => {
    const { records, requests, errors } = await stored(serviceId, userId);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ method: 'tools/call', target: SLOW, outcome: 'error' });
    expect(records[0]?.error_message).toMatch(message);
    expect({ requests, errors }).toEqual({ requests: 1, errors: 1 });
  };

  /** Starts the slow call and waits until the upstream holds it. */
  const slowCall = async (caller: McpClient, watcher: McpClient) => {
    const before = await probeState(watcher);
    const pending = caller.callTool(SLOW, {});
    // Settled now so that an early failure is not reported as unhandled; asserted by the test.
    pending.catch(() => undefined);
    await until(async () => (await probeState(watcher)).waiting === before.waiting + 1, 'the call to reach the upstream');
    return { pending, before };
  };

  const cancelledUpstream = async (watcher: McpClient, before: { waiting: number; cancelled: number }) => {
    await until(async () => (await probeState(watcher)).cancelled === before.cancelled + 1, 'the cancellation to reach the upstream');
    expect((await probeState(watcher)).waiting).toBe(before.waiting);
    // Nothing is left waiting on the gateway's side either (timers, routes).
    const links = gw.ctx.gateway.links(probeId).filter((l) => l.era === '2025-11-25');
    expect(links.length).toBeGreaterThan(0);
    expect(links.map((l) => l.inFlight).filter((n) => n > 0)).toEqual([]);
  };

  it('answers a streamable HTTP call with an error and cancels it upstream when the client DELETEs its session', async () => {
    const user = await freshUser();
    const watcher = await client(gw.url, 'probe', watcherKey, { sdk: 'v2', wire: 'http' });
    const caller = await client(gw.url, 'probe', user.key, { sdk: 'v1', wire: 'http' });
    const errorsBefore = await metricErrors('probe');
    const { pending, before } = await slowCall(caller, watcher);

    const res = await fetch(`${gw.url}/proxy/probe/mcp`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${user.key}`, 'mcp-session-id': caller.sessionId() ?? '', accept: ACCEPT_BOTH },
    });
    expect(res.status).toBe(200);
    await expect(pending).rejects.toThrow('session closed: deleted by the client');
    await cancelledUpstream(watcher, before);
    await expectOneFailedCall(probeId, user.id, /^session closed: deleted by the client$/);
    expect(await metricErrors('probe')).toBe(errorsBefore + 1);
  });

  it('answers a legacy SSE call on its stream and cancels it upstream when the user is disabled', async () => {
    const user = await freshUser();
    const watcher = await client(gw.url, 'probe', watcherKey, { sdk: 'v1', wire: 'http' });
    const caller = await client(gw.url, 'probe', user.key, { sdk: 'v1', wire: 'sse' });
    const errorsBefore = await metricErrors('probe');
    const { pending, before } = await slowCall(caller, watcher);

    await setUserEnabled(gw.ctx, user.id, false);
    await expect(pending).rejects.toThrow('session closed:');
    await cancelledUpstream(watcher, before);
    await expectOneFailedCall(probeId, user.id, /^session closed: /);
    expect(await metricErrors('probe')).toBe(errorsBefore + 1);
  });

  it('answers the call of the session evicted by the per-user cap and cancels it upstream', async () => {
    const user = await freshUser();
    const watcher = await client(gw.url, 'probe', watcherKey, { sdk: 'v1', wire: 'http' });
    const caller = await client(gw.url, 'probe', user.key, { sdk: 'v2', wire: 'http' });
    const errorsBefore = await metricErrors('probe');
    const { pending, before } = await slowCall(caller, watcher);

    // Test-only: the server never changes the cap of a running registry (src/gateway/testing.ts).
    const { limits } = gatewayInternalsForTests(gw.ctx.gateway);
    const cap = limits.perUserCap;
    limits.perUserCap = 1;
    try {
      // A second session of the same user: the first, busy or not, has to go.
      await client(gw.url, 'probe', user.key, { sdk: 'v1', wire: 'http' });
      expect(gw.ctx.gateway.session(caller.sessionId() ?? '')).toBeUndefined();
    } finally {
      limits.perUserCap = cap;
    }
    await expect(pending).rejects.toThrow('session closed: too many sessions for this user');
    await cancelledUpstream(watcher, before);
    await expectOneFailedCall(probeId, user.id, /^session closed: too many sessions for this user$/);
    expect(await metricErrors('probe')).toBe(errorsBefore + 1);
  });

  it('answers a call whose session is swept as idle while its upstream is still starting', async () => {
    const user = await freshUser();
    const watcher = await client(gw.url, 'probe', watcherKey, { sdk: 'v1', wire: 'http' });
    const url = `${gw.url}/proxy/probe/mcp`;
    // A client without a GET stream: its session may be swept when idle.
    const sessionId = await openSession(url, user.key);
    const { gateway } = gw.ctx;
    const far = () => Date.now() + gateway.options.limits.idleMs + 60_000;
    gateway.sweepNow(far());
    expect(gateway.session(sessionId)).toBeUndefined();
    // Test-only: stops the live link (src/gateway/testing.ts), so that the call waits for it to start again.
    const [link] = gatewayInternalsForTests(gateway).links(probeId);
    if (!link) throw new Error('no link for the probe service');
    await link.stop('test: start again on the next call');
    const attached = link.attachedCount;
    const errorsBefore = await metricErrors('probe');

    // The session is rebuilt from its id, and waits for the link to start again.
    const reply = post(
      url,
      user.key,
      { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: SLOW, arguments: {} } },
      { 'mcp-session-id': sessionId },
    );
    await until(() => gateway.session(sessionId) !== undefined && link.state === 'starting', 'the call to wait for the starting upstream');
    gateway.sweepNow(far());
    expect(gateway.session(sessionId)).toBeUndefined();

    const res = await reply;
    expect(res.status).toBe(200);
    expect(res.json()).toEqual({ jsonrpc: '2.0', id: 7, error: { code: -32000, message: 'session closed: idle timeout' } });
    // Never sent upstream, and the ended session is not left attached to the link.
    expect((await probeState(watcher)).waiting).toBe(0);
    expect(link.attachedCount).toBe(attached);
    await expectOneFailedCall(probeId, user.id, /^session closed: idle timeout$/);
    expect(await metricErrors('probe')).toBe(errorsBefore + 1);
  });

  it('answers and cancels a call left on the shared upstream when the session moves to a process of its user', async () => {
    const user = await freshUser();
    const watcher = await client(gw.url, 'probe', watcherKey, { sdk: 'v2', wire: 'http' });
    const caller = await client(gw.url, 'probe', user.key, { sdk: 'v1', wire: 'http' });
    const errorsBefore = await metricErrors('probe');
    const { pending, before } = await slowCall(caller, watcher);

    // Personal values: the user's next request is served by a process of its own.
    await gw.ctx.db
      .insertInto('service_user_envs')
      .values({ service_id: probeId, user_id: user.id, env_enc: gw.ctx.secrets.encryptJson({ PROBE_OWNER: 'me' }), updated_at: Date.now() })
      .execute();
    gw.ctx.events.emit({ type: 'user.changed', userId: user.id });
    expect((await caller.listTools()).tools.map((t) => t.name)).toContain(SLOW);

    await expect(pending).rejects.toThrow('session closed: detached from the upstream connection');
    await cancelledUpstream(watcher, before);
    await expectOneFailedCall(probeId, user.id, /^session closed: detached from the upstream connection$/);
    expect(await metricErrors('probe')).toBe(errorsBefore + 1);
  });

  it('answers an in-flight call at once when its service is disabled', async () => {
    const user = await freshUser();
    const doomedId = await addService(gw.ctx, { name: 'doomed', args: [probeServer] });
    const watcher = await client(gw.url, 'doomed', watcherKey, { sdk: 'v2', wire: 'http' });
    const caller = await client(gw.url, 'doomed', user.key, { sdk: 'v2', wire: 'http' });
    const errorsBefore = await metricErrors('doomed');
    const { pending } = await slowCall(caller, watcher);

    await setServiceEnabled(gw.ctx, doomedId, false);
    // Whichever comes first: the session ending, or the upstream stopping under it.
    await expect(pending).rejects.toThrow(/session closed: |upstream unavailable: service disabled/);
    await expectOneFailedCall(doomedId, user.id, /^(session closed: |upstream unavailable: service disabled)/);
    expect(await metricErrors('doomed')).toBe(errorsBefore + 1);
  });
});
