import { type ChildProcess, spawn } from 'node:child_process';
import http, { type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type AddressKind, classifyAddress, configuredFetch, MAX_REDIRECTS, remoteAddresses } from '../src/infra/outbound.js';
import { startFakeRegistries } from './fake-registries.js';
import { connect, type McpClient, textOf, until } from './gateway/clients.js';
import { addService, addUser, everythingEntry, type LiveGateway, startGateway } from './gateway/gateway-harness.js';
import { ADMIN_PASSWORD, engines } from './harness.js';

describe('classifyAddress', () => {
  const cases: [string, AddressKind | undefined][] = [
    // IPv4
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['172.15.255.255', undefined],
    ['172.32.0.1', undefined],
    ['192.168.1.1', 'private'],
    ['192.169.0.1', undefined],
    ['100.64.0.1', 'private'],
    ['100.100.100.200', 'private'],
    ['100.128.0.1', undefined],
    ['169.254.169.254', 'link-local'],
    ['169.254.0.1', 'link-local'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['224.0.0.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
    ['8.8.8.8', undefined],
    ['1.1.1.1', undefined],
    ['93.184.216.34', undefined],
    // IPv6
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['::', 'unspecified'],
    ['fc00::1', 'private'],
    ['fd00:ec2::254', 'private'],
    ['fdff:ffff::1', 'private'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['febf::1', 'link-local'],
    ['fec0::1', 'private'],
    ['ff02::1', 'reserved'],
    ['2001:4860:4860::8888', undefined],
    ['2606:4700:4700::1111', undefined],
    // IPv4-mapped, -translated, -compatible, NAT64 and 6to4 forms
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['[::ffff:7f00:1]', 'loopback'],
    ['0:0:0:0:0:ffff:a9fe:a9fe', 'link-local'],
    ['::ffff:10.1.2.3', 'private'],
    ['::FFFF:C0A8:0101', 'private'],
    ['::ffff:8.8.8.8', undefined],
    ['::ffff:0:127.0.0.1', 'loopback'],
    ['::127.0.0.1', 'loopback'],
    ['64:ff9b::169.254.169.254', 'link-local'],
    ['64:ff9b::8.8.8.8', undefined],
    ['2002:7f00:1::', 'loopback'],
    ['2002:c0a8:101::1', 'private'],
    // Not an address at all: never let through.
    ['example.com', 'reserved'],
    ['1.2.3', 'reserved'],
    ['1:2:3', 'reserved'],
    ['::ffff:300.1.1.1', 'reserved'],
  ];
  it.each(cases)('%s is %s', (address, kind) => {
    expect(classifyAddress(address)).toBe(kind);
  });

  // Hosts as WHATWG URL normalises them, which is what the checks are given.
  it.each([
    ['http://2130706433/', 'loopback'],
    ['http://0x7f000001/', 'loopback'],
    ['http://0177.0.0.1/', 'loopback'],
    ['http://127.1/', 'loopback'],
    ['http://167772161/', 'private'],
    ['http://2852039166/', 'link-local'],
    ['http://[::ffff:127.0.0.1]/', 'loopback'],
    ['http://[0:0:0:0:0:ffff:169.254.169.254]/', 'link-local'],
    ['http://0/', 'unspecified'],
  ])('%s normalises to a %s host', (url, kind) => {
    expect(classifyAddress(new URL(url).hostname)).toBe(kind);
  });
});

/** A plain HTTP server answering with `handler`, on 127.0.0.1. */
async function serve(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ server: Server; origin: string; port: number }> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, origin: `http://127.0.0.1:${port}`, port };
}

const closeServer = (server: Server | undefined) =>
  new Promise<void>((resolve) => {
    if (!server) return resolve();
    server.closeAllConnections();
    server.close(() => resolve());
  });

describe('remoteFetch and configuredFetch', () => {
  let other: Awaited<ReturnType<typeof serve>>;
  let main: Awaited<ReturnType<typeof serve>>;
  const hits: string[] = [];
  let allow = true;
  // The rule is read at every request: `allow` changes apply to the next one, as a preference change does.
  const remoteFetch = remoteAddresses(() => allow).fetch;

  beforeAll(async () => {
    other = await serve((_req, res) => res.end('other origin'));
    main = await serve((req, res) => {
      hits.push(`${req.method} ${req.url}`);
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString();
        const url = req.url ?? '/';
        const redirect = (status: number, location: string) => {
          res.writeHead(status, { location });
          res.end();
        };
        if (url === '/a') return redirect(302, '/b');
        if (url === '/b') return redirect(301, `${main.origin}/c`);
        if (url === '/keep') return redirect(307, '/echo');
        if (url === '/see-other') return redirect(303, '/echo');
        if (url === '/away') return redirect(307, `${other.origin}/x?token=secret`);
        if (url === '/away-host') return redirect(302, `http://localhost:${main.port}/c`);
        if (url === '/away-scheme') return redirect(302, `https://127.0.0.1:${main.port}/c`);
        if (url === '/loop') return redirect(302, '/loop');
        if (url === '/echo') return res.end(`${req.method} ${body}`);
        res.end(`at ${url}`);
      });
    });
  });
  afterAll(async () => {
    await closeServer(main?.server);
    await closeServer(other?.server);
  });
  beforeEach(() => {
    hits.length = 0;
    allow = true;
  });

  it('follows redirects within the origin', async () => {
    const res = await remoteFetch(`${main.origin}/a`);
    expect(await res.text()).toBe('at /c');
    expect(res.url).toBe(`${main.origin}/c`);
    expect(hits).toEqual(['GET /a', 'GET /b', 'GET /c']);
  });

  it('keeps the method and body on 307 and turns 303 into a GET, as fetch does', async () => {
    const kept = await remoteFetch(`${main.origin}/keep`, {
      method: 'POST',
      body: '{"x":1}',
      headers: { 'content-type': 'application/json' },
    });
    expect(await kept.text()).toBe('POST {"x":1}');
    const seen = await remoteFetch(`${main.origin}/see-other`, { method: 'POST', body: 'gone' });
    expect(await seen.text()).toBe('GET ');
  });

  it.each([
    ['/away', () => `${other.origin}/x`],
    ['/away-host', () => `http://localhost:${main.port}/c`],
    ['/away-scheme', () => `https://127.0.0.1:${main.port}/c`],
  ])('refuses a redirect from %s to another origin, naming it without its query', async (path, target) => {
    const failure = remoteFetch(`${main.origin}${path}`);
    await expect(failure).rejects.toThrow(`redirected to another origin: ${target()}`);
    await expect(configuredFetch(`${main.origin}${path}`)).rejects.toThrow('redirected to another origin');
    expect(hits.every((h) => h.endsWith(path))).toBe(true);
  });

  it(`stops a redirect loop after ${MAX_REDIRECTS} redirects`, async () => {
    await expect(remoteFetch(`${main.origin}/loop`)).rejects.toThrow(
      `Too many redirects from ${main.origin}/loop (at most ${MAX_REDIRECTS}`,
    );
    expect(hits).toHaveLength(MAX_REDIRECTS + 1);
  });

  it("leaves redirects alone with redirect: 'manual' and refuses them with 'error'", async () => {
    const manual = await remoteFetch(`${main.origin}/away`, { redirect: 'manual' });
    expect(manual.status).toBe(307);
    await expect(configuredFetch(`${main.origin}/a`, { redirect: 'error' })).rejects.toThrow();
    expect(hits).toEqual(['GET /away', 'GET /a']);
  });

  it('refuses loopback for remote URLs only while the preference is off, host names included', async () => {
    allow = false;
    await expect(remoteFetch(`${main.origin}/c`)).rejects.toThrow('127.0.0.1 is a loopback address');
    await expect(remoteFetch(`http://localhost:${main.port}/c`)).rejects.toThrow(
      /localhost is not allowed: (127\.0\.0\.1|::1) is a loopback/,
    );
    await expect(remoteFetch(`http://[::ffff:127.0.0.1]:${main.port}/c`)).rejects.toThrow('loopback');
    expect(hits).toEqual([]);
    // Operator-configured base URLs (registries, providers) are trusted as to address.
    expect(await (await configuredFetch(`${main.origin}/c`)).text()).toBe('at /c');
    allow = true;
    expect(await (await remoteFetch(`http://localhost:${main.port}/c`)).text()).toBe('at /c');
  });
});

/**
 * A front for server-everything's streamable HTTP endpoint, on its own origin: /mcp is passed
 * through, /old/mcp redirects within the origin, /away/mcp to server-everything's own origin,
 * /loop/mcp to itself.
 */
function front(upstreamPort: number) {
  return serve((req, res) => {
    const url = req.url ?? '/';
    if (url.startsWith('/old/')) {
      res.writeHead(308, { location: url.slice(4) });
      return res.end();
    }
    if (url.startsWith('/away/')) {
      res.writeHead(307, { location: `http://127.0.0.1:${upstreamPort}${url.slice(5)}` });
      return res.end();
    }
    if (url.startsWith('/loop/')) {
      res.writeHead(307, { location: url });
      return res.end();
    }
    const up = http.request({ host: '127.0.0.1', port: upstreamPort, path: url, method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
}

describe.each(engines)('remote service addresses and redirects (%s)', (engine) => {
  let gw: LiveGateway;
  let key: string;
  let everything: ChildProcess;
  let everythingPort: number;
  let proxy: Awaited<ReturnType<typeof serve>>;
  let token: string;
  const open: McpClient[] = [];

  beforeAll(async () => {
    const probe = await serve(() => undefined);
    everythingPort = probe.port;
    await closeServer(probe.server);
    everything = spawn(process.execPath, [everythingEntry, 'streamableHttp'], {
      env: { ...process.env, PORT: String(everythingPort) },
      detached: true,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    everything.stderr?.on('data', (d) => {
      stderr += String(d);
    });
    await until(() => stderr.includes('listening on port'), 'server-everything to listen');
    proxy = await front(everythingPort);
    gw = await startGateway(engine);
    key = (await addUser(gw.ctx, 'alice')).key;
    const login = await gw.app.inject({ method: 'POST', url: '/api/auth/login', payload: { username: 'root', password: ADMIN_PASSWORD } });
    token = login.json().data.access_token;
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((c) => c.close().catch(() => undefined)));
  });
  afterAll(async () => {
    await gw?.close();
    await closeServer(proxy?.server);
    if (everything?.pid) process.kill(-everything.pid, 'SIGKILL');
  });

  const admin = (lang = 'en') => ({ authorization: `Bearer ${token}`, 'accept-language': lang });
  const setPreference = async (value: boolean) => {
    const res = await gw.app.inject({
      method: 'PUT',
      url: '/api/option/',
      headers: admin(),
      payload: { key: 'AllowPrivateNetworkUpstreams', value },
    });
    expect(res.statusCode).toBe(200);
  };
  const create = (name: string, url: string, lang = 'en') =>
    gw.app.inject({
      method: 'POST',
      url: '/api/mcp_market/custom_service',
      headers: admin(lang),
      payload: { name, type: 'streamableHttp', url, command: '', description: '' },
    });
  const client = async (service: string) => {
    const c = await connect(gw.url, service, key, { sdk: 'v1', wire: 'http' });
    open.push(c);
    return c;
  };

  it('allows loopback remote services by default, through a same-origin redirect too', async () => {
    expect((await create('direct', `http://127.0.0.1:${everythingPort}/mcp`)).statusCode).toBe(201);
    expect((await create('moved', `${proxy.origin}/old/mcp`)).statusCode).toBe(201);
    for (const name of ['direct', 'moved']) {
      const c = await client(name);
      expect(textOf(await c.callTool('echo', { message: name }))).toBe(`Echo: ${name}`);
    }
  });

  it('answers a clear JSON-RPC error when the upstream redirects to another origin', async () => {
    await addService(gw.ctx, { name: 'away', type: 'streamableHttp', command: `${proxy.origin}/away/mcp`, args: [] });
    await expect(client('away')).rejects.toThrow(`redirected to another origin: http://127.0.0.1:${everythingPort}/mcp`);
  });

  it('answers a clear JSON-RPC error when the upstream redirects in a loop', async () => {
    await addService(gw.ctx, { name: 'loop', type: 'streamableHttp', command: `${proxy.origin}/loop/mcp`, args: [] });
    await expect(client('loop')).rejects.toThrow(`Too many redirects from ${proxy.origin}/loop/mcp`);
  });

  describe('with AllowPrivateNetworkUpstreams off', () => {
    beforeAll(() => setPreference(false));
    afterAll(() => setPreference(true));

    it.each([
      ['http://127.0.0.1:9/mcp', '127.0.0.1 is not allowed: 127.0.0.1 is a loopback address', '127.0.0.1 是回环地址'],
      ['http://10.1.2.3/mcp', '10.1.2.3 is not allowed: 10.1.2.3 is a private network address', '10.1.2.3 是内网地址'],
      ['http://169.254.169.254/latest/meta-data', '169.254.169.254 is a link-local address', '169.254.169.254 是链路本地地址'],
      ['http://[::1]:9/mcp', '::1 is not allowed: ::1 is a loopback address', '::1 是回环地址'],
      ['http://2130706433/mcp', '127.0.0.1 is a loopback address', '127.0.0.1 是回环地址'],
      ['http://localhost:9/mcp', 'localhost is not allowed:', '是回环地址'],
    ])('refuses to create a service at %s (400, en and zh-CN)', async (url, en, zh) => {
      const res = await create('refused', url);
      expect(res.statusCode).toBe(400);
      expect(res.json().message).toContain(en);
      const zhRes = await create('refused', url, 'zh-CN');
      expect(zhRes.statusCode).toBe(400);
      expect(zhRes.json().message).toContain(zh);
      expect(zhRes.json().message).toContain('偏好设置中已关闭内网远程服务');
    });

    it('refuses to move a service to such an address, and keeps the old one', async () => {
      const list = await gw.app.inject({ method: 'GET', url: '/api/mcp_market/installed', headers: admin() });
      const direct = (list.json().data as { id: number; name: string; command: string }[]).find((s) => s.name === 'direct');
      const res = await gw.app.inject({
        method: 'PUT',
        url: `/api/mcp_services/${direct?.id}`,
        headers: admin('zh-CN'),
        payload: { command: 'http://192.168.0.10/mcp' },
      });
      expect(res.statusCode).toBe(400);
      expect(res.json().message).toContain('192.168.0.10 是内网地址');
    });

    it.each([
      ['loopback', () => `http://127.0.0.1:${everythingPort}/mcp`, '127.0.0.1 is a loopback address'],
      ['localhost', () => `http://localhost:${everythingPort}/mcp`, 'localhost is not allowed'],
    ])('refuses to connect to a %s service already stored', async (name, url, message) => {
      await addService(gw.ctx, { name: `stored-${name}`, type: 'streamableHttp', command: url(), args: [] });
      await expect(client(`stored-${name}`)).rejects.toThrow(message);
    });

    it('refuses to reach a service created while private addresses were allowed', async () => {
      const call = async () => (await client('direct')).callTool('echo', { message: 'refused' });
      await expect(call()).rejects.toThrow('127.0.0.1 is a loopback address');
    });
  });

  it('connects again once the preference is back on', async () => {
    const c = await client('direct');
    expect(textOf(await c.callTool('echo', { message: 'again' }))).toBe('Echo: again');
  });
});

describe('a remote MCP Registry entry installed from the marketplace', () => {
  const loopbackEntry = {
    server: {
      name: 'io.github.acme/loopback-remote',
      description: 'A remote server on the gateway’s own host',
      version: '1.0.0',
      remotes: [{ type: 'streamable-http', url: 'http://127.0.0.1:9/mcp' }],
    },
    _meta: { 'io.modelcontextprotocol.registry/official': { status: 'active', isLatest: true } },
  };
  let registries: Awaited<ReturnType<typeof startFakeRegistries>>;
  let gw: LiveGateway;
  let token: string;

  beforeAll(async () => {
    registries = await startFakeRegistries({ extraMcpServers: [loopbackEntry] });
    gw = await startGateway('sqlite', registries.env);
    const login = await gw.app.inject({ method: 'POST', url: '/api/auth/login', payload: { username: 'root', password: ADMIN_PASSWORD } });
    token = login.json().data.access_token;
  });
  afterAll(async () => {
    await gw?.close();
    await registries?.close();
  });

  const headers = (lang = 'en') => ({ authorization: `Bearer ${token}`, 'accept-language': lang });
  const setPreference = async (value: boolean) => {
    const res = await gw.app.inject({
      method: 'PUT',
      url: '/api/option/',
      headers: headers(),
      payload: { key: 'AllowPrivateNetworkUpstreams', value },
    });
    expect(res.statusCode).toBe(200);
  };
  const install = (lang = 'en') =>
    gw.app.inject({
      method: 'POST',
      url: '/api/mcp_market/install_or_add_service',
      headers: headers(lang),
      payload: { package_name: 'io.github.acme/loopback-remote', package_manager: 'mcp_registry' },
    });
  const installed = () => gw.ctx.db.selectFrom('services').select('name').where('command', '=', 'http://127.0.0.1:9/mcp').execute();

  it('is held to the address preference like a URL an admin types in', async () => {
    await setPreference(false);
    try {
      const refused = await install();
      expect(refused.statusCode).toBe(400);
      expect(refused.json().message).toContain('127.0.0.1 is not allowed: 127.0.0.1 is a loopback address');
      const zh = await install('zh-CN');
      expect(zh.statusCode).toBe(400);
      expect(zh.json().message).toContain('127.0.0.1 是回环地址');
      expect(await installed()).toEqual([]);
    } finally {
      await setPreference(true);
    }
    // Allowed again (the default): the install starts (its first check then finds nobody listening on port 9).
    const allowed = await install();
    expect(allowed.statusCode, allowed.body).toBe(200);
    expect(allowed.json().data).toMatchObject({ task_id: expect.any(String), status: expect.stringMatching(/^(pending|installing)$/) });
  });
});
