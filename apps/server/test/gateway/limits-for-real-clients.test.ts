import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addService, addUser, type LiveGateway, startGateway } from './gateway-harness.js';
import { initializeBody, openSession, post } from './raw-http.js';

const fixtureServer = path.join(import.meta.dirname, '../fixtures/fixture-mcp-server.mjs');
const sleep = (id: number, ms: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'sleep', arguments: { ms } } });

/**
 * Limits that fit clients which open a session per invocation and agents that fan out (decision
 * 0025): a burst allowance over the steady rate of new sessions, and a short, bounded, fair queue
 * for counted calls over the in-flight cap.
 */
describe('session and call limits for real clients', () => {
  let gw: LiveGateway;
  let mcp: string;

  beforeAll(async () => {
    gw = await startGateway('sqlite', {
      PROXY_NEW_SESSIONS_PER_MINUTE: '3',
      PROXY_NEW_SESSIONS_BURST: '4',
      PROXY_MAX_CALLS_IN_FLIGHT: '2',
      PROXY_CALL_QUEUE_LENGTH: '6',
      PROXY_CALL_QUEUE_MS: '3000',
    });
    await addService(gw.ctx, { name: 'fixture', args: [fixtureServer] });
    mcp = `${gw.url}/proxy/fixture/mcp`;
  });
  afterAll(async () => gw?.close());

  it('takes a burst of new sessions beyond the steady rate, then refuses with 429', async () => {
    const erin = await addUser(gw.ctx, 'burst-erin');
    for (let i = 0; i < 7; i++) expect((await post(mcp, erin.key, initializeBody())).status, `session ${i + 1}`).toBe(200);
    const eighth = await post(mcp, erin.key, initializeBody());
    expect(eighth.status).toBe(429);
    expect(eighth.headers.get('retry-after')).not.toBeNull();
  });

  it('queues the calls of a fan-out over several sessions instead of refusing them', async () => {
    const fay = await addUser(gw.ctx, 'fanout-fay');
    const sessions = await Promise.all([0, 1, 2, 3].map(() => openSession(mcp, fay.key)));
    // Eight calls at once over four sessions, two slots: six wait their turn, none is refused.
    const answers = await Promise.all(
      sessions.flatMap((sid, s) => [0, 1].map((i) => post(mcp, fay.key, sleep(s * 10 + i, 150), { 'mcp-session-id': sid }))),
    );
    for (const a of answers) {
      expect(a.status).toBe(200);
      expect(a.json()).toMatchObject({ result: { content: [{ type: 'text', text: 'slept' }] } });
    }
  });

  it('serves the waiting sessions in turn: one session’s burst does not starve another’s call', async () => {
    const gus = await addUser(gw.ctx, 'fair-gus');
    const [busy, other] = [await openSession(mcp, gus.key), await openSession(mcp, gus.key)];
    const order: string[] = [];
    const track = (label: string, p: Promise<unknown>) => p.then(() => void order.push(label));
    const burst = [1, 2, 3, 4, 5, 6].map((i) => track(`busy-${i}`, post(mcp, gus.key, sleep(i, 300), { 'mcp-session-id': busy })));
    // Once the busy session's calls hold both slots and four wait, the other session asks once.
    await new Promise((r) => setTimeout(r, 100));
    const single = track('other', post(mcp, gus.key, sleep(99, 300), { 'mcp-session-id': other }));
    await Promise.all([...burst, single]);
    // It got the first slot freed, ahead of the busy session's queued calls 4 to 6.
    expect(order.indexOf('other')).toBeLessThan(order.indexOf('busy-4'));
  });

  it('bounds the queue: beyond its length a call is refused at once, and a call that waited too long is refused', async () => {
    const hal = await addUser(gw.ctx, 'bounded-hal');
    const sid = await openSession(mcp, hal.key);
    const calls = [1, 2, 3, 4, 5, 6, 7, 8].map((i) => post(mcp, hal.key, sleep(i, 5000), { 'mcp-session-id': sid }));
    await new Promise((r) => setTimeout(r, 200));
    const overflow = await post(mcp, hal.key, sleep(9, 10), { 'mcp-session-id': sid });
    expect(overflow.status).toBe(429);
    expect(overflow.json()).toMatchObject({ id: 9, error: { message: 'too many calls in progress for this service: 2' } });
    const answers = await Promise.all(calls);
    // Two ran; the six queued waited 3 s for a slot that did not come.
    expect(answers.filter((a) => a.status === 200)).toHaveLength(2);
    expect(answers.filter((a) => a.status === 429)).toHaveLength(6);
  }, 20_000);
});
