import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type McpClient, textOf } from './clients.js';
import { addService, addUser, type LiveGateway, liveChildren, startGateway } from './gateway-harness.js';

const SESSIONS = 50;
const USERS = 5;
const CALLS_PER_SESSION = 20;
/** Calls each session keeps in flight: each is a connection of its own, 250 in all. */
const IN_FLIGHT = 5;

/**
 * Fifty client sessions of five users over one shared stdio process: client request ids collide
 * on purpose (every SDK client counts from 0), yet each client gets exactly its own answers.
 */
describe('many sessions on one shared upstream process', () => {
  let gw: LiveGateway;
  let clients: McpClient[] = [];

  beforeAll(async () => {
    gw = await startGateway('sqlite');
    const keys: string[] = [];
    for (let u = 0; u < USERS; u += 1) keys.push((await addUser(gw.ctx, `user${u}`)).key);
    await addService(gw.ctx, { name: 'everything' });
    clients = await Promise.all(
      Array.from({ length: SESSIONS }, (_, i) =>
        connect(gw.url, 'everything', keys[i % USERS] as string, { sdk: i % 2 === 0 ? 'v1' : 'v2', wire: i % 10 === 9 ? 'sse' : 'http' }),
      ),
    );
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await gw?.close();
  });

  it('routes every answer to the session and request that asked, with no cross-talk', async () => {
    const mismatches: string[] = [];
    await Promise.all(
      clients.map(async (c, s) => {
        const workers = Array.from({ length: IN_FLIGHT }, async (_, w) => {
          for (let n = w; n < CALLS_PER_SESSION; n += IN_FLIGHT) {
            const message = `session-${s}-call-${n}`;
            const echoed = textOf(await c.callTool('echo', { message }));
            if (echoed !== `Echo: ${message}`) mismatches.push(`${message} -> ${echoed}`);
            const sum = textOf(await c.callTool('get-sum', { a: s, b: n * 1000 }));
            if (!sum.endsWith(`is ${s + n * 1000}.`)) mismatches.push(`sum ${s}+${n * 1000} -> ${sum}`);
          }
        });
        await Promise.all(workers);
      }),
    );
    expect(mismatches).toEqual([]);
    for (const c of clients) expect(c.errors).toEqual([]);
    // 2,000 calls: a guard against a hang, not a speed limit (it passed 30 s beside the browser tests on 2 loaded cores).
  }, 90_000);

  it('serves all of them from one upstream process', () => {
    expect(gw.ctx.gateway.stats().sessions).toBe(SESSIONS);
    expect(liveChildren('server-everything')).toHaveLength(1);
  });
});
