import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, textOf, until } from './clients.js';
import { addService, addUser, type LiveGateway, startGateway } from './gateway-harness.js';
import { openSession, post } from './raw-http.js';

const floodServer = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures/flood-server.mjs');
/** What a stream may hold unsent here (PROXY_STREAM_BUFFER_BYTES), far below the kernel's socket buffers. */
const CAP = 256 * 1024;

/** A raw TCP connection to the gateway that records what it receives and when it is closed. */
class RawConn {
  readonly socket: net.Socket;
  received = '';
  closed = false;

  private constructor(socket: net.Socket) {
    this.socket = socket;
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => {
      this.received += d;
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      this.closed = true;
    });
  }

  static open(base: string): Promise<RawConn> {
    const { hostname, port } = new URL(base);
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host: hostname, port: Number(port) }, () => resolve(new RawConn(socket)));
      socket.once('error', reject);
    });
  }

  write(text: string): void {
    if (!this.closed) this.socket.write(text);
  }

  /** Stops reading: the kernel buffers fill up, then the gateway's. */
  stopReading(): void {
    this.socket.pause();
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Sends `text` one byte at a time, `everyMs` apart, until it is all sent or the connection is closed. */
async function trickle(conn: RawConn, text: string, everyMs: number): Promise<void> {
  for (const ch of text) {
    if (conn.closed) return;
    conn.write(ch);
    await sleep(everyMs);
  }
}

describe('slow clients (SQLite)', () => {
  let gw: LiveGateway;
  let key: string;
  let normalKey: string;

  beforeAll(async () => {
    gw = await startGateway('sqlite', {
      HTTP_HEADERS_TIMEOUT_MS: '600',
      HTTP_REQUEST_TIMEOUT_MS: '2000',
      PROXY_STREAM_BUFFER_BYTES: String(CAP),
    });
    await addService(gw.ctx, { name: 'everything' });
    await addService(gw.ctx, { name: 'flood', args: [floodServer] });
    key = (await addUser(gw.ctx, 'slow-user')).key;
    normalKey = (await addUser(gw.ctx, 'normal-user')).key;
  }, 60_000);
  afterAll(async () => gw?.close());

  const slowReaders = async (): Promise<number> => {
    const text = await (await fetch(`${gw.url}/metrics`)).text();
    return Number(/toolport_abuse_refusals_total\{limit="slow_reader"\} (\d+)/.exec(text)?.[1] ?? 0);
  };

  /** A well-behaved client: an SDK client that calls a tool while the slow ones misbehave. */
  async function normalCall(message: string): Promise<void> {
    const client = await connect(gw.url, 'everything', normalKey, { sdk: 'v1', wire: 'http' });
    try {
      expect(textOf(await client.callTool('echo', { message }))).toBe(`Echo: ${message}`);
    } finally {
      await client.close();
    }
  }

  it('cuts off a client that trickles its headers (slowloris) with 408, serving others meanwhile', async () => {
    const conn = await RawConn.open(gw.url);
    conn.write(`POST /proxy/everything/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n`);
    const slow = trickle(conn, `Authorization: Bearer ${key}\r\n`.repeat(20), 50);
    await normalCall('during a slowloris');
    await until(() => conn.closed, 'the gateway to close the slow connection', 10_000);
    await slow;
    expect(conn.received).toMatch(/^HTTP\/1\.1 408 /);
  }, 30_000);

  it('answers a proxy body trickled past its deadline with a localised 408 JSON-RPC error and closes', async () => {
    const session = await openSession(`${gw.url}/proxy/everything/mcp`, key);
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const conn = await RawConn.open(gw.url);
    conn.write(
      [
        'POST /proxy/everything/mcp HTTP/1.1',
        'Host: 127.0.0.1',
        `Authorization: Bearer ${key}`,
        'Accept: application/json, text/event-stream',
        'Accept-Language: zh-CN',
        'Content-Type: application/json',
        `Content-Length: ${body.length}`,
        `Mcp-Session-Id: ${session}`,
        '',
        '',
      ].join('\r\n'),
    );
    // One byte every 100 ms: the whole body would take seconds; it must arrive within 1 s (half of 2 s).
    const slow = trickle(conn, body, 100);
    await normalCall('during a slow body');
    await until(() => conn.closed, 'the gateway to close the slow connection', 10_000);
    await slow;
    expect(conn.received).toMatch(/^HTTP\/1\.1 408 /);
    expect(conn.received.toLowerCase()).toContain('connection: close');
    const json = JSON.parse(conn.received.slice(conn.received.indexOf('\r\n\r\n') + 4));
    expect(json).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32000, message: '请求超时：请求体未在 1 秒内送达' } });
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(metrics).toContain('toolport_abuse_refusals_total{limit="body_timeout"} 1');
  }, 30_000);

  it('drops a legacy SSE session whose client never reads its stream, holding at most the cap plus one message', async () => {
    const conn = await RawConn.open(gw.url);
    conn.write(
      `GET /proxy/everything/sse HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nAccept: text/event-stream\r\n\r\n`,
    );
    await until(() => /event: endpoint\ndata: [^\n]+\n\n/.test(conn.received), 'the endpoint event');
    const endpoint = /event: endpoint\ndata: ([^\n]+)\n/.exec(conn.received)?.[1] as string;
    const sessionId = new URL(endpoint, gw.url).searchParams.get('sessionId') as string;
    conn.stopReading();
    const session = gw.ctx.gateway.session(sessionId);
    expect(session?.streamOpen).toBe(true);

    const message = 'x'.repeat(200 * 1024);
    const send = (msg: unknown) =>
      fetch(`${gw.url}${endpoint}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(msg),
      });
    expect(
      (
        await send({
          jsonrpc: '2.0',
          id: 0,
          method: 'initialize',
          params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'slow', version: '1' } },
        })
      ).status,
    ).toBe(202);
    // Each echo's answer (about 200 KiB) goes on the stream nobody reads; the kernel's buffers fill first.
    let largest = 0;
    for (let id = 1; id <= 200 && !session?.closed; id++) {
      const res = await send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { message } } });
      if (res.status !== 202) break;
      largest = Math.max(largest, message.length + 200);
      await sleep(10);
    }
    await until(() => session?.closed === true, 'the session to be dropped', 20_000);
    expect(session?.closedReason).toBe('client not reading its stream');
    expect(gw.ctx.gateway.session(sessionId)).toBeUndefined();
    expect(session?.streamOpen).toBe(false);
    // The bound was reached (so it was tested) and never passed by more than the message that crossed it.
    expect(session?.streamPeakBuffered).toBeGreaterThan(CAP);
    expect(session?.streamPeakBuffered).toBeLessThanOrEqual(CAP + largest);
    // The session is gone: its message URL answers 404 now; other clients are served as before.
    expect((await send({ jsonrpc: '2.0', id: 999, method: 'ping' })).status).toBe(404);
    await normalCall('after a slow reader');
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(metrics).toMatch(/toolport_abuse_refusals_total\{limit="slow_reader"\} [1-9]/);
    conn.socket.destroy();
  }, 60_000);

  it('keeps the stream of a client that reads, however large the answers it asks for back to back', async () => {
    // Each answer is four times the bound: a reader is never cut for one large message, only for falling behind.
    const big = 'y'.repeat(4 * CAP);
    for (const wire of ['sse', 'http'] as const) {
      const client = await connect(gw.url, 'everything', normalKey, { sdk: 'v1', wire });
      try {
        const before = await slowReaders();
        const answers = await Promise.all([1, 2, 3].map((n) => client.callTool('echo', { message: `${n}${big}` })));
        expect(answers.map((answer) => textOf(answer))).toEqual([1, 2, 3].map((n) => `Echo: ${n}${big}`));
        expect(textOf(await client.callTool('echo', { message: 'still here' }))).toBe('Echo: still here');
        expect(client.errors).toEqual([]);
        expect(await slowReaders()).toBe(before);
      } finally {
        await client.close();
      }
    }
  }, 60_000);

  it('drops the GET stream and session of a streamable HTTP client that never reads it while notifications flood in', async () => {
    const mcp = `${gw.url}/proxy/flood/mcp`;
    const sessionId = await openSession(mcp, key);
    const conn = await RawConn.open(gw.url);
    conn.write(
      `GET /proxy/flood/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nAccept: text/event-stream\r\nMcp-Session-Id: ${sessionId}\r\n\r\n`,
    );
    await until(() => conn.received.startsWith('HTTP/1.1 200'), 'the stream to open');
    conn.stopReading();
    const session = gw.ctx.gateway.session(sessionId);
    expect(session?.streamOpen).toBe(true);

    const size = 64 * 1024;
    // tools/list_changed notifications of 64 KiB each, sent to every session's standalone stream.
    for (let i = 0; i < 10 && !session?.closed; i++) {
      await post(
        mcp,
        key,
        { jsonrpc: '2.0', id: i + 1, method: 'tools/call', params: { name: 'flood', arguments: { count: 100, size } } },
        { 'mcp-session-id': sessionId },
      );
    }
    await until(() => session?.closed === true, 'the session to be dropped', 20_000);
    expect(session?.closedReason).toBe('client not reading its stream');
    expect(session?.streamOpen).toBe(false);
    expect(session?.streamPeakBuffered).toBeGreaterThan(CAP);
    expect(session?.streamPeakBuffered).toBeLessThanOrEqual(CAP + size + 1024);
    // The id stays valid (streamable sessions are rebuilt from it): the client may come back and read this time.
    const list = await post(mcp, key, { jsonrpc: '2.0', id: 99, method: 'tools/list' }, { 'mcp-session-id': sessionId });
    expect(list.status).toBe(200);
    await normalCall('after a slow GET stream');
    conn.socket.destroy();
  }, 90_000);

  it('cuts off a POST answered as a stream when its client stops reading, and cancels the call upstream', async () => {
    const mcp = `${gw.url}/proxy/flood/mcp`;
    const sessionId = await openSession(mcp, key);
    const before = await slowReaders();
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'flood-progress', arguments: { count: 2000, size: 64 * 1024 }, _meta: { progressToken: 'p' } },
    });
    const conn = await RawConn.open(gw.url);
    conn.write(
      [
        'POST /proxy/flood/mcp HTTP/1.1',
        'Host: 127.0.0.1',
        `Authorization: Bearer ${key}`,
        'Accept: application/json, text/event-stream',
        'Content-Type: application/json',
        `Content-Length: ${Buffer.byteLength(body)}`,
        `Mcp-Session-Id: ${sessionId}`,
        '',
        body,
      ].join('\r\n'),
    );
    await until(
      () => conn.received.startsWith('HTTP/1.1 200') && conn.received.includes('text/event-stream'),
      'the answer to turn into a stream',
    );
    conn.stopReading();
    const session = gw.ctx.gateway.session(sessionId);
    await until(async () => (await slowReaders()) > before, 'the streamed answer to be cut off', 30_000);
    // The call was cancelled upstream (the client is gone) and its slot given back; the session itself lives on.
    await until(() => session?.inflight === 0, 'the call to end');
    expect(session?.closed).toBe(false);
    const list = await post(mcp, key, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, { 'mcp-session-id': sessionId });
    expect(list.status).toBe(200);
    conn.socket.destroy();
  }, 60_000);
});
