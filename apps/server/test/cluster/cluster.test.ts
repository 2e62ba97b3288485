import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type McpClient, textOf, until } from '../gateway/clients.js';
import { everythingEntry } from '../gateway/gateway-harness.js';
import { type Cluster, type Replica, startCluster, startNginx, upstreamsOf } from './cluster-kit.js';

/**
 * Several replicas (issue 9, docs/architecture.md §7), proven on the shipped server: three processes of
 * `toolport start` on one PostgreSQL database and one Redis, behind a round-robin balancer that sends
 * every request to the next replica in turn. Real SDK clients, a real stdio server-everything (each
 * replica runs its own process of it).
 */
describe('three replicas behind a round-robin balancer', () => {
  let cluster: Cluster;
  let token = '';
  let a: Replica;
  let b: Replica;
  let c: Replica;
  const clients: McpClient[] = [];
  const services = new Map<string, number>();
  const everythingCommand = `${process.execPath} ${everythingEntry} stdio`;

  /** A custom stdio service created through `on`, its install task polled through `pollOn` until it completes. */
  const install = async (name: string, on?: Replica, pollOn?: Replica) => {
    const created = await cluster.call<{ service_id: number; task_id: string }>('POST', '/api/mcp_market/custom_service', {
      on,
      token,
      body: { name, type: 'stdio', command: everythingCommand },
    });
    let status: { status: string; logs: string[]; error_message: string } | undefined;
    await until(
      async () => {
        status = await cluster.call('GET', `/api/mcp_market/install_status/${created.task_id}`, { on: pollOn, token });
        return status?.status === 'completed' || status?.status === 'failed';
      },
      `the install of ${name}`,
      30_000,
    );
    services.set(name, created.service_id);
    return { serviceId: created.service_id, status: status as NonNullable<typeof status> };
  };

  /** A user of its own for each test (counts are per user): its id, API key and access token. */
  const userKey = async (username: string): Promise<{ id: number; key: string; token: string }> => {
    const password = 'cluster-user-password';
    await cluster.call('POST', '/api/user', { token, body: { username, display_name: username, password, role: 1 } });
    const login = await cluster.call<{ access_token: string }>('POST', '/api/auth/login', { body: { username, password } });
    const self = await cluster.call<{ id: number }>('GET', '/api/user/self', { token: login.access_token });
    const key = await cluster.call<string>('GET', '/api/user/token', { token: login.access_token });
    return { id: self.id, key, token: login.access_token };
  };

  const client = async (key: string, wire: 'http' | 'sse' = 'http') => {
    const made = await connect(cluster.url, 'everything', key, { sdk: 'v1', wire });
    clients.push(made);
    return made;
  };

  const counted = async (serviceId: number, userId: number) =>
    Number(
      (
        await cluster.query<{ n: string }>(
          'select coalesce(sum(request_count), 0) as n from daily_counters where service_id = $1 and user_id = $2',
          [serviceId, userId],
        )
      )[0]?.n ?? 0,
    );

  /** Proxy requests each replica has answered so far, from its own /metrics. */
  const requestsPerReplica = () =>
    Promise.all(
      cluster.replicas.map(async (r) => {
        const text = await (await fetch(`${r.url}/metrics`)).text();
        return text
          .split('\n')
          .filter((l) => l.startsWith('toolport_http_requests_total{') && l.includes('route="/proxy/'))
          .reduce((sum, l) => sum + Number(l.split(' ').at(-1)), 0);
      }),
    );

  beforeAll(async () => {
    cluster = await startCluster({ replicas: 3 });
    [a, b, c] = cluster.replicas as [Replica, Replica, Replica];
    token = await cluster.rootToken();
    const { serviceId, status } = await install('everything');
    expect(status.status, `${status.error_message} / ${status.logs.slice(-3).join(' | ')}`).toBe('completed');
    // `boot` strategy: every replica runs its own process for the enabled service.
    await until(() => cluster.replicas.every((r) => upstreamsOf(r, serviceId).length > 0), 'a process on every replica');
  }, 90_000);
  afterAll(async () => {
    await Promise.all(clients.map((m) => m.close().catch(() => undefined)));
    await cluster?.close();
  }, 60_000);

  it('keeps one streamable HTTP session working while its requests land on all three replicas in turn', async () => {
    const { key } = await userKey('session-user');
    const mcp = await client(key);
    const session = mcp.sessionId();
    expect(session).toBeTruthy();
    for (let i = 0; i < 9; i++) expect(textOf(await mcp.callTool('echo', { message: `turn ${i}` }))).toBe(`Echo: turn ${i}`);
    expect((await mcp.listTools()).tools.map((t) => t.name)).toContain('echo');
    const servedBy = cluster.balancer.log.filter((f) => f.sessionId === session).map((f) => f.replica);
    // The nine calls and the listing alone: at least three of each replica's turns.
    for (const r of cluster.replicas) expect(servedBy.filter((i) => i === r.index).length).toBeGreaterThanOrEqual(3);
    expect(mcp.errors).toEqual([]);
  });

  it('lets exactly rpd_limit = 20 of 60 concurrent counted calls through across the replicas', async () => {
    const serviceId = services.get('everything') as number;
    const user = await userKey('limited-user');
    // On each replica directly: each applies it at once, whatever the relay's timing.
    for (const r of cluster.replicas)
      await cluster.call('PUT', `/api/mcp_services/${serviceId}`, { on: r, token, body: { rpd_limit: 20 } });
    try {
      const mcp = await client(user.key);
      const before = [...cluster.balancer.served];
      const results = await Promise.allSettled(Array.from({ length: 60 }, (_, i) => mcp.callTool('echo', { message: `n${i}` })));
      const admitted = results.filter((r) => r.status === 'fulfilled');
      const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect(admitted).toHaveLength(20);
      expect(refused).toHaveLength(40);
      for (const r of refused) expect(String(r.reason)).toMatch(/daily request limit exceeded: 20\/20/);
      expect(cluster.balancer.since(before).every((n) => n >= 20)).toBe(true);
      await until(async () => (await counted(serviceId, user.id)) === 20, 'the count to be stored');
      // The listing of any replica shows the same count.
      const listed = await cluster.call<{ name: string; user_daily_request_count: number; remaining_requests: number }[]>(
        'GET',
        '/api/mcp_market/installed',
        { on: c, token: user.token },
      );
      expect(listed.find((s) => s.name === 'everything')).toMatchObject({ user_daily_request_count: 20, remaining_requests: 0 });
    } finally {
      for (const r of cluster.replicas)
        await cluster.call('PUT', `/api/mcp_services/${serviceId}`, { on: r, token, body: { rpd_limit: 0 } });
    }
  });

  it('serves a legacy SSE client whose POSTs land on replicas that do not hold its stream', async () => {
    const { key } = await userKey('legacy-user');
    const from = cluster.balancer.log.length;
    const mcp = await client(key, 'sse');
    for (let i = 0; i < 6; i++) expect(textOf(await mcp.callTool('echo', { message: `legacy ${i}` }))).toBe(`Echo: legacy ${i}`);
    expect((await mcp.listTools()).tools.length).toBeGreaterThan(0);
    const mine = () => cluster.balancer.log.slice(from).filter((f) => f.path.startsWith('/proxy/everything/'));
    const messages = () => mine().filter((f) => f.method === 'POST' && f.path.includes('/message'));
    // initialize, initialized, six calls and a listing. The balancer logs a POST when its 202 comes back, which can
    // be after the answer it asked for has arrived on the stream: the last ones are waited for.
    await until(() => messages().length >= 9, 'the balancer to log every message POST');
    const stream = mine().find((f) => f.method === 'GET' && f.path.startsWith('/proxy/everything/sse'));
    expect(stream).toBeDefined();
    const posts = messages();
    // Every replica had a turn, two of them without the stream.
    expect(new Set(posts.map((p) => p.replica)).size).toBe(3);
    expect(posts.filter((p) => p.replica !== stream?.replica).length).toBeGreaterThanOrEqual(6);
    expect(mcp.errors).toEqual([]);
  });

  it('serves streamable HTTP and legacy SSE clients through nginx with the shipped deploy/nginx-cluster.conf', async () => {
    const { key } = await userKey('nginx-user');
    const nginx = await startNginx(cluster.replicas);
    try {
      const before = await requestsPerReplica();
      const http = await connect(nginx.url, 'everything', key, { sdk: 'v1', wire: 'http' });
      const sse = await connect(nginx.url, 'everything', key, { sdk: 'v1', wire: 'sse' });
      clients.push(http, sse);
      for (let i = 0; i < 6; i++) {
        expect(textOf(await http.callTool('echo', { message: `via nginx ${i}` }))).toBe(`Echo: via nginx ${i}`);
        expect(textOf(await sse.callTool('echo', { message: `legacy via nginx ${i}` }))).toBe(`Echo: legacy via nginx ${i}`);
      }
      // A progress notification streamed before the answer arrives through nginx's unbuffered proxying.
      const progress: unknown[] = [];
      await http.callTool('trigger-long-running-operation', { duration: 1, steps: 3 }, { onprogress: (p: unknown) => progress.push(p) });
      expect(progress.length).toBe(3);
      expect(http.errors).toEqual([]);
      expect(sse.errors).toEqual([]);
      // nginx spread the requests: every replica served some of them.
      const after = await requestsPerReplica();
      expect(
        after.map((n, i) => n - (before[i] ?? 0)).every((served) => served > 0),
        `served ${after} after ${before}`,
      ).toBe(true);
    } finally {
      await nginx.stop();
    }
  });

  it('reports on replica C the progress of an install started on replica A, to completion', async () => {
    const { serviceId, status } = await install('installed-on-a', a, c);
    expect(status.status, `${status.error_message} / ${status.logs.slice(-3).join(' | ')}`).toBe('completed');
    expect(status.logs.length).toBeGreaterThan(0);
    // Installed once, run everywhere.
    await until(() => cluster.replicas.every((r) => upstreamsOf(r, serviceId).length > 0), 'a process of it on every replica');
  });

  it('streams on replica C the whole progress of a batch import started on replica A', async () => {
    const mcpServers = Object.fromEntries(
      ['batch-one', 'batch-two', 'batch-three'].map((name) => [name, { command: process.execPath, args: [everythingEntry, 'stdio'] }]),
    );
    const started = await cluster.call<{ task_id: string; total: number }>('POST', '/api/mcp_market/batch-import', {
      on: a,
      token,
      body: { mcpServers },
    });
    expect(started.total).toBe(3);
    const res = await fetch(`${c.url}/api/mcp_market/batch-import/progress/${started.task_id}?token=${encodeURIComponent(token)}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    // The stream ends after `done`: everything A wrote, read from PostgreSQL by C.
    const events = (await res.text())
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => JSON.parse(line.slice(6)) as { name?: string; status: string; summary?: Record<string, number> });
    const finals = events.filter((e) => e.name && ['success', 'skipped', 'failed'].includes(e.status));
    expect(finals.map((e) => [e.name, e.status]).sort()).toEqual([
      ['batch-one', 'success'],
      ['batch-three', 'success'],
      ['batch-two', 'success'],
    ]);
    expect(events.at(-1)).toMatchObject({ status: 'done', summary: { success: 3, skipped: 0, failed: 0 } });
  });

  it('stops the stdio process on B and C when the service is disabled through A', async () => {
    const serviceId = services.get('installed-on-a') as number;
    for (const r of cluster.replicas) expect(upstreamsOf(r, serviceId).length).toBeGreaterThan(0);
    const toggled = await cluster.call<{ enabled: boolean }>('POST', `/api/mcp_services/${serviceId}/toggle`, { on: a, token });
    expect(toggled.enabled).toBe(false);
    // Bounds for a loaded machine (each replica reads the catalog, then stops the process group and waits for it).
    await until(() => upstreamsOf(b, serviceId).length === 0 && upstreamsOf(c, serviceId).length === 0, 'B and C to stop it', 30_000);
    await until(() => upstreamsOf(a, serviceId).length === 0, 'A to stop it', 30_000);
    // The other service runs on.
    for (const r of cluster.replicas) expect(upstreamsOf(r, services.get('everything') as number).length).toBeGreaterThan(0);
  });

  it('loses no counted call when a replica is killed mid-load, and the other two keep serving', async () => {
    const serviceId = services.get('everything') as number;
    const user = await userKey('load-user');
    const loaders = await Promise.all(Array.from({ length: 6 }, () => client(user.key)));
    let succeeded = 0;
    let failed = 0;
    let stop = false;
    const loop = async (mcp: McpClient, n: number) => {
      for (let i = 0; !stop; i++) {
        // A call that failed (it was on the killed replica) is sent again, as a client would.
        for (let attempt = 0; ; attempt++) {
          try {
            const result = await mcp.callTool('echo', { message: `load ${n}.${i}` });
            expect(textOf(result)).toBe(`Echo: load ${n}.${i}`);
            succeeded += 1;
            break;
          } catch (err) {
            failed += 1;
            if (attempt >= 4) throw err;
          }
        }
      }
    };
    const running = loaders.map((m, n) => loop(m, n));
    await until(() => succeeded >= 60, 'the load to be under way');
    await cluster.kill(b);
    const afterKill = [...cluster.balancer.served];
    const succeededAtKill = succeeded;
    await until(() => succeeded >= succeededAtKill + 90, 'the survivors to serve more calls', 30_000);
    stop = true;
    await Promise.all(running);

    // B had its turns under load before it was killed, none after.
    expect(afterKill[b.index]).toBeGreaterThan(20);
    const served = cluster.balancer.since(afterKill);
    expect(served[b.index]).toBe(0);
    // B's turns went on to the next replica: refused connections, retried by the balancer.
    expect(cluster.balancer.skipped).toBeGreaterThan(20);
    expect(served[a.index]).toBeGreaterThan(20);
    expect(served[c.index]).toBeGreaterThan(20);
    // Every answered call is counted (the killed replica's unflushed ones too); at most the retried ones more.
    await until(async () => (await counted(serviceId, user.id)) >= succeeded, `at least ${succeeded} calls to be counted`, 20_000);
    expect(await counted(serviceId, user.id)).toBeLessThanOrEqual(succeeded + failed);
  }, 90_000);
});
