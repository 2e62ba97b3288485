import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeRegistries, startFakeRegistries } from '../fake-registries.js';
import { bearer, createPgDatabase, createTestApp, type TestApp } from '../harness.js';
import { callToolThroughGateway, echoPackage, type FakeNpm, firstText, startFakeNpm, waitForTask } from '../kits/install.js';
import { until } from './clients.js';
import { initializeBody, post } from './raw-http.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const PACKAGE = 'acme-replica-echo';

/**
 * Replicas that do not share a DATA_DIR (docs/architecture.md §7): a package installed through one replica
 * is installed again, by each other replica, into its own DATA_DIR/packages before its process
 * starts there. Three real apps on one PostgreSQL database and one Redis, each with a DATA_DIR of
 * its own; a local npm registry serves the package. Replica C is configured with a registry that
 * does not have it, so its local install fails.
 */
describe('installs reach every replica', () => {
  let fake: FakeRegistries;
  let npm: FakeNpm;
  let empty: Server;
  let database: { url: string; drop: () => Promise<void> };
  let a: TestApp;
  let b: TestApp;
  let c: TestApp;
  let serviceId: number;

  beforeAll(async () => {
    fake = await startFakeRegistries();
    npm = await startFakeNpm([echoPackage(PACKAGE)]);
    // A registry that knows no package at all.
    empty = createServer((_req, res) => res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"Not found"}'));
    await new Promise<void>((resolve) => empty.listen(0, '127.0.0.1', resolve));
    database = await createPgDatabase();
    const env = {
      ...fake.env,
      DATABASE_URL: database.url,
      REDIS_URL,
      REDIS_PREFIX: `toolport-test:${process.pid}:${Math.random().toString(36).slice(2, 10)}:`,
    };
    a = await createTestApp('postgres', { ...env, NPM_REGISTRY_URL: npm.url });
    b = await createTestApp('postgres', { ...env, NPM_REGISTRY_URL: npm.url });
    c = await createTestApp('postgres', { ...env, NPM_REGISTRY_URL: `http://127.0.0.1:${(empty.address() as AddressInfo).port}/` });
    for (const t of [a, b, c]) await t.app.listen({ host: '127.0.0.1', port: 0 });
  }, 120_000);

  afterAll(async () => {
    for (const t of [a, b, c]) await t?.close();
    await new Promise<void>((resolve) => empty?.close(() => resolve()));
    await npm?.close();
    await fake?.close();
    await database?.drop();
  });

  const replicaId = (t: TestApp) => t.ctx.redis?.replicaId as string;
  const installLines = async (t: TestApp) =>
    (
      await a.ctx.db
        .selectFrom('service_logs')
        .select(['message', 'level'])
        .where('service_id', '=', serviceId)
        .where('phase', '=', 'install')
        .orderBy('id')
        .execute()
    ).filter((l) => l.message.startsWith(`[replica ${replicaId(t)}]`));
  const packageDir = (t: TestApp) => path.join(t.dataDir, 'packages', 'npm', PACKAGE);

  it('installs through A, and a client calling the service through B gets its answer from B’s own install', async () => {
    // B holds a copy of another version, left by an earlier service of the same name: it does not count.
    mkdirSync(packageDir(b), { recursive: true });
    writeFileSync(
      path.join(packageDir(b), 'toolport-package.json'),
      JSON.stringify({ kind: 'npm', identifier: PACKAGE, version: '0.9.0', entry: '', args: [] }),
    );
    const token = await a.rootToken();
    const res = await a.app.inject({
      method: 'POST',
      url: '/api/mcp_market/install_or_add_service',
      headers: bearer(token),
      payload: { package_name: PACKAGE, package_manager: 'npm' },
    });
    expect(res.statusCode, res.body).toBe(200);
    serviceId = res.json().data.mcp_service_id;
    const status = await waitForTask(a, token, res.json().data.task_id, 120_000);
    expect(status.status, status.logs.join('\n')).toBe('completed');

    // Two clients at once through B: both are answered, from one local install.
    const tokenB = await b.rootToken();
    const results = await Promise.all(['one', 'two'].map((text) => callToolThroughGateway(b, tokenB, PACKAGE, 'echo', { text })));
    expect(results.map(firstText)).toEqual(['echo: one', 'echo: two']);

    // B's DATA_DIR holds the package, complete with its manifest, at the version A installed.
    const manifest = JSON.parse(readFileSync(path.join(packageDir(b), 'toolport-package.json'), 'utf8'));
    expect(manifest).toMatchObject({ kind: 'npm', identifier: PACKAGE, version: '1.0.0' });
    expect(existsSync(path.join(packageDir(b), 'node_modules', PACKAGE, 'server.mjs'))).toBe(true);

    // B's service log tells of the local install, marked with B's replica id, once.
    await until(
      async () => (await installLines(b)).some((l) => l.message.includes(`Installed ${PACKAGE}@1.0.0 on this replica`)),
      'B’s install log',
    );
    const onB = (await installLines(b)).map((l) => l.message);
    expect(onB.filter((m) => m.includes('is not installed on this replica yet'))).toHaveLength(1);
    expect(onB.some((m) => m.includes(`$ npm install --prefix`))).toBe(true);
    // A installed it through the task and installs nothing more.
    expect(await installLines(a)).toEqual([]);
  }, 180_000);

  it('tells a client on a replica whose local install failed why, in the client’s language', async () => {
    const tokenC = await c.rootToken();
    const self = await c.app.inject({ method: 'GET', url: '/api/user/self', headers: bearer(tokenC) });
    const key = self.json().data.token as string;
    const url = `http://127.0.0.1:${(c.app.server.address() as AddressInfo).port}/proxy/${PACKAGE}/mcp`;
    const english = ((await post(url, key, initializeBody())).json() as { error?: { message: string } }).error?.message;
    expect(english).toMatch(new RegExp(`^Service ${PACKAGE} could not be installed on this gateway replica .*: `));
    expect(english).not.toMatch(/[\u4e00-\u9fff]/);
    // The cause, in short and in the client's language (decision 0035); the service log of C has npm's own words.
    expect(english).toContain(`package not found on the registry: ${PACKAGE}`);
    const chinese = ((await post(url, key, initializeBody(), { 'accept-language': 'zh-CN' })).json() as { error?: { message: string } })
      .error?.message;
    expect(chinese).toMatch(new RegExp(`^服务 ${PACKAGE} 无法在此网关副本上安装`));
    expect(chinese).toContain(`：软件包在仓库中不存在：${PACKAGE}`);
    await until(async () => (await installLines(c)).some((l) => l.level === 'error'), 'C’s failure in its service log');
    expect((await installLines(c)).some((l) => /E404/.test(l.message))).toBe(true);
    expect(existsSync(packageDir(c))).toBe(false);
    // Nothing half-installed is left behind either.
    expect(existsSync(`${packageDir(c)}.installing-${replicaId(c)}`)).toBe(false);
  }, 60_000);

  it('moves B to the new release when the service is updated through A', async () => {
    npm.publish(echoPackage(PACKAGE, '1.1.0'));
    const token = await a.rootToken();
    const res = await a.app.inject({ method: 'POST', url: `/api/mcp_services/${serviceId}/update_package`, headers: bearer(token) });
    expect(res.statusCode, res.body).toBe(200);
    const status = await waitForTask(a, token, res.json().data.task_id, 120_000);
    expect(status.status, status.logs.join('\n')).toBe('completed');
    expect(status.version).toBe('1.1.0');
    // B hears of the change, installs 1.1.0 into its own DATA_DIR, and serves from it.
    const tokenB = await b.rootToken();
    expect(firstText(await callToolThroughGateway(b, tokenB, PACKAGE, 'echo', { text: 'updated' }))).toBe('echo: updated');
    const manifest = JSON.parse(readFileSync(path.join(packageDir(b), 'toolport-package.json'), 'utf8'));
    expect(manifest).toMatchObject({ identifier: PACKAGE, version: '1.1.0' });
    await until(
      async () => (await installLines(b)).some((l) => l.message.includes(`Installed ${PACKAGE}@1.1.0 on this replica`)),
      'B’s install of the new release',
    );
  }, 180_000);

  it('removes B’s copy when the service is uninstalled through A', async () => {
    const uninstall = await a.app.inject({
      method: 'POST',
      url: '/api/mcp_market/uninstall',
      headers: bearer(await a.rootToken()),
      payload: { service_id: serviceId },
    });
    expect(uninstall.statusCode, uninstall.body).toBe(200);
    await until(() => !existsSync(packageDir(b)), 'B’s copy to be removed', 30_000);
    expect(existsSync(packageDir(a))).toBe(false);
  }, 60_000);

  it('does nothing of the kind for a single instance', async () => {
    const single = await createTestApp('sqlite', { ...fake.env, NPM_REGISTRY_URL: npm.url });
    try {
      expect(single.ctx.packages).toBeUndefined();
      expect(single.ctx.leader.isLeader()).toBe(true);
    } finally {
      await single.close();
    }
  });
});
