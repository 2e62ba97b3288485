import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UNMATCHED_ROUTE } from '../src/infra/metrics.js';
import { InstallJobs, type Job } from '../src/modules/market/install/jobs.js';
import { InstallTasks } from '../src/modules/market/install/tasks.js';
import { connect, type McpClient, textOf, until } from './gateway/clients.js';
import { addService, addUser, everythingEntry, type LiveGateway, liveChildren, startGateway } from './gateway/gateway-harness.js';
import { openSession, raw } from './gateway/raw-http.js';
import { bearer, createTestApp, engines, type TestApp } from './harness.js';

const FIXTURE_SERVER = new URL('./fixtures/fixture-mcp-server.mjs', import.meta.url).pathname;

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a Prometheus text exposition (enough of the format for what the server writes). */
function parse(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, k, v] of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[k as string] = v as string;
    samples.push({ name: match[1] as string, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The one sample of `name` whose labels include `labels`; undefined when there is none. */
function sampleOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const found = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`);
  return found[0]?.value;
}

describe.each(engines)('Prometheus metrics at /metrics on %s', (engine) => {
  let gw: LiveGateway;
  let alice: { id: number; key: string };
  const open: McpClient[] = [];
  const client = async (...args: Parameters<typeof connect>) => {
    const c = await connect(...args);
    open.push(c);
    return c;
  };
  const scrape = async (): Promise<{ text: string; samples: Sample[] }> => {
    const res = await fetch(`${gw.url}/metrics`);
    expect(res.status).toBe(200);
    const text = await res.text();
    return { text, samples: parse(text) };
  };
  const current = async (name: string, labels: Record<string, string> = {}) => sampleOf((await scrape()).samples, name, labels);

  beforeAll(async () => {
    gw = await startGateway(engine);
    alice = await addUser(gw.ctx, 'alice');
    await addService(gw.ctx, { name: 'everything' });
    await addService(gw.ctx, { name: 'limited', args: [FIXTURE_SERVER], rpdLimit: 1 });
  });
  afterAll(async () => {
    await Promise.all(open.map((c) => c.close().catch(() => undefined)));
    await gw?.close();
  });

  it('is public without METRICS_TOKEN and serves the Prometheus text format with Node’s default metrics', async () => {
    const res = await fetch(`${gw.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    for (const family of [
      'process_cpu_user_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_heap_size_used_bytes',
      'nodejs_eventloop_lag_seconds',
    ]) {
      // Once, although this process has built other apps (each with a registry of its own).
      expect(
        text.split('\n').filter((l) => l.startsWith(`# TYPE ${family} `)),
        family,
      ).toHaveLength(1);
    }
    for (const family of [
      'toolport_mcp_requests_total',
      'toolport_mcp_request_errors_total',
      'toolport_mcp_request_duration_seconds',
      'toolport_upstream_processes',
      'toolport_upstream_restarts_total',
      'toolport_downstream_sessions',
      'toolport_install_tasks_running',
      'toolport_install_tasks_total',
      'toolport_http_requests_total',
      'toolport_http_request_duration_seconds',
    ]) {
      expect(text, family).toContain(`# TYPE ${family} `);
    }
  });

  it('counts counted MCP requests and errors per service and method, with latency, after real traffic', async () => {
    const c = await client(gw.url, 'everything', alice.key, { sdk: 'v1', wire: 'http' });
    expect(textOf(await c.callTool('echo', { message: 'one' }))).toBe('Echo: one');
    expect(textOf(await c.callTool('echo', { message: 'two' }))).toBe('Echo: two');
    // An unknown tool: a JSON-RPC error or an isError result, a failed call either way.
    const failed = await c.callTool('no-such-tool', {}).then(
      (r) => r.isError === true,
      () => true,
    );
    expect(failed).toBe(true);
    const [resource] = (await c.listResources()).resources;
    await c.readResource(resource?.uri ?? '');
    await c.getPrompt('simple-prompt');
    const limited = await client(gw.url, 'limited', alice.key, { sdk: 'v2', wire: 'sse' });
    expect(textOf(await limited.callTool('echo', { text: 'first' }))).toBe('echo: first');
    await expect(limited.callTool('echo', { text: 'second' })).rejects.toThrow('daily request limit exceeded: 1/1');

    const { samples } = await scrape();
    const requests = (labels: Record<string, string>) => sampleOf(samples, 'toolport_mcp_requests_total', labels);
    expect(requests({ service: 'everything', method: 'tools/call', outcome: 'ok' })).toBe(2);
    expect(requests({ service: 'everything', method: 'tools/call', outcome: 'error' })).toBe(1);
    expect(requests({ service: 'everything', method: 'resources/read', outcome: 'ok' })).toBe(1);
    expect(requests({ service: 'everything', method: 'prompts/get', outcome: 'ok' })).toBe(1);
    expect(requests({ service: 'limited', method: 'tools/call', outcome: 'ok' })).toBe(1);
    expect(requests({ service: 'limited', method: 'tools/call', outcome: 'limited' })).toBe(1);
    expect(sampleOf(samples, 'toolport_mcp_request_errors_total', { service: 'everything', method: 'tools/call' })).toBe(1);
    expect(sampleOf(samples, 'toolport_mcp_request_errors_total', { service: 'limited', method: 'tools/call' })).toBeUndefined();
    // Listing, initialize and ping are free: never counted.
    const methods = new Set(samples.filter((s) => s.name === 'toolport_mcp_requests_total').map((s) => s.labels.method));
    expect([...methods].sort()).toEqual(['prompts/get', 'resources/read', 'tools/call']);
    // The latency of every answered call, the refused one excepted.
    const count = (service: string, method: string) =>
      sampleOf(samples, 'toolport_mcp_request_duration_seconds_count', { service, method });
    expect(count('everything', 'tools/call')).toBe(3);
    expect(count('everything', 'prompts/get')).toBe(1);
    expect(count('limited', 'tools/call')).toBe(1);
    expect(
      sampleOf(samples, 'toolport_mcp_request_duration_seconds_bucket', { service: 'everything', method: 'tools/call', le: '+Inf' }),
    ).toBe(3);
    // No user appears in any label.
    for (const s of samples.filter((x) => x.name.startsWith('toolport_'))) {
      expect(Object.keys(s.labels)).not.toContain('user');
      expect(Object.values(s.labels)).not.toContain('alice');
    }
  });

  it('gauges the open downstream sessions per transport', async () => {
    const sessions = async () => {
      const { samples } = await scrape();
      return {
        http: sampleOf(samples, 'toolport_downstream_sessions', { transport: 'streamable_http' }),
        sse: sampleOf(samples, 'toolport_downstream_sessions', { transport: 'sse' }),
      };
    };
    const before = await sessions();
    expect(before.http).toBeTypeOf('number');
    expect(before.sse).toBeTypeOf('number');
    const url = `${gw.url}/proxy/everything/mcp`;
    const id = await openSession(url, alice.key);
    const sse = await connect(gw.url, 'everything', alice.key, { sdk: 'v1', wire: 'sse' });
    expect(await sessions()).toEqual({ http: (before.http ?? 0) + 1, sse: (before.sse ?? 0) + 1 });

    const ended = await raw(url, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${alice.key}`, 'mcp-session-id': id, 'mcp-protocol-version': '2025-06-18' },
    });
    expect(ended.status).toBe(200);
    await sse.close();
    await until(async () => (await sessions()).sse === before.sse, 'the SSE session to end');
    expect(await sessions()).toEqual(before);
  });

  it('gauges upstream processes per service and counts a restart after the process is killed', async () => {
    await until(async () => (await current('toolport_upstream_processes', { service: 'everything' })) === 1, 'one running process');
    await until(async () => (await current('toolport_upstream_processes', { service: 'limited' })) === 1, 'the other service’s process');
    expect(await current('toolport_upstream_restarts_total', { service: 'everything' })).toBeUndefined();
    const before = liveChildren(everythingEntry);
    expect(before).toHaveLength(1);

    process.kill(before[0] as number, 'SIGKILL');
    await until(async () => (await current('toolport_upstream_restarts_total', { service: 'everything' })) === 1, 'the restart');
    await until(async () => (await current('toolport_upstream_processes', { service: 'everything' })) === 1, 'the new process');
    const after = liveChildren(everythingEntry);
    expect(after).toHaveLength(1);
    expect(after[0]).not.toBe(before[0]);
    const c = await client(gw.url, 'everything', alice.key, { sdk: 'v2', wire: 'http' });
    expect(textOf(await c.callTool('echo', { message: 'back' }))).toBe('Echo: back');
    expect(await current('toolport_upstream_restarts_total', { service: 'limited' })).toBeUndefined();
  });

  it('counts install tasks by kind and outcome, and gauges the running ones', async () => {
    const { ctx } = gw;
    const tasks = new InstallTasks(ctx.db);
    const jobs = new InstallJobs({
      tasks,
      rows: ctx.services.rows,
      gateway: ctx.gateway,
      events: ctx.events,
      serviceLog: ctx.serviceLog,
      metrics: ctx.metrics,
      logger: ctx.logger,
      dataDir: ctx.config.dataDir,
      registries: { npm: async () => '', pypi: '' },
      timeouts: { installMs: 10_000, handshakeMs: 2_000 },
    });
    // A "remote" server that accepts connections and never answers: the handshake times out.
    const sockets = new Set<Socket>();
    const silent: Server = createServer((s) => {
      sockets.add(s);
      // Reset by the gateway when it gives up: not an error of this test.
      s.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const silentUrl = `http://127.0.0.1:${(silent.address() as { port: number }).port}/mcp`;
    const job = async (name: string, url: string, headers: Record<string, string>): Promise<Job> => {
      const serviceId = await addService(gw.ctx, { name, type: 'streamableHttp', command: url, args: [], headers, enabled: false });
      const taskId = await tasks.create({ kind: 'marketplace', serviceId, createdBy: null });
      return {
        serviceId,
        serviceName: name,
        taskId,
        plan: { kind: 'remote', transport: 'streamableHttp', url, headers: {}, variables: [] },
        secretValues: [],
      };
    };
    try {
      // The remote end of the successful install is this gateway's own proxy of `everything`.
      const good = await jobs.start(await job('via-gateway', `${gw.url}/proxy/everything/mcp`, { Authorization: `Bearer ${alice.key}` }));
      expect(good).toMatchObject({ ok: true });

      const pending = jobs.start(await job('silent-remote', silentUrl, {}));
      await until(async () => (await current('toolport_install_tasks_running')) === 1, 'the running task');
      expect(await pending).toMatchObject({ ok: false });

      const { samples } = await scrape();
      expect(sampleOf(samples, 'toolport_install_tasks_running')).toBe(0);
      expect(sampleOf(samples, 'toolport_install_tasks_total', { kind: 'remote', outcome: 'completed' })).toBe(1);
      expect(sampleOf(samples, 'toolport_install_tasks_total', { kind: 'remote', outcome: 'failed' })).toBe(1);
    } finally {
      await jobs.close();
      tasks.close();
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  it('labels API requests by route pattern and status, never by raw URL', async () => {
    const token = await gw.app
      .inject({ method: 'POST', url: '/api/auth/login', payload: { username: 'root', password: 'root-password-for-tests' } })
      .then((r) => r.json().data.access_token as string);
    const task = await gw.app.inject({ method: 'GET', url: '/api/mcp_market/install_status/raw-task-id-4711', headers: bearer(token) });
    const unknown = await gw.app.inject({ method: 'GET', url: '/api/no-such-route/raw-path-0815' });
    expect(unknown.statusCode).toBe(404);
    const status = await gw.app.inject({ method: 'GET', url: '/api/status?key=query-secret-0042' });
    expect(status.statusCode).toBe(200);
    // Proxied traffic answers on the raw response: it is counted too.
    await openSession(`${gw.url}/proxy/everything/mcp`, alice.key);

    const { text, samples } = await scrape();
    for (const rawPart of ['raw-task-id-4711', 'raw-path-0815', 'query-secret-0042', 'no-such-route']) expect(text).not.toContain(rawPart);
    const http = (labels: Record<string, string>) => sampleOf(samples, 'toolport_http_requests_total', labels);
    expect(http({ method: 'GET', route: '/api/mcp_market/install_status/:taskId', status: String(task.statusCode) })).toBe(1);
    expect(http({ method: 'GET', route: UNMATCHED_ROUTE, status: '404' })).toBe(1);
    expect(http({ method: 'GET', route: '/api/status', status: '200' })).toBe(1);
    expect(sampleOf(samples, 'toolport_http_request_duration_seconds_count', { method: 'GET', route: '/api/status' })).toBe(1);
    // Proxied traffic (replies written on the raw response) is counted under its pattern, not the service name.
    expect(http({ method: 'POST', route: '/proxy/:name/mcp', status: '200' })).toBeGreaterThan(0);
    const routes = new Set(samples.filter((s) => s.name === 'toolport_http_requests_total').map((s) => s.labels.route));
    for (const route of routes) expect(route === UNMATCHED_ROUTE || route?.startsWith('/')).toBe(true);
    expect([...routes].some((r) => r?.includes('everything'))).toBe(false);
  });
});

describe.each(engines)('METRICS_TOKEN on %s', (engine) => {
  const TOKEN = 'metrics-token-for-tests-0123456789';
  let guarded: TestApp;
  let other: TestApp;
  beforeAll(async () => {
    // Two apps in one process at once: each counts only its own traffic.
    [guarded, other] = await Promise.all([createTestApp(engine, { METRICS_TOKEN: TOKEN }), createTestApp(engine)]);
  });
  afterAll(async () => {
    await guarded?.close();
    await other?.close();
  });

  it('answers 401 without the token or with a wrong one, and the metrics with it', async () => {
    const missing = await guarded.app.inject({ method: 'GET', url: '/metrics' });
    expect(missing.statusCode).toBe(401);
    expect(missing.headers['www-authenticate']).toBe('Bearer realm="metrics"');
    expect(missing.json()).toMatchObject({ success: false, message: 'Sign-in required' });
    for (const authorization of [`Bearer ${TOKEN.slice(0, -1)}`, `Bearer ${TOKEN}x`, `Basic ${TOKEN}`, 'Bearer ', TOKEN]) {
      const wrong = await guarded.app.inject({ method: 'GET', url: '/metrics', headers: { authorization } });
      expect(wrong.statusCode, authorization).toBe(401);
      expect(wrong.body).not.toContain('toolport_');
    }
    // A console token of the super admin is no metrics token either.
    const admin = await guarded.app.inject({ method: 'GET', url: '/metrics', headers: bearer(await guarded.rootToken()) });
    expect(admin.statusCode).toBe(401);

    const ok = await guarded.app.inject({ method: 'GET', url: '/metrics', headers: bearer(TOKEN) });
    expect(ok.statusCode).toBe(200);
    expect(ok.body).toContain('# TYPE toolport_http_requests_total counter');
    // The refused scrapes were counted like any request: by pattern and status.
    expect(sampleOf(parse(ok.body), 'toolport_http_requests_total', { method: 'GET', route: '/metrics', status: '401' })).toBe(7);
  });

  it('keeps a registry per app', async () => {
    await other.app.inject({ method: 'GET', url: '/api/health' });
    await other.app.inject({ method: 'GET', url: '/api/health' });
    const mine = parse((await guarded.app.inject({ method: 'GET', url: '/metrics', headers: bearer(TOKEN) })).body);
    const theirs = parse((await other.app.inject({ method: 'GET', url: '/metrics' })).body);
    expect(sampleOf(theirs, 'toolport_http_requests_total', { route: '/api/health' })).toBe(2);
    expect(sampleOf(mine, 'toolport_http_requests_total', { route: '/api/health' })).toBeUndefined();
  });
});
