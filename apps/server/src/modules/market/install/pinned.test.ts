import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import type { BatchProgressEvent } from '@toolport/contract';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { bearer, engines, type TestApp } from '../../../../test/harness.js';
import {
  callToolThroughGateway,
  descendantsOf,
  echoPackage,
  type FakeNpm,
  firstText,
  type InstallKit,
  isPackageManager,
  startInstallKit,
  waitForTask,
} from '../../../../test/kits/install.js';
import { processesIn } from '../installers/processes.js';

/** A loopback port nothing listens on: connecting is refused at once. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * Custom `npx`/`uvx` services are pinned installs (issue 14 item 4, decision 0035): the package goes into
 * DATA_DIR/packages by the marketplace's install job, its executable runs without npm beside it, the
 * typed command stays for display and export, Update moves to the newest release. Outcomes in true words
 * (issue 15 item 2): a package the registry does not know leaves the service disabled with the reason; a
 * remote that does not answer is created with a warning that says why.
 */
describe.each(engines)('pinned npx services on %s', (engine) => {
  let kit: InstallKit;
  let npm: FakeNpm;
  let t: TestApp;
  let token: string;

  beforeAll(async () => {
    kit = await startInstallKit(engine, { npm: [echoPackage('@acme/pinned-mcp', '1.0.0')] });
    ({ npm, t, token } = kit);
  });
  afterAll(async () => kit?.close());

  const create = (payload: Record<string, unknown>, lang = 'en') =>
    t.app.inject({
      method: 'POST',
      url: '/api/mcp_market/custom_service',
      headers: { ...bearer(token), 'accept-language': lang },
      payload,
    });
  const installed = async (id: number) => {
    const res = await t.app.inject({ method: 'GET', url: '/api/mcp_market/installed', headers: bearer(token) });
    return (res.json().data as { id: number }[]).find((s) => s.id === id) as Record<string, unknown>;
  };
  const rowOf = (id: number) => t.ctx.db.selectFrom('services').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const serverProcesses = (dir: string) => processesIn(dir);

  let pinnedId = 0;

  it('installs `npx -y <pkg>` pinned into DATA_DIR and runs its executable with no package manager among the gateway’s processes', async () => {
    const res = await create({ name: 'Pinned Echo', type: 'stdio', command: 'npx -y @acme/pinned-mcp --flag value' });
    expect(res.statusCode, res.body).toBe(201);
    const data = res.json().data;
    expect(data).toMatchObject({ name: 'pinned-mcp', status: 'installing', task_id: expect.any(String) });
    pinnedId = data.service_id;
    const status = await waitForTask(t, token, data.task_id);
    expect(status.status, status.logs.join('\n')).toBe('completed');
    expect(status.version).toBe('1.0.0');
    expect(status.logs.some((l) => l.includes(`--registry ${npm.url}`) && l.includes('@acme/pinned-mcp'))).toBe(true);

    const row = await rowOf(pinnedId);
    expect(row).toMatchObject({
      command: 'node',
      typed_command: 'npx -y @acme/pinned-mcp --flag value',
      version: '1.0.0',
      package_name: '@acme/pinned-mcp',
      package_manager: 'npm',
      source: 'custom',
      install_dir: 'packages/npm/pinned-mcp',
      enabled: 1,
    });
    // The arguments typed after the package are kept, after the package's own executable.
    expect(JSON.parse(row.args_json)).toEqual(['./node_modules/@acme/pinned-mcp/server.mjs', '--flag', 'value']);
    expect(await installed(pinnedId)).toMatchObject({ typed_command: 'npx -y @acme/pinned-mcp --flag value', version: '1.0.0' });

    const result = await callToolThroughGateway(t, token, 'pinned-mcp', 'echo', { text: 'direct' });
    expect(firstText(result)).toContain('direct');
    // What runs below the gateway: the package's node process, and no npm, npx or shell beside it.
    const dir = path.join(t.dataDir, 'packages', 'npm', 'pinned-mcp');
    const running = serverProcesses(dir);
    expect(running.length).toBeGreaterThan(0);
    const below = descendantsOf(process.pid);
    expect(below.map((p) => p.pid)).toEqual(expect.arrayContaining(running));
    expect(below.filter((p) => isPackageManager(p.cmdline))).toEqual([]);

    // Export names the package as typed, with the version it is pinned to: an import elsewhere runs the same release.
    const exported = await t.app.inject({ method: 'GET', url: '/api/mcp_market/export', headers: bearer(token) });
    expect(exported.statusCode, exported.body).toBe(200);
    expect(exported.json().data.mcpServers['pinned-mcp']).toMatchObject({
      command: 'npx',
      args: ['-y', '@acme/pinned-mcp@1.0.0', '--flag', 'value'],
    });
  }, 240_000);

  it('Update moves the service to the newest release, restarts it on the new files and shows the new version', async () => {
    const dir = path.join(t.dataDir, 'packages', 'npm', 'pinned-mcp');
    const before = serverProcesses(dir);
    npm.publish(echoPackage('@acme/pinned-mcp', '1.1.0'));
    const res = await t.app.inject({ method: 'POST', url: `/api/mcp_services/${pinnedId}/update_package`, headers: bearer(token) });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject({ service_id: pinnedId, from_version: '1.0.0', task_id: expect.any(String) });
    const status = await waitForTask(t, token, res.json().data.task_id);
    expect(status.status, status.logs.join('\n')).toBe('completed');
    expect(status.version).toBe('1.1.0');
    expect(await rowOf(pinnedId)).toMatchObject({ version: '1.1.0', typed_command: 'npx -y @acme/pinned-mcp --flag value', enabled: 1 });
    expect(await installed(pinnedId)).toMatchObject({ version: '1.1.0' });
    const manifest = JSON.parse(readFileSync(path.join(dir, 'node_modules', '@acme', 'pinned-mcp', 'package.json'), 'utf8'));
    expect(manifest.version).toBe('1.1.0');
    const result = await callToolThroughGateway(t, token, 'pinned-mcp', 'echo', { text: 'after update' });
    expect(firstText(result)).toContain('after update');
    // A new process on the new files; the old one is gone, and so are the previous files.
    await vi.waitFor(
      () => expect(before.filter((pid) => existsSync(`/proc/${pid}/cmdline`) && serverProcesses(dir).includes(pid))).toEqual([]),
      {
        timeout: 15_000,
      },
    );
    await vi.waitFor(() => expect(existsSync(`${dir}.previous`)).toBe(false), { timeout: 20_000 });

    // Not a package: nothing to update (a localised 400); someone else's click: 404 for an unknown id.
    const port = await closedPort();
    const remote = await create({ name: 'remote-no-pkg', type: 'streamableHttp', url: `http://127.0.0.1:${port}/mcp` });
    const none = await t.app.inject({
      method: 'POST',
      url: `/api/mcp_services/${remote.json().data.service_id}/update_package`,
      headers: { ...bearer(token), 'accept-language': 'zh-CN' },
    });
    expect(none.statusCode).toBe(400);
    expect(none.json().message).toBe('服务 remote-no-pkg 没有运行已安装的软件包，无可更新');
    const missing = await t.app.inject({ method: 'POST', url: '/api/mcp_services/999999/update_package', headers: bearer(token) });
    expect(missing.statusCode).toBe(404);
  }, 240_000);

  it('a package the registry does not know leaves the service disabled with the cause, said in the caller’s language', async () => {
    const res = await create({ name: 'ghost', type: 'stdio', command: 'npx -y acme-no-such-package' });
    expect(res.statusCode, res.body).toBe(201);
    const { task_id: taskId, service_id: id } = res.json().data;
    const status = await waitForTask(t, token, taskId);
    expect(status.status).toBe('failed');
    expect(status.error_message).toBe('package not found on the registry: acme-no-such-package');
    expect(status.logs.join('\n')).toMatch(/E404|404 Not Found/);
    const zh = await t.app.inject({
      method: 'GET',
      url: `/api/mcp_market/install_status/${taskId}`,
      headers: { ...bearer(token), 'accept-language': 'zh-CN' },
    });
    expect(zh.json().data.error_message).toBe('软件包在仓库中不存在：acme-no-such-package');
    // Kept, switched off, with its reason: nothing restarts it, the console offers to remove it.
    const row = await rowOf(id);
    expect(row).toMatchObject({ enabled: 0, health_status: 'install_failed', typed_command: 'npx -y acme-no-such-package' });
    expect(row.health_details).toContain('package not found on the registry: acme-no-such-package');
    expect(await installed(id)).toMatchObject({ enabled: false, health_status: 'install_failed' });
    expect(existsSync(path.join(t.dataDir, 'packages', 'npm', 'ghost'))).toBe(false);
    const removed = await t.app.inject({
      method: 'POST',
      url: '/api/mcp_market/uninstall',
      headers: bearer(token),
      payload: { service_id: id },
    });
    expect(removed.statusCode, removed.body).toBe(200);
  }, 120_000);

  it('refuses an npx command that cannot be pinned with the reason (400, nothing stored)', async () => {
    const res = await create({ name: 'ranged', type: 'stdio', command: 'npx -y acme-echo@^1.0.0' });
    expect(res.statusCode, res.body).toBe(400);
    expect(await t.ctx.db.selectFrom('services').selectAll().where('name', '=', 'ranged').executeTakeFirst()).toBeUndefined();
  });

  it('says a remote that does not answer was created but does not answer yet, in the API and in a batch import', async () => {
    const port = await closedPort();
    const url = `http://127.0.0.1:${port}/mcp`;
    const res = await create({ name: 'silent-remote', type: 'streamableHttp', url });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().data).toMatchObject({ status: 'completed', health_status: 'unhealthy' });
    expect(res.json().message).toMatch(/^Service silent-remote created, but it does not answer yet: .+/);
    const zh = await create({ name: 'silent-remote-zh', type: 'streamableHttp', url }, 'zh-CN');
    expect(zh.json().message).toMatch(/^服务 silent-remote-zh 已创建，但暂时没有响应：.+/);

    const start = await t.app.inject({
      method: 'POST',
      url: '/api/mcp_market/batch-import',
      headers: bearer(token),
      payload: { mcpServers: { 'batch-silent': { type: 'http', url } } },
    });
    expect(start.statusCode, start.body).toBe(200);
    const taskId = start.json().data.task_id as string;
    let events: BatchProgressEvent[] = [];
    await vi.waitFor(
      async () => {
        const lines = await t.ctx.db.selectFrom('install_task_logs').select('line').where('task_id', '=', taskId).orderBy('seq').execute();
        events = lines.map((l) => JSON.parse(l.line) as BatchProgressEvent);
        expect(events.some((e) => e.status === 'done')).toBe(true);
      },
      { timeout: 30_000, interval: 200 },
    );
    expect(events[0]).toMatchObject({ name: 'batch-silent', status: 'success', warning: true });
    expect((events[0] as { message: string }).message).toMatch(/but it does not answer yet: .+/);
  }, 60_000);
});
