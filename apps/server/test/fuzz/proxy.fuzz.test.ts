import { request as httpRequest } from 'node:http';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { mintSessionId, newNonce } from '../../src/gateway/downstream/session-token.js';
import { connect } from '../gateway/clients.js';
import { addService, addUser, everythingEntry, type LiveGateway, liveChildren, startGateway } from '../gateway/gateway-harness.js';
import { ACCEPT_BOTH, initializeBody, openSession, SseReader, sseMessages } from '../gateway/raw-http.js';
import { engines } from '../harness.js';
import {
  deepNesting,
  encode,
  fuzzOptions,
  hostileJson,
  hostileValue,
  hugeString,
  leaksInternals,
  MEGABYTE,
  malformedJsonText,
  Obj,
  printStats,
  Raw,
  rawEscapes,
  runs,
  short,
  shown,
  TEST_TIMEOUT,
  tally,
  toJsonText,
  weirdString,
  within,
} from './generators.js';

/**
 * Property-based fuzzing of the MCP proxy (issue 10, bad input): `/proxy/{name}/mcp` (streamable
 * HTTP) and `/proxy/{name}/sse` + `/message` (HTTP+SSE) with a real stdio server-everything behind.
 * protocol-errors.test.ts pins each refusal's status and code; this suite throws generated input at
 * the same routes: arbitrary JSON, JSON-RPC shapes with wrong types, batch abuse, huge and deeply
 * nested values, forged session ids, wrong headers. Every answer is a 4xx with a JSON-RPC error body
 * or a well-formed JSON-RPC answer, never a 5xx, never a hang; afterwards the upstream process is
 * the same one and a real SDK client still gets its answer.
 */

const ANSWER_MS = 20_000;

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/**
 * One HTTP/1.1 request with exactly these headers and body bytes, answered within ANSWER_MS. A GET
 * that opens an event stream resolves once its headers arrive (the stream itself never ends).
 */
function send(url: string, method: string, headers: Record<string, string | string[]>, body?: string | Buffer): Promise<Reply> {
  // Split by hand: the WHATWG URL parser would resolve `%2e%2e` and friends before the gateway sees them.
  const [, host = '', port = '', path = '/'] = /^http:\/\/([^:/]+):(\d+)(\/.*)?$/.exec(url) ?? [];
  return within(
    ANSWER_MS,
    `${method} ${short(url, 200)}`,
    new Promise<Reply>((resolve, reject) => {
      const req = httpRequest({ host, port, method, path, headers }, (res) => {
        const reply = { status: res.statusCode ?? 0, headers: res.headers };
        if (method === 'GET' && String(res.headers['content-type']).startsWith('text/event-stream')) {
          res.destroy();
          resolve({ ...reply, text: '' });
          return;
        }
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ ...reply, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      });
      req.on('error', reject);
      // Framed by its length: Node sends a DELETE body unframed otherwise, which is a broken request.
      if (body !== undefined) req.setHeader('content-length', Buffer.byteLength(body));
      req.end(body);
    }),
  );
}

type Json = Record<string, unknown>;
const safeJson = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A JSON-RPC 2.0 message as the spec defines it: a request, a notification, or a response with result xor error. */
function wellFormedMessage(m: unknown): string | undefined {
  if (!isObject(m)) return 'not an object';
  if (m.jsonrpc !== '2.0') return 'jsonrpc is not "2.0"';
  if ('method' in m) return typeof m.method === 'string' ? undefined : 'method is not a string';
  if (!('id' in m)) return 'response without id';
  const id = m.id;
  if (!(id === null || typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)))) return 'bad id';
  if ('result' in m === 'error' in m) return 'not exactly one of result and error';
  if ('error' in m) {
    const e = m.error;
    if (!isObject(e) || !Number.isInteger(e.code) || typeof e.message !== 'string') return 'malformed error object';
  }
  return undefined;
}

/** What every proxy answer must be. `what` describes the request for the failure report. */
function checkReply(res: Reply, what: string): void {
  const label = `${res.status} for ${short(what, 400)}\n${short(res.text, 600)}`;
  tally(
    `${res.status} ${isObject(safeJson(res.text)) ? String((safeJson(res.text) as Json).error && ((safeJson(res.text) as Json).error as Json).code) : ''}`,
  );
  expect(res.status, label).toBeLessThan(500);
  expect(leaksInternals(res.text), label).toBeUndefined();
  const type = String(res.headers['content-type'] ?? '');
  if (res.status >= 400) {
    expect(type, label).toMatch(/^application\/json/);
    const body = JSON.parse(res.text) as unknown;
    expect(wellFormedMessage(body), label).toBeUndefined();
    expect(isObject(body) && 'error' in body, label).toBe(true);
    return;
  }
  if (res.status === 202 || res.text === '') return;
  const messages: unknown[] = type.startsWith('text/event-stream')
    ? sseMessages(res.text)
    : type.startsWith('application/json')
      ? [JSON.parse(res.text)].flat()
      : ['a body that is neither JSON nor an event stream'];
  for (const m of messages) expect(wellFormedMessage(m), label).toBeUndefined();
}

// ---- generated messages -------------------------------------------------------------------------

/** Methods server-everything answers at once; tools that wait for the client (sampling, elicitation) or run long stay out. */
const methods = [
  'ping',
  'tools/list',
  'resources/list',
  'resources/templates/list',
  'prompts/list',
  'tools/call',
  'resources/read',
  'prompts/get',
  'completion/complete',
  'logging/setLevel',
  'resources/subscribe',
  'resources/unsubscribe',
  'initialize',
  'notifications/initialized',
  'notifications/cancelled',
  'notifications/progress',
  'notifications/roots/list_changed',
  'no/such/method',
  'rpc.discover',
  '',
];
const tools = [
  'echo',
  'get-sum',
  'get-tiny-image',
  'get-annotated-message',
  'get-structured-content',
  'get-resource-links',
  'no-such-tool',
];

const idArb = fc.oneof(
  { weight: 4, arbitrary: fc.integer() },
  { weight: 3, arbitrary: weirdString },
  { weight: 1, arbitrary: fc.constantFrom<unknown>(null, true, 1.5, -0, new Raw('1e309'), new Raw('123456789012345678901234567890')) },
  { weight: 1, arbitrary: fc.constantFrom<unknown>(new Obj([['a', 1]]), [1, 2], new Obj([])) },
  { weight: 1, arbitrary: hugeString },
);
/** Methods as a client might name them: known ones mostly, and any string. */
const methodArb = fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...methods) }, { weight: 2, arbitrary: weirdString });
const argumentsArb = fc.oneof(
  fc.record({ message: fc.oneof(weirdString, hostileValue) }).map((r) => new Obj(Object.entries(r))),
  fc.record({ a: hostileValue, b: hostileValue }).map((r) => new Obj(Object.entries(r))),
  hostileJson,
);
const obj = (r: Record<string, unknown>) => new Obj(Object.entries(r));
/** Parameters a request may carry: objects, some with hostile or 10k-deep values inside. */
const paramsArb = fc.oneof(
  { weight: 4, arbitrary: fc.record({ name: fc.oneof(fc.constantFrom(...tools), weirdString), arguments: argumentsArb }).map(obj) },
  {
    weight: 1,
    arbitrary: fc.record({ uri: fc.oneof(weirdString, fc.constant('demo://resource/static/document/architecture.md')) }).map(obj),
  },
  { weight: 1, arbitrary: fc.record({ level: fc.oneof(fc.constantFrom('debug', 'emergency'), weirdString) }).map(obj) },
  { weight: 1, arbitrary: fc.oneof(idArb, hostileValue).map((token) => obj({ _meta: obj({ progressToken: token }) })) },
  { weight: 1, arbitrary: fc.record({ requestId: idArb, reason: weirdString }).map(obj) },
  { weight: 1, arbitrary: fc.array(fc.tuple(weirdString, hostileJson), { maxLength: 4 }).map((pairs) => new Obj(pairs)) },
  { weight: 1, arbitrary: deepNesting.map((deep) => obj({ name: 'echo', arguments: obj({ message: 'deep', extra: deep }) })) },
  { weight: 1, arbitrary: deepNesting.map((deep) => obj({ _meta: obj({ progressToken: deep }) })) },
);
const notifications = methods.filter((m) => m.startsWith('notifications/'));

/** A well-formed request, notification or response, which a mutation may then break in one member. */
const skeletonArb: fc.Arbitrary<[string, unknown][]> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc
      .tuple(idArb, methodArb, fc.option(paramsArb, { freq: 5 }))
      .map(([id, method, params]): [string, unknown][] => [
        ['jsonrpc', '2.0'],
        ['id', id],
        ['method', method],
        ...(params === null ? [] : [['params', params] as [string, unknown]]),
      ]),
  },
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.constantFrom(...notifications), fc.option(paramsArb))
      .map(([method, params]): [string, unknown][] => [
        ['jsonrpc', '2.0'],
        ['method', method],
        ...(params === null ? [] : [['params', params] as [string, unknown]]),
      ]),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(idArb, fc.oneof(fc.constant<unknown>(new Obj([])), hostileJson), fc.boolean())
      .map(([id, value, isError]): [string, unknown][] => [
        ['jsonrpc', '2.0'],
        ['id', id],
        isError ? ['error', obj({ code: -32000, message: 'x', data: value })] : ['result', value],
      ]),
  },
);
const DROP = Symbol('drop');
const mutationArb = fc.tuple(
  fc.constantFrom('jsonrpc', 'id', 'method', 'params', 'result', 'error'),
  fc.oneof(
    fc.constant<unknown>(DROP),
    fc.constantFrom<unknown>('1.0', 2, null, '', 42, true, new Obj([['a', 1]]), [1], 'params as a string'),
    hostileValue,
  ),
);

/** A JSON-RPC-shaped object: mostly well-formed (so it reaches the upstream), sometimes one member wrong, missing or extra. */
const rpcArb: fc.Arbitrary<Obj> = fc.tuple(skeletonArb, fc.option(mutationArb, { freq: 3 })).map(([pairs, mutation]) => {
  if (!mutation) return new Obj(pairs);
  const [key, value] = mutation;
  const rest = pairs.filter(([k]) => k !== key);
  return new Obj(value === DROP ? rest : [...rest, [key, value]]);
});

/** A request the upstream answers: what a batch is made of when it should get through. */
const goodRequest = fc.tuple(fc.integer({ min: 1, max: 1_000_000 }), fc.constantFrom('ping', 'tools/list', 'prompts/list')).map(
  ([id, method]) =>
    new Obj([
      ['jsonrpc', '2.0'],
      ['id', id],
      ['method', method],
    ]),
);
const echoRequest = (id: unknown, message: string) =>
  new Obj([
    ['jsonrpc', '2.0'],
    ['id', id],
    ['method', 'tools/call'],
    [
      'params',
      new Obj([
        ['name', 'echo'],
        ['arguments', new Obj([['message', message]])],
      ]),
    ],
  ]);

const pingText = (i: number) => `{"jsonrpc":"2.0","id":${i},"method":"ping"}`;
const bigBatch = `[${Array.from({ length: 10_000 }, (_, i) => pingText(i)).join(',')}]`;
const bigNotificationBatch = `[${Array.from({ length: 10_000 }, () => '{"jsonrpc":"2.0","method":"notifications/initialized"}').join(',')}]`;

/** A POST body, as text: one message, a batch in any shape, or no JSON-RPC at all. */
const bodyArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 8, arbitrary: rpcArb.map(toJsonText) },
  { weight: 2, arbitrary: hostileJson.map(toJsonText) },
  { weight: 2, arbitrary: fc.array(fc.oneof(rpcArb, goodRequest), { maxLength: 6 }).map(toJsonText) },
  { weight: 1, arbitrary: fc.constantFrom('[]', '[[]]', bigBatch, bigNotificationBatch) },
  { weight: 1, arbitrary: fc.array(fc.array(goodRequest, { minLength: 1, maxLength: 2 }), { minLength: 1, maxLength: 3 }).map(toJsonText) },
  // Duplicate ids in one batch, and requests mixed with responses.
  { weight: 1, arbitrary: goodRequest.map((r) => toJsonText([r, r, echoRequest((r.pairs[1] as [string, unknown])[1], 'dup')])) },
  {
    weight: 1,
    arbitrary: fc.tuple(goodRequest, fc.integer()).map(([r, id]) =>
      toJsonText([
        r,
        new Obj([
          ['jsonrpc', '2.0'],
          ['id', id],
          ['result', new Obj([])],
        ]),
        new Obj([
          ['jsonrpc', '2.0'],
          ['id', id],
          [
            'error',
            new Obj([
              ['code', -1],
              ['message', 'x'],
            ]),
          ],
        ]),
      ]),
    ),
  },
  { weight: 1, arbitrary: deepNesting.map(toJsonText) },
  { weight: 1, arbitrary: hugeString.map((h) => toJsonText(echoRequest(1, h))) },
  { weight: 1, arbitrary: fc.constant(toJsonText(echoRequest(1, 'z'.repeat(3 * MEGABYTE)))) },
  { weight: 2, arbitrary: malformedJsonText(rpcArb.map(toJsonText)) },
);

const acceptArb = fc.oneof(
  { weight: 6, arbitrary: fc.constant(ACCEPT_BOTH) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      'application/json',
      'text/event-stream',
      '*/*',
      '',
      'text/html',
      'application/json;q=0, text/event-stream;q=0',
      'application/*',
    ),
  },
);
const contentTypeArb = fc.oneof(
  { weight: 8, arbitrary: fc.constant('application/json') },
  {
    weight: 1,
    arbitrary: fc.constantFrom('text/plain', 'application/json; charset=utf-16', 'application/jsonl', 'multipart/form-data', ''),
  },
);
const versionArb = fc.oneof(
  { weight: 4, arbitrary: fc.constant<string | undefined>(undefined) },
  { weight: 2, arbitrary: fc.constantFrom('2025-06-18', '2025-03-26', '2025-11-25', '2024-11-05') },
  { weight: 2, arbitrary: fc.constantFrom('1999-01-01', '2026-07-28', '', 'latest', '2025-06-18, 2025-03-26', '2025-6-18') },
  { weight: 1, arbitrary: weirdString.map((s) => s.replace(/[^\x20-\x7e]/g, '')) },
);

/** Header values a client can put on the wire (no control characters, no bytes past Latin-1). */
const wireSafe = (s: string) => s.replace(/[^\x20-\x7e]/g, '?');

// A long hunt (FUZZ_RUNS) outlasts the configured per-test limit.
vi.setConfig({ testTimeout: TEST_TIMEOUT });

describe.each(engines)('proxy fuzz on %s', (engine) => {
  let gw: LiveGateway;
  let alice: { id: number; key: string };
  let bob: { id: number; key: string };
  let serviceId: number;
  let otherId: number;
  let mcp: string;
  let upstream: number[];
  // The long suite on SQLite; PostgreSQL gets fewer runs of the same properties (names and ids reach its queries).
  const scale = (n: number) => runs(engine === 'sqlite' ? n : Math.max(3, Math.round(n / 3)));

  beforeAll(async () => {
    gw = await startGateway(engine, {
      // The fuzz itself must not be refused by the abuse limits; they have their own tests.
      PROXY_NEW_SESSIONS_PER_MINUTE: '100000',
      PROXY_AUTH_FAILURES_PER_MINUTE: '100000',
    });
    alice = await addUser(gw.ctx, 'alice');
    bob = await addUser(gw.ctx, 'bob');
    serviceId = await addService(gw.ctx, { name: 'everything' });
    // Never started: its only use is a session id signed for another service.
    otherId = await addService(gw.ctx, { name: 'other', type: 'sse', command: 'http://127.0.0.1:9/sse' });
    mcp = `${gw.url}/proxy/everything/mcp`;
    await openSession(mcp, alice.key);
    upstream = liveChildren(everythingEntry);
    expect(upstream.length).toBe(1);
  });
  afterAll(async () => {
    printStats(`proxy fuzz on ${engine}`);
    await gw?.close();
  });

  it('answers generated messages, batches and malformed bodies in a session', async () => {
    // One session per protocol version: batches are allowed on 2025-03-26 and refused after it.
    const sessions = { old: await openSession(mcp, alice.key, '2025-03-26'), current: await openSession(mcp, alice.key, '2025-06-18') };
    await fc.assert(
      fc.asyncProperty(
        bodyArb.map((b) => shown({ b }, b)),
        fc.constantFrom<'old' | 'current'>('old', 'current'),
        acceptArb,
        contentTypeArb,
        async ({ b: body }, which, accept, contentType) => {
          const headers: Record<string, string> = { authorization: `Bearer ${alice.key}`, 'mcp-session-id': sessions[which] };
          if (accept) headers.accept = accept;
          if (contentType) headers['content-type'] = contentType;
          const res = await send(mcp, 'POST', headers, body);
          checkReply(res, `${which} session, accept ${accept}, ${contentType}: ${body}`);
        },
      ),
      fuzzOptions(scale(120)),
    );
  });

  it('answers generated messages on the legacy message endpoint and keeps the stream well-formed', async () => {
    const res = await fetch(`${gw.url}/proxy/everything/sse`, {
      headers: { accept: 'text/event-stream', authorization: `Bearer ${alice.key}` },
    });
    const stream = SseReader.of(res);
    const endpoint = await stream.next();
    const messageUrl = `${gw.url}${endpoint.data}`;
    // Every message the stream carries, read as it arrives so the stream never backs up.
    const seen: unknown[] = [];
    let streamError: unknown;
    const reading = (async () => {
      for (;;) seen.push(JSON.parse((await stream.next()).data));
    })().catch((err: unknown) => {
      streamError = err;
    });
    await send(
      messageUrl,
      'POST',
      { 'content-type': 'application/json', authorization: `Bearer ${alice.key}` },
      JSON.stringify(initializeBody('2024-11-05')),
    );

    await fc.assert(
      fc.asyncProperty(
        bodyArb.map((b) => shown({ b }, b)),
        contentTypeArb,
        async ({ b: body }, contentType) => {
          const headers: Record<string, string> = { authorization: `Bearer ${alice.key}` };
          if (contentType) headers['content-type'] = contentType;
          const reply = await send(messageUrl, 'POST', headers, body);
          expect(reply.status, short(`${reply.text} for ${body}`, 600)).toBeLessThan(500);
          if (reply.status >= 400) checkReply(reply, body);
          else expect(reply.status).toBe(202);
        },
      ),
      fuzzOptions(scale(80)),
    );

    // The stream still works: a ping's answer arrives on it, and everything it carried was JSON-RPC.
    const pingId = `after-fuzz-${Date.now()}`;
    await send(
      messageUrl,
      'POST',
      { 'content-type': 'application/json', authorization: `Bearer ${alice.key}` },
      JSON.stringify({ jsonrpc: '2.0', id: pingId, method: 'ping' }),
    );
    await within(
      ANSWER_MS,
      'the ping answer on the legacy stream',
      (async () => {
        while (!seen.some((m) => isObject(m) && m.id === pingId)) {
          if (streamError) throw streamError;
          await new Promise((r) => setTimeout(r, 20));
        }
      })(),
    );
    for (const m of seen) expect(wellFormedMessage(m), short(JSON.stringify(m), 300)).toBeUndefined();
    await stream.cancel();
    await reading;
  });

  it('refuses invalid, forged and foreign session ids and wrong headers with a JSON-RPC error', async () => {
    const signed = (claims: Partial<{ userId: number; serviceId: number; protocolVersion: string; issuedAt: number }>) =>
      mintSessionId(gw.ctx.secrets, {
        userId: alice.id,
        serviceId,
        protocolVersion: '2025-06-18',
        issuedAt: Date.now(),
        nonce: newNonce(),
        ...claims,
      });
    const base = await openSession(mcp, alice.key);
    const sessionArb = fc.oneof(
      fc.constant({ kind: 'valid', id: '' }),
      fc
        .string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 300 })
        .map((id) => ({ kind: 'random', id })),
      fc.nat({ max: base.length - 1 }).map((n) => ({ kind: 'truncated', id: base.slice(0, n) })),
      fc
        .tuple(fc.nat({ max: base.length - 1 }), fc.constantFrom('A', 'z', '.', '-', '0'))
        // A real change: the same character again would be the valid id.
        .filter(([n, c]) => base[n] !== c)
        .map(([n, c]) => ({ kind: 'flipped', id: `${base.slice(0, n)}${c}${base.slice(n + 1)}` })),
      fc.constant({ kind: 'other service', id: signed({ serviceId: otherId }) }),
      fc.constant({ kind: 'other user', id: signed({ userId: bob.id }) }),
      fc.constant({ kind: 'expired', id: signed({ issuedAt: Date.now() - 30 * 24 * 3600_000 }) }),
      fc.constant({ kind: 'future', id: signed({ issuedAt: Date.now() + 24 * 3600_000 }) }),
      fc.constant({ kind: 'odd version', id: signed({ protocolVersion: '9999-99-99' }) }),
      fc.constant({
        kind: 'huge',
        id: `1.${'9'.repeat(15)}.${'9'.repeat(15)}.2025-06-18.${'9'.repeat(15)}.${newNonce()}.${'A'.repeat(43)}`,
      }),
      fc.constant({ kind: 'signed with another key', id: `${base.split('.').slice(0, 6).join('.')}.${'A'.repeat(43)}` }),
    );
    const keyArb = fc.oneof(
      { weight: 6, arbitrary: fc.constant<string | undefined>(alice.key) },
      {
        weight: 1,
        arbitrary: fc.constantFrom<string | undefined>(bob.key, undefined, 'tpk_forged', `${alice.key}x`, alice.key.slice(0, -1)),
      },
    );
    await fc.assert(
      fc.asyncProperty(
        sessionArb,
        fc.constantFrom('POST', 'GET', 'DELETE', 'PUT', 'PATCH', 'OPTIONS', 'HEAD'),
        keyArb,
        versionArb,
        acceptArb,
        fc.oneof(rpcArb.map(toJsonText), fc.constant(toJsonText(echoRequest(1, 'hello')))),
        fc.option(fc.constantFrom('https://evil.example', 'null', '', gw.url)),
        async (session, method, key, version, accept, body, origin) => {
          // A valid id is a fresh session of its own: DELETE may end it.
          const id = session.kind === 'valid' ? await openSession(mcp, alice.key) : session.id;
          const headers: Record<string, string> = { 'mcp-session-id': id, 'content-type': 'application/json' };
          if (key) headers.authorization = `Bearer ${key}`;
          if (version !== undefined) headers['mcp-protocol-version'] = wireSafe(version);
          if (accept) headers.accept = accept;
          if (origin !== null) headers.origin = origin;
          const res = await send(mcp, method, headers, method === 'GET' || method === 'HEAD' ? undefined : body);
          const what = `${method} with a ${session.kind} session ${short(id, 80)}, key ${key?.slice(0, 8)}, version ${version}, accept ${accept}, origin ${origin}: ${body}`;
          if (method === 'HEAD') {
            expect(res.status, what).toBeLessThan(500);
            return;
          }
          if (method === 'DELETE' && res.status === 200) {
            expect(['valid', 'odd version'], what).toContain(session.kind);
            return;
          }
          checkReply(res, what);
          // An id the gateway signed for Alice and this service is hers, whatever version it names; the rest are not.
          if (
            !['valid', 'odd version'].includes(session.kind) &&
            key === alice.key &&
            origin !== 'https://evil.example' &&
            origin !== 'null' &&
            origin !== ''
          ) {
            // Nobody gets into a session that is not theirs, whatever else the request gets wrong.
            expect(res.status, what).toBeGreaterThanOrEqual(400);
          }
        },
      ),
      fuzzOptions(scale(120)),
    );
  });

  it('answers generated service names, query strings and broken escapes in the URL', async () => {
    const nameArb = fc.oneof(
      { weight: 2, arbitrary: weirdString.filter((s) => s !== '').map(encode) },
      { weight: 1, arbitrary: rawEscapes },
      {
        weight: 1,
        arbitrary: fc.constantFrom('everything', 'EVERYTHING', 'everything%00', '%00', '..', '.', 'everything.', '%2e%2e', 'other'),
      },
      { weight: 1, arbitrary: fc.string({ minLength: 100, maxLength: 400 }).map(encode) },
    );
    const queryArb = fc.array(
      fc.oneof(
        fc.constantFrom(
          `key=${alice.key}`,
          `key=${bob.key}`,
          'key=',
          'key',
          'key=tpk_x&key=tpk_y',
          `key=${alice.key}&key=${bob.key}`,
          'sessionId=',
          'sessionId=a&sessionId=b',
        ),
        weirdString.map((v) => `sessionId=${encode(v)}`),
        weirdString.map((v) => `key=${encode(v)}`),
        rawEscapes.map((e) => `key=${e}`),
        rawEscapes.map((e) => `sessionId=${e}`),
      ),
      { maxLength: 3 },
    );
    await fc.assert(
      fc.asyncProperty(
        nameArb,
        fc.constantFrom('mcp', 'sse', 'message'),
        fc.constantFrom('GET', 'POST', 'DELETE'),
        queryArb,
        fc.boolean(),
        async (name, route, method, query, withHeaderKey) => {
          const url = `${gw.url}/proxy/${name}/${route}${query.length ? `?${query.join('&')}` : ''}`;
          const headers: Record<string, string> = { accept: ACCEPT_BOTH, 'content-type': 'application/json' };
          if (withHeaderKey) headers.authorization = `Bearer ${alice.key}`;
          const res = await send(url, method, headers, method === 'POST' ? toJsonText(echoRequest(1, 'x')) : undefined);
          checkReply(res, `${method} ${url}`);
        },
      ),
      fuzzOptions(scale(120)),
    );
  });

  it('answers the inputs the fuzz once found failing with a JSON-RPC error', async () => {
    const session = await openSession(mcp, alice.key);
    const headers = {
      authorization: `Bearer ${alice.key}`,
      accept: ACCEPT_BOTH,
      'content-type': 'application/json',
      'mcp-session-id': session,
    };
    const nested = (levels: number) =>
      `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"message":"m","extra":${'['.repeat(levels)}${']'.repeat(levels)}}}}`;
    // 10k levels overflowed the stack on the way upstream ("upstream unavailable: Maximum call stack size exceeded").
    const deep = await send(mcp, 'POST', headers, nested(10_000));
    expect(deep.status).toBe(400);
    expect(JSON.parse(deep.text)).toMatchObject({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: expect.stringContaining('256') },
    });
    const fine = await send(mcp, 'POST', headers, nested(200));
    expect(fine.status).toBe(200);
    expect(JSON.parse(fine.text)).toMatchObject({ id: 7, result: { content: [{ text: 'Echo: m' }] } });
    // A NUL in the service name reached PostgreSQL (a 500); an overlong one got Fastify's own 414 shape.
    const nul = await send(`${gw.url}/proxy/%00/mcp`, 'POST', headers, nested(1));
    expect(nul.status).toBe(404);
    expect(JSON.parse(nul.text)).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 } });
    const long = await send(`${gw.url}/proxy/${'n'.repeat(150)}/mcp`, 'POST', headers, nested(1));
    expect(long.status).toBe(414);
    expect(JSON.parse(long.text)).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32000 } });
  });

  it('still runs the same upstream process, which answers a real SDK client', async () => {
    expect(liveChildren(everythingEntry)).toEqual(upstream);
    const client = await connect(gw.url, 'everything', alice.key, { sdk: 'v1', wire: 'http' });
    const result = await client.callTool('echo', { message: 'after the fuzz' });
    expect(result.content).toEqual([{ type: 'text', text: 'Echo: after the fuzz' }]);
    await client.close();
    const legacy = await connect(gw.url, 'everything', alice.key, { sdk: 'v1', wire: 'sse' });
    expect((await legacy.callTool('echo', { message: 'legacy too' })).content).toEqual([{ type: 'text', text: 'Echo: legacy too' }]);
    await legacy.close();
    // Whatever the fuzz sent, the counters and request records reach the database.
    await expect(gw.ctx.meter.flush()).resolves.toBeUndefined();
    expect((await fetch(`${gw.url}/api/health`)).status).toBe(200);
  });
});
