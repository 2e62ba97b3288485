import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURE_SERVER } from '../fixtures/upstream-kit.js';
import { connect, type McpClient, textOf } from '../gateway/clients.js';
import { addService, addUser, type LiveGateway, setServiceEnabled, startGateway } from '../gateway/gateway-harness.js';

/**
 * Back-pressure that tells the truth (docs/decisions/0045): a stdio server that reads its input slowly gets all
 * of it, its calls waiting their turn; only one that reads nothing for the bound is said not to read it.
 * Real SDK client, real gateway over HTTP, the fixture server reading stdin at its own pace.
 */

// Long enough that a server starved of CPU on a loaded machine (it once read nothing for 3 s there) is not taken for deaf.
const STALL_MS = 8_000;
/** Just under the proxy's 4 MiB body limit with the JSON-RPC envelope around it. */
const BIG = 'x'.repeat(Math.floor(3.9 * 1024 * 1024));

describe('a stdio server behind on its input', () => {
  let gw: LiveGateway;
  let key: string;
  const open: McpClient[] = [];
  const client = async (service: string) => {
    const c = await connect(gw.url, service, key, { sdk: 'v1', wire: 'http' });
    open.push(c);
    return c;
  };

  beforeAll(async () => {
    gw = await startGateway('sqlite', {}, { tuning: { stdinStallMs: STALL_MS } });
    ({ key } = await addUser(gw.ctx, 'alice'));
    await addService(gw.ctx, { name: 'slow', args: [FIXTURE_SERVER], env: { FIXTURE_MODE: 'slow-read=2' } });
  });
  afterAll(async () => {
    await Promise.all(open.map((c) => c.close().catch(() => undefined)));
    await gw?.close();
  });

  it('serves 20 calls of 3.9 MiB at once to a server that reads slowly: each waits its turn, none is refused', {
    timeout: 120_000,
  }, async () => {
    const c = await client('slow');
    const answers = await Promise.allSettled(Array.from({ length: 20 }, () => c.callTool('length', { text: BIG }, { timeout: 100_000 })));
    expect(answers.map((a) => (a.status === 'fulfilled' ? textOf(a.value) : String(a.reason)))).toEqual(
      Array.from({ length: 20 }, () => String(BIG.length)),
    );
  });

  it('refuses calls to a server that has read nothing for the bound, and only then', { timeout: 60_000 }, async () => {
    const id = await addService(gw.ctx, { name: 'deaf', args: [FIXTURE_SERVER], env: { FIXTURE_MODE: '' } });
    const c = await client('deaf');
    expect(textOf(await c.callTool('deaf', {}))).toBe('deaf now');
    const outcome = (call: Promise<unknown>) =>
      call.then(
        () => 'answered',
        (err: Error) => err.message,
      );
    // More than the pipe holds: the rest stays with the gateway, and nothing of it is taken.
    const stuck = outcome(c.callTool('length', { text: BIG }, { timeout: 100_000 }));
    // Within the bound a call is not refused: it is written behind the other.
    const early = outcome(c.callTool('echo', { text: 'early' }, { timeout: 100_000 }));
    const sent = Date.now();
    // Later calls go unanswered (given up after a second) until the bound has passed with nothing read; then refused.
    let late = '';
    while (!late.includes('not reading')) late = await outcome(c.callTool('echo', { text: 'late' }, { timeout: 1_000 }));
    expect(late).toMatch(`tool server is not reading its input (nothing read for ${STALL_MS / 1000} s)`);
    expect(Date.now() - sent).toBeGreaterThanOrEqual(STALL_MS);
    // Stopping the server answers the calls it never read.
    await setServiceEnabled(gw.ctx, id, false);
    for (const call of [stuck, early]) expect(await call).toMatch('service disabled');
  });
});
