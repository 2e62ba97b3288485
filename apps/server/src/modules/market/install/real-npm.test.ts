import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type FakeRegistries, startFakeRegistries } from '../../../../test/fake-registries.js';
import { bearer, createTestApp, type TestApp } from '../../../../test/harness.js';
import { callToolThroughGateway, firstText, waitForTask } from '../../../../test/kits/install.js';
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
});
