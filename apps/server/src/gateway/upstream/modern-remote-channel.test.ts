import { type ChildProcess, spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { JSONRPCMessage, RequestId } from '@modelcontextprotocol/sdk/types.js';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, stdioSpec, until } from '../../../test/fixtures/upstream-kit.js';
import { configuredFetch } from '../../infra/outbound.js';
import type { ServiceSpec } from '../catalog.js';
import { decodeHeaderValue, encodeHeaderValue, META } from '../wire/revision-2026-07-28.js';
import { ModernRemoteChannel } from './modern-remote-channel.js';
import type { RemoteAuth } from './remote-channel.js';

const FIXTURE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../test/fixtures/modern-http-server.mjs');
const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });

interface Fixture {
  port: number;
  child: ChildProcess;
  stop: () => Promise<void>;
}

/** The v2 SDK's own HTTP handler in a process of its own (so that it can die mid-request). */
async function startFixture(extra: string[] = []): Promise<Fixture> {
  const port = await freePort();
  const child = spawn(process.execPath, [FIXTURE, String(port), ...extra], { stdio: ['ignore', 'pipe', 'pipe'] });
  const stop = () =>
    new Promise<void>((done) => {
      if (child.exitCode !== null || child.signalCode !== null) return done();
      child.once('exit', () => done());
      child.kill('SIGKILL');
    });
  await new Promise<void>((resolve, reject) => {
    let seen = '';
    const onData = (chunk: Buffer) => {
      seen += chunk.toString();
      if (seen.includes(`listening ${port}`)) resolve();
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`fixture exited (${code}): ${seen}`)));
  });
  return { port, child, stop };
}

const specFor = (url: string, headers: Record<string, string> = {}): ServiceSpec =>
  stdioSpec({ type: 'streamableHttp', command: url, args: [], headers });

/** The per-request envelope a modern link puts in every request's `_meta`. */
const envelope = (capabilities: Record<string, unknown> = { elicitation: { form: {} } }) => ({
  [META.protocolVersion]: '2026-07-28',
  [META.clientCapabilities]: capabilities,
  [META.clientInfo]: { name: 'toolport-test', version: '1.0.0' },
  [META.logLevel]: 'info',
});

type Message = JSONRPCMessage & { id?: RequestId; method?: string; params?: Record<string, unknown> };
type Answer = { id: RequestId; result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown } };

/** A channel with everything it delivers recorded in order. */
class Probe {
  readonly messages: Message[] = [];
  closed: string[] = [];
  private constructor(readonly channel: ModernRemoteChannel) {
    channel.onmessage = (m) => this.messages.push(m as Message);
    channel.onclose = (reason) => this.closed.push(reason);
  }

  static async open(spec: ServiceSpec, auth: RemoteAuth = {}, timeoutMs = 10_000): Promise<Probe> {
    return new Probe(await ModernRemoteChannel.open(spec, logger, timeoutMs, configuredFetch, auth));
  }

  answerOf(id: RequestId): Answer | undefined {
    return this.messages.find((m) => m.id === id && m.method === undefined) as Answer | undefined;
  }

  async request(id: RequestId, method: string, params: Record<string, unknown> = {}, meta: Record<string, unknown> = envelope()) {
    this.channel.send({ jsonrpc: '2.0', id, method, params: { ...params, _meta: { ...meta, ...(params._meta as object) } } });
    await until(() => this.answerOf(id) !== undefined, `the answer to ${id}`);
    return this.answerOf(id) as Answer;
  }

  call(id: RequestId, name: string, args: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) {
    return this.request(id, 'tools/call', { name, arguments: args, ...extra });
  }
}

const text = (a: Answer): string => ((a.result?.content as { text: string }[] | undefined) ?? [])[0]?.text ?? '';

describe('ModernRemoteChannel against the v2 SDK HTTP handler', () => {
  let fixture: Fixture;
  let url: string;

  beforeAll(async () => {
    fixture = await startFixture();
    url = `http://127.0.0.1:${fixture.port}/mcp`;
  });
  afterAll(async () => {
    await fixture.stop();
  });

  it('discovers the server without an initialize or a session', async () => {
    const probe = await Probe.open(specFor(url));
    const answer = await probe.request(1, 'server/discover');
    expect(answer.error).toBeUndefined();
    expect(answer.result?.supportedVersions).toContain('2026-07-28');
    expect(answer.result?.capabilities).toMatchObject({ tools: {} });
    expect(probe.messages).toHaveLength(1);
    await probe.channel.close();
  });

  it('answers a call with one JSON message, and many calls at once each with its own', async () => {
    const probe = await Probe.open(specFor(url));
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => probe.call(i + 1, 'echo', { message: `m${i + 1}` })));
    answers.forEach((a, i) => {
      expect(a.id).toBe(i + 1);
      expect(text(a)).toBe(`modern echo: m${i + 1}`);
      expect(a.result?.resultType).toBe('complete');
    });
    expect(probe.messages).toHaveLength(12);
    expect(probe.channel.inFlight).toBe(0);
    await probe.channel.close();
  });

  it('delivers the progress and log notifications of an SSE answer in order, then the response', async () => {
    const probe = await Probe.open(specFor(url));
    const answer = await probe.call('s', 'slow', {}, { _meta: { progressToken: 'tok' } });
    expect(text(answer)).toBe('slow done');
    expect(
      probe.messages.map((m) => (m.method ? `${m.method}:${JSON.stringify(m.params?.progress ?? m.params?.data)}` : `answer:${m.id}`)),
    ).toEqual([
      'notifications/progress:1',
      'notifications/message:"step 1"',
      'notifications/progress:2',
      'notifications/message:"step 2"',
      'answer:s',
    ]);
    expect(probe.messages[0]?.params?.progressToken).toBe('tok');
    await probe.channel.close();
  });

  it('passes an input_required result back untouched, and the retry with inputResponses and requestState completes', async () => {
    const probe = await Probe.open(specFor(url));
    const first = await probe.call(1, 'confirm', { action: 'deploy' });
    expect(first.error).toBeUndefined();
    expect(first.result?.resultType).toBe('input_required');
    expect(first.result?.requestState).toBe('round-1:deploy');
    const inputRequests = (first.result?.inputRequests ?? {}) as Record<string, { method: string; params: { message: string } }>;
    expect(Object.keys(inputRequests)).toEqual(['confirm']);
    expect(inputRequests.confirm).toMatchObject({ method: 'elicitation/create', params: { message: 'Confirm deploy?' } });
    // Untouched: the same message the server gives a plain HTTP client for the same request, key for key.
    const raw = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': 'confirm',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'confirm', arguments: { action: 'deploy' }, _meta: envelope() },
      }),
    });
    expect(first).toEqual(await raw.json());
    const retry = await probe.call(
      2,
      'confirm',
      { action: 'deploy' },
      {
        inputResponses: { confirm: { action: 'accept', content: { ok: true } } },
        requestState: first.result?.requestState,
      },
    );
    expect(retry.result?.resultType).toBe('complete');
    expect(text(retry)).toBe('deploy: confirmed=true state=round-1:deploy');
    await probe.channel.close();
  });

  it('passes a JSON-RPC error the server answered with an HTTP error status', async () => {
    const probe = await Probe.open(specFor(url));
    // No elicitation capability in the envelope: the server refuses the input request with HTTP 400.
    const answer = await probe.request(7, 'tools/call', { name: 'confirm', arguments: { action: 'x' } }, envelope({}));
    expect(answer.error?.code).toBe(-32021);
    expect(answer.error?.data).toMatchObject({ requiredCapabilities: { elicitation: { form: {} } } });
    await probe.channel.close();
  });

  it('sends the revision headers and the configured ones; a non-ASCII name goes as the Base64 sentinel and is accepted', async () => {
    const probe = await Probe.open(specFor(url, { 'x-team': 'blue' }));
    const plain = JSON.parse(text(await probe.call(1, 'headers'))) as Record<string, string>;
    expect(plain).toMatchObject({
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': 'headers',
      'x-team': 'blue',
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    });
    expect(plain['mcp-session-id']).toBeUndefined();
    const wide = await probe.call(2, 'écho-名');
    expect(wide.error).toBeUndefined();
    const sent = (JSON.parse(text(wide)) as Record<string, string>)['mcp-name'] as string;
    expect(sent).toBe(`=?base64?${Buffer.from('écho-名').toString('base64')}?=`);
    expect(decodeHeaderValue(sent)).toBe('écho-名');
    await probe.channel.close();
  });

  it('encodes header values the way the server side decodes them', () => {
    for (const value of ['plain', 'écho-名', ' padded ', '', '=?base64?abc?=', 'tab\there', 'file:///a b']) {
      expect(decodeHeaderValue(encodeHeaderValue(value))).toBe(value);
    }
    expect(encodeHeaderValue('file:///a b')).toBe('file:///a b');
    expect(encodeHeaderValue(' padded ')).toMatch(/^=\?base64\?/);
  });

  it('aborts the answer stream of a cancelled request, and delivers nothing more for it', async () => {
    const probe = await Probe.open(specFor(url));
    const before = Number(text(await probe.call('a0', 'aborted')));
    probe.channel.send({ jsonrpc: '2.0', id: 'w', method: 'tools/call', params: { name: 'wait', arguments: {}, _meta: envelope() } });
    await until(() => probe.messages.some((m) => m.method === 'notifications/message'), 'the wait tool streaming');
    probe.channel.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'w', reason: 'test' } });
    expect(probe.channel.inFlight).toBe(0);
    // The server saw its request aborted: the stream was closed.
    let n = 1;
    await until(async () => Number(text(await probe.call(`a${n++}`, 'aborted'))) === before + 1, 'the server noticing the abort');
    expect(probe.answerOf('w')).toBeUndefined();
    expect(probe.closed).toEqual([]);
    await probe.channel.close();
  });

  it('close() aborts every request in flight and resolves; nothing is delivered afterwards', async () => {
    const probe = await Probe.open(specFor(url));
    const counter = await Probe.open(specFor(url));
    const before = Number(text(await counter.call(0, 'aborted')));
    for (const id of [1, 2])
      probe.channel.send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'wait', arguments: {}, _meta: envelope() } });
    await until(() => probe.messages.filter((m) => m.method === 'notifications/message').length === 2, 'both waits streaming');
    await expect(probe.channel.close()).resolves.toBeUndefined();
    expect(probe.channel.inFlight).toBe(0);
    let n = 1;
    await until(async () => Number(text(await counter.call(n++, 'aborted'))) === before + 2, 'the server noticing both aborts');
    probe.channel.send({
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: { name: 'echo', arguments: { message: 'late' }, _meta: envelope() },
    });
    expect(probe.messages.filter((m) => m.method === undefined)).toEqual([]);
    expect(probe.closed).toEqual([]);
    await expect(probe.channel.close()).resolves.toBeUndefined();
    await counter.channel.close();
  });

  it('answers an HTTP error without a JSON-RPC body with an error for that request', async () => {
    const probe = await Probe.open(specFor(`http://127.0.0.1:${fixture.port}/unavailable`));
    const answer = await probe.call(1, 'echo', { message: 'x' });
    expect(answer.error?.code).toBe(-32603);
    expect(answer.error?.message).toContain('HTTP 503');
    expect(answer.error?.data).toEqual({ status: 503 });
    await probe.channel.close();
  });
});

describe('ModernRemoteChannel when things go wrong', () => {
  it('renews a rejected token once on 401 and sends the request again', async () => {
    const fixture = await startFixture(['--token', 'fresh']);
    try {
      const renewed: string[] = [];
      const auth: RemoteAuth = {
        authorization: {
          token: async () => 'stale',
          renew: async (rejected) => {
            renewed.push(rejected);
            return 'fresh';
          },
        },
      };
      const probe = await Probe.open(specFor(`http://127.0.0.1:${fixture.port}/mcp`), auth);
      expect(text(await probe.call(1, 'echo', { message: 'authorised' }))).toBe('modern echo: authorised');
      expect(renewed).toEqual(['stale']);

      // Without a connection the 401 is reported, and the request gets an error.
      const challenges: string[] = [];
      const bare = await Probe.open(specFor(`http://127.0.0.1:${fixture.port}/mcp`), { unauthorized: (w) => challenges.push(w) });
      const refused = await bare.call(2, 'echo', { message: 'x' });
      expect(refused.error?.data).toEqual({ status: 401 });
      expect(challenges).toEqual(['Bearer realm="fixture"']);
      await probe.channel.close();
      await bare.channel.close();
    } finally {
      await fixture.stop();
    }
  });

  it('gives a request whose upstream dies mid-answer a JSON-RPC error for its id (streaming or not)', async () => {
    for (const streamFirst of [true, false]) {
      const fixture = await startFixture();
      try {
        const probe = await Probe.open(specFor(`http://127.0.0.1:${fixture.port}/mcp`));
        const answer = await probe.call('d', 'die', { streamFirst });
        expect(answer.error?.code).toBe(-32000);
        await until(() => fixture.child.exitCode !== null, 'the fixture exiting');
        expect(fixture.child.exitCode).toBe(3);
        expect(probe.closed).toEqual([]);
        expect(probe.channel.inFlight).toBe(0);
        await probe.channel.close();
      } finally {
        await fixture.stop();
      }
    }
  });

  it('bounds server/discover by the open timeout', async () => {
    const silent: Server = createServer(() => undefined);
    const port = await freePort();
    await new Promise<void>((r) => silent.listen(port, '127.0.0.1', r));
    try {
      const probe = await Probe.open(specFor(`http://127.0.0.1:${port}/mcp`), {}, 200);
      const answer = await probe.request(1, 'server/discover');
      expect(answer.error?.code).toBe(-32001);
      expect(probe.channel.inFlight).toBe(0);
      await probe.channel.close();
    } finally {
      silent.closeAllConnections();
      await new Promise((r) => silent.close(r));
    }
  });
});
