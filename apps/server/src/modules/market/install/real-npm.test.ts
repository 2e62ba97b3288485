import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type FakeRegistries, startFakeRegistries } from '../../../../test/fake-registries.js';
import { bearer, createTestApp, type TestApp } from '../../../../test/harness.js';
import { callToolThroughGateway, descendantsOf, firstText, isPackageManager, waitForTask } from '../../../../test/kits/install.js';
import { processesIn } from '../installers/processes.js';

/**
 * The one install from the real npm registry (whatever npm itself is configured with, as in
 * production): a pinned reference server, a real tool call through the gateway, then uninstall.
 * It runs on SQLite only, to keep CI to a single download: the database paths of installs are the
 * same ones the fake-registry suites run on both engines. The MCP Registry is the local fake, so
 * variable discovery does not depend on the public one.
 */
describe('a real npm install (sqlite)', () => {
  let fake: FakeRegistries;
  let t: TestApp;
  let token: string;

  beforeAll(async () => {
    fake = await startFakeRegistries();
    const { NPM_REGISTRY_URL: _npm, ...others } = fake.env;
    t = await createTestApp('sqlite', others);
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    token = await t.rootToken();
  });
  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });

  it('installs @modelcontextprotocol/server-everything@2026.8.31, answers a tool call through the gateway, and uninstalls without a trace', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/mcp_market/install_or_add_service',
      headers: bearer(token),
      payload: { package_name: '@modelcontextprotocol/server-everything', package_manager: 'npm', version: '2026.8.31' },
    });
    expect(res.statusCode, res.body).toBe(200);
    const { task_id: taskId, mcp_service_id: serviceId, service_name: name } = res.json().data;
    expect(name).toBe('server-everything');

    const status = await waitForTask(t, token, taskId, 240_000);
    expect(status.status, status.logs.join('\n')).toBe('completed');
    const dir = path.join(t.dataDir, 'packages', 'npm', 'server-everything');
    const row = await t.ctx.db.selectFrom('services').selectAll().where('id', '=', serviceId).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ command: 'node', version: '2026.8.31', install_dir: 'packages/npm/server-everything', enabled: 1 });
    expect(existsSync(path.join(dir, 'node_modules', '@modelcontextprotocol', 'server-everything', 'package.json'))).toBe(true);

    const result = await callToolThroughGateway(t, token, name, 'echo', { message: 'hello from a real install' });
    expect(firstText(result)).toBe('Echo: hello from a real install');

    const uninstall = await t.app.inject({
      method: 'POST',
      url: '/api/mcp_market/uninstall',
      headers: bearer(token),
      payload: { service_id: serviceId },
    });
    expect(uninstall.statusCode, uninstall.body).toBe(200);
    expect(existsSync(dir)).toBe(false);
    expect(existsSync(path.join(t.dataDir, 'services', String(serviceId)))).toBe(false);
    // The gateway stops the process on the removal event, on its own schedule.
    await vi.waitFor(() => expect(processesIn(dir)).toEqual([]), { timeout: 15_000, interval: 100 });
  }, 300_000);

  it('pins a custom `npx -y @modelcontextprotocol/server-memory@2026.7.4` service: no npm beside the server, the version shown, Update moves it to the latest', async () => {
    const typed = 'npx -y @modelcontextprotocol/server-memory@2026.7.4';
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/mcp_market/custom_service',
      headers: bearer(token),
      payload: { name: 'memory', type: 'stdio', command: typed },
    });
    expect(res.statusCode, res.body).toBe(201);
    const { service_id: id, task_id: taskId } = res.json().data;
    const status = await waitForTask(t, token, taskId, 240_000);
    expect(status.status, status.logs.join('\n')).toBe('completed');
    expect(status.version).toBe('2026.7.4');
    const listed = async () =>
      (
        (await t.app.inject({ method: 'GET', url: '/api/mcp_market/installed', headers: bearer(token) })).json().data as { id: number }[]
      ).find((s) => s.id === id);
    expect(await listed()).toMatchObject({ typed_command: typed, version: '2026.7.4', command: 'node', enabled: true });

    const graph = await callToolThroughGateway(t, token, 'memory', 'read_graph', {});
    expect(firstText(graph)).toContain('entities');
    const dir = path.join(t.dataDir, 'packages', 'npm', 'memory');
    expect(processesIn(dir).length).toBeGreaterThan(0);
    // Walked from /proc: the gateway's descendants hold the server's node process and no npm exec, npx or sh -c.
    const below = descendantsOf(process.pid);
    expect(below.filter((p) => p.cmdline.includes('server-memory')).length).toBeGreaterThan(0);
    expect(below.filter((p) => isPackageManager(p.cmdline))).toEqual([]);

    const update = await t.app.inject({ method: 'POST', url: `/api/mcp_services/${id}/update_package`, headers: bearer(token) });
    expect(update.statusCode, update.body).toBe(200);
    const updated = await waitForTask(t, token, update.json().data.task_id, 240_000);
    expect(updated.status, updated.logs.join('\n')).toBe('completed');
    expect(updated.version).not.toBe('2026.7.4');
    expect((await listed()) as unknown).toMatchObject({ typed_command: typed, version: updated.version });
    expect(firstText(await callToolThroughGateway(t, token, 'memory', 'read_graph', {}))).toContain('entities');
    expect(descendantsOf(process.pid).filter((p) => isPackageManager(p.cmdline))).toEqual([]);
  }, 600_000);
});
