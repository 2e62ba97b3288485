import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Role } from '@toolport/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LinkView } from '../../src/gateway/index.js';
import { addService, addUser, addUserWithToken, apiCall, type LiveGateway, startGateway } from './gateway-harness.js';
import { modernFixture, modernPost, PIN, texts, v2Client } from './modern-kit.js';

const httpFixture = path.join(import.meta.dirname, '../fixtures/modern-http-server.mjs');
/** A request's envelope declaring form elicitation (the `confirm` tools ask for it). */
const ELICITS = { 'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } } };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The lines the v2 fixture appended to its events file (`start modern`, `cancelled 60000` …), without the
 * starts of legacy connections (the gateway's health checks open those).
 */
const events = (file: string): string[] =>
  (existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n') : []).filter((line) => line && line !== 'start legacy');

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/**
 * Upstreams that speak the 2026-07-28 revision themselves, reached in it by modern clients (decision 0039):
 * the v2-SDK fixture over stdio and the v2 SDK's own HTTP handler as a remote service. What the server says
 * reaches the client untouched (its input keys and requestState), one connection serves every client, the
 * gateway's overrides, limits and metering still apply, cancellation and crashes behave; a legacy-only
 * upstream keeps serving modern clients through its legacy link.
 */
describe('upstreams that speak 2026-07-28, reached in their own era', () => {
  let gw: LiveGateway;
  let alice: { id: number; key: string };
  let bob: { id: number; key: string };
  let adminToken: string;
  const dir = mkdtempSync(path.join(tmpdir(), 'toolport-modern-upstream-'));
  const eventsOf = (name: string) => path.join(dir, `${name}.events`);
  const ids: Record<string, number> = {};
  let remote: ChildProcess | undefined;
  const proxy = (name: string) => `${gw.url}/proxy/${name}/mcp`;
  const links = (serviceId: number | undefined, era: LinkView['era'] = '2026-07-28') =>
    gw.ctx.gateway.links(serviceId as number).filter((l) => l.era === era);
  const api = (method: string, url: string, body?: unknown) => apiCall(gw.url, adminToken, method, url, body);
  const v2Service = async (name: string, extra: { rpdLimit?: number } = {}) => {
    ids[name] = await addService(gw.ctx, { name, args: [modernFixture], env: { MODERN_FIXTURE_EVENTS: eventsOf(name) }, ...extra });
  };

  beforeAll(async () => {
    gw = await startGateway('sqlite');
    alice = await addUser(gw.ctx, 'alice');
    bob = await addUser(gw.ctx, 'bob');
    adminToken = (await addUserWithToken(gw.ctx, 'admin1', Role.Admin)).token;
    for (const name of ['v2', 'v2-crash', 'v2-cancel', 'v2-isolated']) await v2Service(name);
    await v2Service('v2-limited', { rpdLimit: 3 });
    ids['v2-only'] = await addService(gw.ctx, { name: 'v2-only', args: [modernFixture], env: { MODERN_FIXTURE_ONLY: '1' } });
    await gw.ctx.db
      .updateTable('services')
      .set({ isolation: 'session' })
      .where('id', '=', ids['v2-isolated'] as number)
      .execute();
    gw.ctx.events.emit({ type: 'service.changed', serviceId: ids['v2-isolated'] as number });
    ids.everything = await addService(gw.ctx, { name: 'everything' });
    ids.everythingIsolated = await addService(gw.ctx, { name: 'everything-isolated' });
    await gw.ctx.db
      .updateTable('services')
      .set({ isolation: 'session' })
      .where('id', '=', ids.everythingIsolated as number)
      .execute();
    gw.ctx.events.emit({ type: 'service.changed', serviceId: ids.everythingIsolated as number });
    const port = await freePort();
    remote = spawn(process.execPath, [httpFixture, String(port)], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve, reject) => {
      let seen = '';
      remote?.stdout?.on('data', (chunk) => {
        seen += String(chunk);
        if (seen.includes(`listening ${port}`)) resolve();
      });
      remote?.once('exit', (code) => reject(new Error(`the HTTP fixture exited with ${code}`)));
    });
    ids.remote = await addService(gw.ctx, { name: 'remote-v2', type: 'streamableHttp', command: `http://127.0.0.1:${port}/mcp`, args: [] });
    await addService(gw.ctx, { name: 'remote-v2-unlisted', type: 'streamableHttp', command: `http://127.0.0.1:${port}/mcp`, args: [] });
  });
  afterAll(async () => {
    await gw?.close();
    remote?.kill();
  });

  it('passes the server’s own input keys and requestState to the client untouched, and its retry completes the call', async () => {
    const call = { method: 'tools/call', params: { name: 'confirm', arguments: { action: 'deploy' }, _meta: ELICITS } };
    const first = await modernPost(proxy('v2'), alice.key, call);
    expect(first.status).toBe(200);
    expect(first.body.result.resultType).toBe('input_required');
    // The server's key and state, not the gateway's `elicitation-1` and `toolport.…` of a translated call.
    expect(Object.keys(first.body.result.inputRequests)).toEqual(['confirm']);
    expect(first.body.result.inputRequests.confirm).toMatchObject({ method: 'elicitation/create', params: { message: 'Confirm deploy?' } });
    expect(first.body.result.requestState).toBe('confirm:deploy');
    const retry = await modernPost(proxy('v2'), alice.key, {
      method: 'tools/call',
      params: {
        name: 'confirm',
        arguments: { action: 'deploy' },
        _meta: ELICITS,
        requestState: first.body.result.requestState,
        inputResponses: { confirm: { action: 'accept', content: { ok: true } } },
      },
    });
    expect(retry.status).toBe(200);
    expect(texts(retry.body.result)).toBe('deploy: confirmed=true (state confirm:deploy)');
    // One process in the revision's era served both rounds.
    expect(events(eventsOf('v2'))).toEqual(['start modern']);
  });

  it('serves the SDK v2 client pinned to 2026-07-28 and many clients at once on one connection', async () => {
    const { client, asked } = await v2Client(proxy('v2'), bob.key, PIN);
    try {
      client.setRequestHandler('elicitation/create', async (req) => {
        asked.elicitation += 1;
        expect(req.params.message).toBe('Confirm ship?');
        return { action: 'accept' as const, content: { ok: false } };
      });
      expect(texts(await client.callTool({ name: 'confirm', arguments: { action: 'ship' } }))).toBe(
        'ship: confirmed=false (state confirm:ship)',
      );
      expect(asked.elicitation).toBe(1);
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) => modernPost(proxy('v2'), i % 2 ? alice.key : bob.key, echo(`n${i}`))),
      );
      expect(answers.map((a) => texts(a.body.result))).toEqual(Array.from({ length: 20 }, (_, i) => `modern echo: n${i}`));
    } finally {
      await client.close();
    }
    expect(links(ids.v2)).toHaveLength(1);
    expect(events(eventsOf('v2'))).toEqual(['start modern']);
  });

  it('applies the tool overrides and the daily limit on the modern link, and counts every round the server runs', async () => {
    expect((await api('PUT', `/mcp_services/${ids['v2-limited']}/tools/echo`, { alias: 'say' })).status).toBe(200);
    const list = await modernPost(proxy('v2-limited'), alice.key, { method: 'tools/list' });
    expect(list.body.result.tools.map((t: { name: string }) => t.name).sort()).toEqual(['confirm', 'crash', 'say', 'wait']);
    expect(
      texts(
        (await modernPost(proxy('v2-limited'), alice.key, { method: 'tools/call', params: { name: 'say', arguments: { message: 'x' } } }))
          .body.result,
      ),
    ).toBe('modern echo: x');
    // The upstream's name is not callable under the alias's override.
    const hidden = await modernPost(proxy('v2-limited'), alice.key, echo('y'));
    expect(hidden.body.error?.message ?? texts(hidden.body.result)).toMatch(/echo/);
    const call = { method: 'tools/call', params: { name: 'confirm', arguments: { action: 'a' }, _meta: ELICITS } };
    const first = await modernPost(proxy('v2-limited'), alice.key, call);
    expect(first.body.result.resultType).toBe('input_required');
    // Two calls ran upstream (say, and confirm's first round; the refused `echo` never left); the retry is the third.
    // Counts reach the database by the background fold of the journal: fold now.
    await gw.ctx.meter.flush();
    const rows = await gw.ctx.db
      .selectFrom('daily_counters')
      .select('request_count')
      .where('service_id', '=', ids['v2-limited'] as number)
      .execute();
    const counted = rows.reduce((n, r) => n + Number(r.request_count), 0);
    expect(counted).toBe(2);
    const retry = await modernPost(proxy('v2-limited'), alice.key, {
      ...call,
      params: {
        ...call.params,
        requestState: first.body.result.requestState,
        inputResponses: { confirm: { action: 'accept', content: { ok: true } } },
      },
    });
    expect(texts(retry.body.result)).toBe('a: confirmed=true (state confirm:a)');
    const over = await modernPost(proxy('v2-limited'), alice.key, {
      method: 'tools/call',
      params: { name: 'say', arguments: { message: 'z' } },
    });
    expect(over.status).toBe(429);
    expect(over.body.error.message).toMatch(/limit/i);
  });

  it('cancels the request upstream when the client closes its stream', async () => {
    // Listed first: a call to a tool the gateway has not seen listed lists the tools before it goes up.
    expect((await modernPost(proxy('v2-cancel'), alice.key, { method: 'tools/list' })).status).toBe(200);
    const controller = new AbortController();
    const pending = fetch(proxy('v2-cancel'), {
      method: 'POST',
      signal: controller.signal,
      headers: modernHeaders(alice.key, 'tools/call', 'wait'),
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'wait', arguments: { ms: 60_000 }, _meta: envelope() },
      }),
    }).catch((err: unknown) => err);
    await until('the call to reach the upstream', () => (links(ids['v2-cancel'])[0]?.inFlight === 1 ? true : undefined));
    controller.abort();
    await pending;
    await until('the upstream to hear the cancellation', () =>
      events(eventsOf('v2-cancel')).includes('cancelled 60000') ? true : undefined,
    );
    expect(links(ids['v2-cancel'])[0]?.inFlight).toBe(0);
  });

  it('answers the request in flight when the server crashes, and the next request starts it again', async () => {
    const crashed = await modernPost(proxy('v2-crash'), alice.key, { method: 'tools/call', params: { name: 'crash', arguments: {} } });
    expect(crashed.status).toBe(200);
    expect(crashed.body.error.message).toMatch(/upstream unavailable: tool server .*exit/);
    const back = await until('the server to come back', async () => {
      const answer = await modernPost(proxy('v2-crash'), alice.key, echo('again'));
      return answer.body.result ? answer : undefined;
    });
    expect(texts(back.body.result)).toBe('modern echo: again');
    expect(events(eventsOf('v2-crash'))).toEqual(['start modern', 'start modern']);
  });

  it('gives each user a modern process of their own on an isolated service', async () => {
    for (const user of [alice, alice, bob])
      expect(texts((await modernPost(proxy('v2-isolated'), user.key, echo('i'))).body.result)).toBe('modern echo: i');
    expect(links(ids['v2-isolated'])).toHaveLength(2);
    expect(events(eventsOf('v2-isolated'))).toEqual(['start modern', 'start modern']);
  });

  it('reaches a remote streamable HTTP server of the revision in it: keys, requestState and the retry', async () => {
    const call = { method: 'tools/call', params: { name: 'confirm', arguments: { action: 'ship' }, _meta: ELICITS } };
    const first = await modernPost(proxy('remote-v2'), alice.key, call);
    expect(first.status).toBe(200);
    expect(first.body.result.resultType).toBe('input_required');
    const [key] = Object.keys(first.body.result.inputRequests);
    expect(key).not.toMatch(/^elicitation-\d+$/);
    expect(first.body.result.requestState).not.toMatch(/^toolport\./);
    const retry = await modernPost(proxy('remote-v2'), alice.key, {
      ...call,
      params: {
        ...call.params,
        requestState: first.body.result.requestState,
        inputResponses: { [key as string]: { action: 'accept', content: { ok: true } } },
      },
    });
    expect(retry.status).toBe(200);
    expect(retry.body.result.resultType).toBe('complete');
    expect(links(ids.remote)).toHaveLength(1);
  });

  it('checks Mcp-Param headers against the arguments, and passes them on to a remote server of the revision', async () => {
    const list = await modernPost(proxy('remote-v2'), alice.key, { method: 'tools/list' });
    const routed = list.body.result.tools.find((t: { name: string }) => t.name === 'routed');
    expect(routed.inputSchema.properties.region['x-mcp-header']).toBe('Region');
    const call = (region: string) => ({ method: 'tools/call', params: { name: 'routed', arguments: { region } } });
    const ok = await modernPost(proxy('remote-v2'), alice.key, call('eu-west'), { 'mcp-param-region': 'eu-west' });
    expect(ok.status).toBe(200);
    // The upstream (which checks them itself) heard the header.
    expect(JSON.parse(texts(ok.body.result))['mcp-param-region']).toBe('eu-west');
    const tokyo = await modernPost(proxy('remote-v2'), alice.key, call('東京'), {
      'mcp-param-region': `=?base64?${Buffer.from('東京').toString('base64')}?=`,
    });
    expect(tokyo.status).toBe(200);
    for (const [headers, why] of [
      [{}, /Mcp-Param-Region header is absent/],
      [{ 'mcp-param-region': 'us-east' }, /Mcp-Param-Region header decodes to "us-east"/],
      [{ 'mcp-param-region': '=?base64?SGVs!!!bG8=?=' }, /invalid Base64/],
    ] as const) {
      const refused = await modernPost(proxy('remote-v2'), alice.key, call('eu-west'), headers);
      expect(refused.status).toBe(400);
      expect(refused.body.error.code).toBe(-32020);
      expect(refused.body.error.message).toMatch(why);
    }
    // A service whose tools nobody listed yet: the gateway lists them before it lets the call through.
    const unlisted = await modernPost(proxy('remote-v2-unlisted'), alice.key, call('eu-west'));
    expect(unlisted.status).toBe(400);
    expect(unlisted.body.error.message).toMatch(/Mcp-Param-Region header is absent/);
  });

  it('reaches a group’s member that speaks the revision in it: the group’s list, a call and its round trip', async () => {
    const created = await api('POST', '/groups', {
      name: 'modern-team',
      members: [{ service_id: ids.v2 }, { service_id: ids.everything }],
    });
    expect(created.status).toBe(201);
    const group = `${gw.url}/group/modern-team/mcp`;
    // The group's own list of each member is made by the gateway: the member that speaks the revision hears it
    // with the client's envelope (without one it would refuse it).
    const list = await modernPost(group, alice.key, { method: 'tools/list' });
    const names = list.body.result.tools.map((t: { name: string }) => t.name);
    expect(names).toEqual(expect.arrayContaining(['v2__confirm', 'v2__echo', 'everything__echo']));
    const call = { method: 'tools/call', params: { name: 'v2__confirm', arguments: { action: 'merge' }, _meta: ELICITS } };
    const first = await modernPost(group, alice.key, call);
    expect(first.body.result).toMatchObject({ resultType: 'input_required', requestState: 'confirm:merge' });
    expect(Object.keys(first.body.result.inputRequests)).toEqual(['confirm']);
    const retry = await modernPost(group, alice.key, {
      ...call,
      params: { ...call.params, requestState: 'confirm:merge', inputResponses: { confirm: { action: 'accept', content: { ok: true } } } },
    });
    expect(texts(retry.body.result)).toBe('merge: confirmed=true (state confirm:merge)');
    expect(
      texts(
        (await modernPost(group, alice.key, { method: 'tools/call', params: { name: 'everything__echo', arguments: { message: 'g' } } }))
          .body.result,
      ),
    ).toBe('Echo: g');
  });

  it('serves modern clients of a legacy-only upstream through its legacy link, after one look', async () => {
    for (const n of [1, 2, 3])
      expect(texts((await modernPost(proxy('everything'), alice.key, echo(`e${n}`))).body.result)).toBe(`Echo: e${n}`);
    expect(links(ids.everything)).toHaveLength(0);
    await gw.ctx.serviceLog.flush();
    const starts = await gw.ctx.db
      .selectFrom('service_logs')
      .select('message')
      .where('service_id', '=', ids.everything as number)
      .where('message', 'like', 'starting:%')
      .execute();
    // The legacy link's process, and the one that was asked server/discover once.
    expect(starts).toHaveLength(2);
  });

  it('serves each user’s modern requests to an isolated legacy-only service from one process of theirs', async () => {
    for (const [user, n] of [
      [alice, 1],
      [alice, 2],
      [alice, 3],
      [bob, 4],
    ] as const) {
      expect(texts((await modernPost(proxy('everything-isolated'), user.key, echo(`i${n}`))).body.result)).toBe(`Echo: i${n}`);
    }
    // Kept between requests (one per user), where each request used to start and stop a process of its own.
    const isolated = links(ids.everythingIsolated, '2025-11-25');
    expect(isolated).toHaveLength(2);
    expect(isolated.map((l) => l.state)).toEqual(['ready', 'ready']);
  });

  it('serves modern clients of a server that speaks only 2026-07-28, and tells a 2025-era client why it cannot', async () => {
    expect(texts((await modernPost(proxy('v2-only'), alice.key, echo('only'))).body.result)).toBe('modern echo: only');
    const legacy = await fetch(proxy('v2-only'), {
      method: 'POST',
      headers: { authorization: `Bearer ${alice.key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'old', version: '1' } },
      }),
    });
    const answer = (await legacy.json()) as { error?: { message: string } };
    expect(answer.error?.message).toMatch(
      /Unsupported protocol version: 2025-11-25 \(the tool server speaks only protocol revision 2026-07-28: use a client of that revision\)/,
    );
    // Up for the clients it serves: its health is checked in its own era, and the console shows it so.
    const health = await gw.ctx.gateway.checkHealth(ids['v2-only'] as number);
    expect(health).toMatchObject({ status: 'healthy', toolCount: 4 });
    expect(health.details).toMatch(/^4 tools, \d+ ms; protocol revision 2026-07-28 only$/);
    const row = await gw.ctx.db
      .selectFrom('services')
      .select(['health_status', 'health_details'])
      .where('id', '=', ids['v2-only'] as number)
      .executeTakeFirstOrThrow();
    expect(row.health_status).toBe('healthy');
    expect(row.health_details).toMatch(/protocol revision 2026-07-28 only$/);
    // The refused 2025 handshake started nothing that keeps retrying.
    expect(links(ids['v2-only'] as number, '2025-11-25').map((l) => l.state)).not.toContain('backoff');
  });

  it('answers -32021 with HTTP 400 when a legacy upstream needs a capability the request did not declare', async () => {
    const refused = await modernPost(proxy('everything'), alice.key, {
      method: 'tools/call',
      params: { name: 'trigger-sampling-request', arguments: { prompt: 'hi', maxTokens: 5 } },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: -32021, data: { requiredCapabilities: { sampling: {} } } });
    expect(refused.body.error.message).toMatch(/sampling/);
  });
});

const echo = (message: string) => ({ method: 'tools/call', params: { name: 'echo', arguments: { message } } });

const envelope = () => ({
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'raw-wire', version: '1' },
});

const modernHeaders = (key: string, method: string, name: string) => ({
  authorization: `Bearer ${key}`,
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': method,
  'mcp-name': name,
});
