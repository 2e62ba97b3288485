import { type AddressInfo, createServer as createTcpServer, type Socket, type Server as TcpServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness.js';
import { rawRequest } from '../kits/raw-socket.js';
import { ask, countingListener, expectAnswer } from './hostile-kit.js';
import { pkce } from './oauth-kit.js';

const REDIRECT = 'http://127.0.0.1:7777/cb';
const ONE_MESSAGE = "The client's metadata document (its client_id URL) could not be fetched or used";
// Long enough for the good document's fetch on a loaded machine; the refusals, padded to it, run side by side.
const TIME_CAP_MS = 1_000;

const authorizePath = (clientId: string) =>
  `/oauth2/authorize?${new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_challenge: pkce().challenge,
    code_challenge_method: 'S256',
    state: 's',
  })}`;

/** A valid Client ID Metadata Document for `url`. */
const documentFor = (url: string) => JSON.stringify({ client_id: url, client_name: 'Doc Client', redirect_uris: [REDIRECT] });

/**
 * Fetches strangers cause (issue 24, decision 0041): a Client ID Metadata Document is named by whoever
 * calls /oauth2/authorize, without signing in. By default every private, loopback, link-local and other
 * special address is refused before any connection (a loopback listener that counts connections stays
 * at 0); where the operator allows private addresses, every failure is still one message, one status, and
 * no sooner than the time cap, so a caller cannot tell an open port from a closed one.
 */
describe('Client ID Metadata Document fetches for strangers', () => {
  let t: TestApp;
  let listener: Awaited<ReturnType<typeof countingListener>>;
  let address = 0;
  /** Each request from its own address, so that the fetch limit is not what answers (except where it is tested). */
  const nextAddress = () => `198.51.100.${++address}`;

  beforeAll(async () => {
    listener = await countingListener({ '/doc.json': (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{}') });
    t = await createTestApp('sqlite', { OAUTH_CLIENT_FETCH_TIMEOUT_MS: String(TIME_CAP_MS) });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await listener?.close();
  });

  const refusedUrls = () => {
    const p = listener.port;
    return [
      `http://127.0.0.1:${p}/doc.json`,
      `http://localhost:${p}/doc.json`,
      `http://[::1]:${p}/doc.json`,
      `https://127.0.0.1:${p}/doc.json`,
      `https://localhost:${p}/doc.json`,
      `https://2130706433:${p}/doc.json`,
      `https://0x7f.1:${p}/doc.json`,
      `https://127.1:${p}/doc.json`,
      `https://[::ffff:127.0.0.1]:${p}/doc.json`,
      `https://[::ffff:7f00:1]:${p}/doc.json`,
      `https://0.0.0.0:${p}/doc.json`,
      'https://10.0.0.1/doc.json',
      'https://172.16.0.1/doc.json',
      'https://192.168.1.1/doc.json',
      'https://100.64.0.1/doc.json',
      'https://169.254.169.254/latest/meta-data',
      'https://[fd00:ec2::254]/doc.json',
      'https://[fe80::1]/doc.json',
      'https://[64:ff9b::7f00:1]/doc.json',
      'https://[2002:7f00:1::]/doc.json',
      'https://224.0.0.1/doc.json',
    ];
  };

  it('refuses every private, loopback and special address with the one message, and never connects', async () => {
    const answers = await Promise.all(
      refusedUrls().map(async (url) => ({
        url,
        answer: await ask(t.app, {
          method: 'GET',
          url: authorizePath(url),
          headers: { accept: 'application/json' },
          remoteAddress: nextAddress(),
        }),
      })),
    );
    for (const { url, answer } of answers) {
      expectAnswer(answer, { status: 401, error: 'invalid_client' }, url);
      expect(JSON.parse(answer.body).error_description, url).toBe(ONE_MESSAGE);
    }
    // A person in a browser sees Toolport's page instead, told nothing more.
    const page = await ask(t.app, {
      method: 'GET',
      url: authorizePath(`http://127.0.0.1:${listener.port}/doc.json`),
      headers: { accept: 'text/html' },
      remoteAddress: nextAddress(),
    });
    expectAnswer(page, { status: 303, location: '/oauth/error?error=invalid_client&reason=metadata_unusable' }, 'browser');
    expect([listener.connections(), listener.requests()]).toEqual([0, 0]);
  });

  it('never fetches a client’s logo: the consent page’s browser shows it, the server does not load it', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/oauth2/register',
      payload: { client_name: 'Logo', redirect_uris: [REDIRECT], logo_uri: `https://127.0.0.1:${listener.port}/logo.png` },
      remoteAddress: nextAddress(),
    });
    expect(res.statusCode).toBe(201);
    const start = await ask(t.app, { method: 'GET', url: authorizePath(res.json().client_id), remoteAddress: nextAddress() });
    expect(start.status).toBe(302);
    const user = await t.createUser();
    const id = new URL(String(start.headers.location)).searchParams.get('request');
    const view = await t.app.inject({
      method: 'GET',
      url: `/api/oauth-server/requests/${id}`,
      headers: { authorization: `Bearer ${user.token}` },
    });
    expect(view.json().data.logo_uri).toBe(`https://127.0.0.1:${listener.port}/logo.png`);
    expect(listener.connections()).toBe(0);
  });

  it('limits the fetches one address causes: 429 with Retry-After, in the OAuth format, and still no connection', async () => {
    const from = '203.0.113.77';
    const url = `http://127.0.0.1:${listener.port}/doc.json`;
    const first = await Promise.all(
      Array.from({ length: 10 }, () => ask(t.app, { method: 'GET', url: authorizePath(url), remoteAddress: from })),
    );
    expect(first.map((a) => a.status)).toEqual(Array(10).fill(401));
    const limited = await ask(t.app, { method: 'GET', url: authorizePath(url), remoteAddress: from });
    expectAnswer(limited, { status: 429, error: 'invalid_request' }, 'fetch flood');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    const page = await ask(t.app, { method: 'GET', url: authorizePath(url), headers: { accept: 'text/html' }, remoteAddress: from });
    expectAnswer(page, { status: 303, location: '/oauth/error?error=invalid_request&reason=fetch_rate_limited' }, 'flood page');
    expect(Number(page.headers['retry-after'])).toBeGreaterThan(0);
    // A document already cached costs no fetch, so it is not limited: only fetches count.
    expect(listener.connections()).toBe(0);
  });

  it('refuses two Host headers on the OAuth paths over a raw socket, in the OAuth format', async () => {
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const port = (t.app.server.address() as AddressInfo).port;
    for (const path of [
      '/oauth2/authorize?client_id=x',
      '/.well-known/oauth-authorization-server',
      '/.well-known/oauth-protected-resource',
    ]) {
      const answer = await rawRequest(port, `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n`);
      expect([answer.status, JSON.parse(answer.body)], path).toEqual([
        400,
        { error: 'invalid_request', error_description: 'The request carries more than one Host header' },
      ]);
    }
    const smuggled = await rawRequest(
      port,
      'POST /oauth2/token HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
    );
    expect([smuggled.status, JSON.parse(smuggled.body).error]).toEqual([400, 'invalid_request']);
  });
});

describe('Client ID Metadata Document fetches where the operator allows private addresses', () => {
  let t: TestApp;
  let docs: Awaited<ReturnType<typeof countingListener>>;
  let garbage: TcpServer;
  const garbageSockets = new Set<Socket>();
  let closedPort: number;
  let address = 0;

  beforeAll(async () => {
    docs = await countingListener({
      '/good.json': (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(documentFor(`${docs.url}/good.json`)),
      '/redirect.json': (_req, res) => res.writeHead(302, { location: '/good.json' }).end(),
      '/elsewhere.json': (_req, res) => res.writeHead(307, { location: 'https://169.254.169.254/' }).end(),
      '/html.json': (_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(documentFor(`${docs.url}/html.json`)),
      '/server-error.json': (_req, res) => res.writeHead(500).end('boom'),
      '/wrong-id.json': (_req, res) =>
        res.writeHead(200, { 'content-type': 'application/json' }).end(documentFor('https://other.example/')),
      '/array.json': (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('[]'),
      '/huge.json': (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(`"${'x'.repeat(1024 * 1024)}"`),
      '/hang.json': () => undefined,
      '/drip.json': (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"client_id":');
      },
    });
    // An open port that speaks no HTTP, and one nobody listens on.
    garbage = createTcpServer((socket) => {
      garbageSockets.add(socket);
      // The gateway resets the connection when it reads no HTTP: an unheard 'error' would fail the whole run.
      socket.on('error', () => undefined);
      socket.write('SSH-2.0-OpenSSH_9.6\r\n');
    });
    await new Promise<void>((resolve) => garbage.listen(0, '127.0.0.1', resolve));
    const probe = createTcpServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    closedPort = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    t = await createTestApp('sqlite', { ALLOW_PRIVATE_NETWORK_CLIENT_FETCHES: 'true', OAUTH_CLIENT_FETCH_TIMEOUT_MS: String(TIME_CAP_MS) });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await docs?.close();
    for (const socket of garbageSockets) socket.destroy();
    await new Promise<void>((resolve) => garbage?.close(() => resolve()));
  });

  const authorizeAs = async (clientId: string) => {
    const started = performance.now();
    const answer = await ask(t.app, {
      method: 'GET',
      url: authorizePath(clientId),
      headers: { accept: 'application/json' },
      remoteAddress: `198.51.100.${++address}`,
    });
    return { answer, ms: performance.now() - started };
  };

  it('fetches a good document (so the refusals below are not the only answer there is)', async () => {
    const { answer } = await authorizeAs(`${docs.url}/good.json`);
    expect(answer.status).toBe(302);
    expect(String(answer.headers.location)).toContain('/oauth/consent?request=');
  });

  it('answers a closed port, an open one, a hang, a redirect and every bad document alike, never sooner than the time cap', async () => {
    const garbagePort = (garbage.address() as AddressInfo).port;
    const failures = [
      `http://127.0.0.1:${closedPort}/doc.json`,
      `http://127.0.0.1:${garbagePort}/doc.json`,
      `${docs.url}/nothing.json`,
      `${docs.url}/hang.json`,
      `${docs.url}/drip.json`,
      `${docs.url}/redirect.json`,
      `${docs.url}/elsewhere.json`,
      `${docs.url}/html.json`,
      `${docs.url}/server-error.json`,
      `${docs.url}/wrong-id.json`,
      `${docs.url}/array.json`,
      `${docs.url}/huge.json`,
    ];
    const before = docs.requests('/good.json');
    const answers = await Promise.all(failures.map(async (url) => ({ url, ...(await authorizeAs(url)) })));
    for (const { url, answer, ms } of answers) {
      expectAnswer(answer, { status: 401, error: 'invalid_client' }, url);
      expect(JSON.parse(answer.body).error_description, url).toBe(ONE_MESSAGE);
      expect(answer.body.length, url).toBe(answers[0]?.answer.body.length);
      // Padded to the cap: a refused connection takes as long as a time-out.
      expect(ms, url).toBeGreaterThanOrEqual(TIME_CAP_MS - 5);
    }
    // No redirect is followed (Client ID Metadata Document draft): /redirect.json's target was never asked for.
    expect(docs.requests('/good.json')).toBe(before);
  });
});
