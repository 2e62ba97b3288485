import path from 'node:path';
import type { JSONRPCRequest, JSONRPCResponse } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alive, callTool, fixtureSpec, stdioSpec, TestSession, testPool, toolText } from '../../../test/fixtures/upstream-kit.js';
import type { UpstreamLink } from '../link-api.js';

const init = (capabilities = {}) => ({ protocolVersion: '2025-06-18', capabilities, clientInfo: { name: 'test', version: '1' } });

/** A client that can answer server-to-client requests (sampling), as an isolated link may relay them. */
class SamplingSession extends TestSession {
  readonly asked: JSONRPCRequest[] = [];
  async request(message: JSONRPCRequest): Promise<JSONRPCResponse> {
    this.asked.push(message);
    return {
      jsonrpc: '2.0',
      id: 'ignored',
      result: { model: 'client-model', role: 'assistant', content: { type: 'text', text: 'sampled' } },
    };
  }
}

describe('which process serves whom', () => {
  const kit = testPool({ perUserSessionLinks: 2 });
  const pool = kit.make();
  const gatewaySecrets = { SECRET_KEY: 'gateway-secret-key-value', DATABASE_URL: 'postgres://gateway', ADMIN_PASSWORD: 'root-pass' };

  beforeAll(() => {
    Object.assign(process.env, gatewaySecrets);
  });
  afterAll(async () => {
    for (const name of Object.keys(gatewaySecrets)) delete process.env[name];
    await pool.shutdown();
    kit.cleanup();
  });

  const envOf = async (link: UpstreamLink, session: TestSession): Promise<Record<string, string>> =>
    JSON.parse(toolText(await callTool(link, session, 'env', 'get-env')));

  it('gives a process only safe gateway variables plus the service’s, and a user with personal values a process of their own', async () => {
    const spec = kit.catalog.put(stdioSpec({ env: { SERVICE_VAR: 'from-service', API_TOKEN: 'shared-token' } }));
    kit.catalog.userEnvs.set(`${spec.id}:2`, { API_TOKEN: 'bobs-own-token' });
    const alice = new TestSession('alice', 1);
    const bob = new TestSession('bob', 2);
    const aliceLink = await pool.acquire(spec, alice);
    const bobLink = await pool.acquire(spec, bob);
    expect(bobLink).not.toBe(aliceLink);

    const aliceEnv = await envOf(aliceLink, alice);
    expect(aliceEnv).toMatchObject({ SERVICE_VAR: 'from-service', API_TOKEN: 'shared-token', PATH: process.env.PATH });
    for (const name of Object.keys(gatewaySecrets)) expect(aliceEnv).not.toHaveProperty(name);
    const bobEnv = await envOf(bobLink, bob);
    expect(bobEnv).toMatchObject({ SERVICE_VAR: 'from-service', API_TOKEN: 'bobs-own-token' });

    // Bob changes his personal values: his process restarts with them.
    kit.catalog.userEnvs.set(`${spec.id}:2`, { API_TOKEN: 'bobs-new-token' });
    kit.events.emit({ type: 'user.changed', userId: 2 });
    await expect.poll(async () => (await envOf(await pool.acquire(spec, bob), bob)).API_TOKEN).toBe('bobs-new-token');
    expect(await pool.acquire(spec, bob)).toBe(bobLink);

    // Bob's personal values go away: after the change he is back on the shared process.
    kit.catalog.userEnvs.delete(`${spec.id}:2`);
    kit.events.emit({ type: 'user.changed', userId: 2 });
    expect(await pool.acquire(spec, bob)).toBe(aliceLink);
  });

  it('runs a process in DATA_DIR/services/<id> unless the service names its own directory', async () => {
    const spec = kit.catalog.put(fixtureSpec(''));
    const alice = new TestSession('alice', 1);
    const { cwd } = JSON.parse(toolText(await callTool(await pool.acquire(spec, alice), alice, 1, 'pids')));
    expect(cwd).toBe(path.join(kit.dataDir, 'services', String(spec.id)));
    const own = kit.catalog.put(fixtureSpec('', { installDir: path.join(kit.dataDir, 'packages', 'own') }));
    const other = JSON.parse(toolText(await callTool(await pool.acquire(own, alice), alice, 1, 'pids')));
    expect(other.cwd).toBe(own.installDir);
  });

  it('logs the command and the stderr of a process with secret values redacted', async () => {
    const spec = kit.catalog.put(
      fixtureSpec('', { env: { FIXTURE_MODE: 'print-env=API_TOKEN', API_TOKEN: 'super-secret-token' }, secretEnvNames: ['API_TOKEN'] }),
    );
    const alice = new TestSession('alice', 1);
    await (await pool.acquire(spec, alice)).initialize(alice, init());
    await expect.poll(() => kit.serviceLog.of(spec.id)).toContain('API_TOKEN=[REDACTED]');
    const log = kit.serviceLog.of(spec.id);
    expect(log[0]).toMatch(/^starting: .*node .*fixture-mcp-server\.mjs$/);
    expect(log.some((m) => m.includes('super-secret-token'))).toBe(false);
  });

  it('gives each session of an isolated service its own process, relaying capabilities and sampling', async () => {
    const spec = kit.catalog.put(fixtureSpec('', { isolation: 'session' }));
    const one = new SamplingSession('one', 7);
    const two = new TestSession('two', 7);
    const oneLink = await pool.acquire(spec, one);
    const twoLink = await pool.acquire(spec, two);
    expect(twoLink).not.toBe(oneLink);

    const result = await oneLink.initialize(one, init({ sampling: {} }));
    expect(result.instructions).toBe('capabilities seen: {"sampling":{}}');
    const asked = JSON.parse(toolText(await callTool(oneLink, one, 1, 'ask-client')));
    expect(asked.sampling.result.model).toBe('client-model');
    // The client's own ping handler answers an isolated upstream's ping.
    expect(one.asked.map((m) => m.method)).toEqual(['ping', 'sampling/createMessage']);

    // The second session's client offers nothing to relay to.
    await twoLink.initialize(two, init());
    const refused = JSON.parse(toolText(await callTool(twoLink, two, 1, 'ask-client')));
    expect(refused.sampling.error.message).toContain('not available');

    const pidOne = JSON.parse(toolText(await callTool(oneLink, one, 2, 'pids'))).pid;
    const pidTwo = JSON.parse(toolText(await callTool(twoLink, two, 2, 'pids'))).pid;
    expect(pidOne).not.toBe(pidTwo);

    // Two per user on this service here: a third takes the place of the one idle longest (`one`, whose
    // client may have gone without DELETE); the other keeps its process.
    const threeLink = await pool.acquire(spec, new TestSession('three', 7));
    await expect.poll(() => alive(pidOne)).toBe(false);
    expect(alive(pidTwo)).toBe(true);
    expect(threeLink).not.toBe(oneLink);

    // When every isolated link of the user is busy, nothing is taken away: the new session is refused.
    const three = new TestSession('three', 7);
    await threeLink.initialize(three, init());
    const busyTwo = callTool(twoLink, two, 3, 'sleep', { ms: 1500 });
    const busyThree = callTool(threeLink, three, 1, 'sleep', { ms: 1500 });
    // The pool's own Link (link.ts) counts what is in flight; wait until both calls have reached it.
    const inFlight = (link: UpstreamLink) => (link as unknown as { inFlight: number }).inFlight;
    await expect.poll(() => inFlight(twoLink) > 0 && inFlight(threeLink) > 0).toBe(true);
    await expect(pool.acquire(spec, new TestSession('four', 7))).rejects.toThrow(/too many isolated sessions/);
    await Promise.all([busyTwo, busyThree]);
  });
});
