import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeRegistries } from '../../../../test/fake-registries.js';
import { bearer, engines, type TestApp } from '../../../../test/harness.js';
import {
  buildNotesWheel,
  callToolThroughGateway,
  echoPackage,
  type FakeNpm,
  firstText,
  type InstallKit,
  processesMentioning,
  startInstallKit,
  waitForTask,
} from '../../../../test/kits/install.js';
import { processesIn } from '../installers/processes.js';

/**
 * Marketplace installs as an admin runs them from the console: npm packages from a local registry
 * built by the test (the real npm client installs them), the MCP Registry and PyPI from the fake
 * registries. Each install is a stored task whose log is polled until it completes or fails.
 */
describe.each(engines)('marketplace installs of npm packages on %s', (engine) => {
  let kit: InstallKit;
  let npm: FakeNpm;
  let t: TestApp;
  let token: string;

  beforeAll(async () => {
    kit = await startInstallKit(engine, {
      npm: [
        echoPackage('acme-echo-mcp'),
        {
          name: 'acme-broken-install',
          version: '1.0.0',
          bin: { 'acme-broken-install': 'server.mjs' },
          files: { 'server.mjs': 'process.stdin.resume();\n' },
          scripts: {
            postinstall: `node -e "console.log('building native parts'); console.error('gyp ERR! build failed'); process.exit(1)"`,
          },
        },
        {
          name: 'acme-silent-mcp',
          version: '2.0.0',
          bin: { 'acme-silent-mcp': 'server.mjs' },
          // Reads requests and never answers: not even initialize.
          files: { 'server.mjs': 'process.stdin.resume();\nsetInterval(() => {}, 1 << 30);\n' },
        },
      ],
      // acme-silent-mcp's install waits for the initialize timeout: 5 s instead of the production 30 s.
      gateway: { tuning: { initializeTimeoutMs: 5_000 } },
    });
    ({ npm, t, token } = kit);
  });
  afterAll(async () => kit?.close());

  const install = (payload: Record<string, unknown>, lang = 'en') =>
    t.app.inject({
      method: 'POST',
      url: '/api/mcp_market/install_or_add_service',
      headers: { ...bearer(token), 'accept-language': lang },
      payload,
    });
  const serviceNamed = (name: string) => kit.serviceNamed(name);
  const packageDir = (name: string) => path.join(t.dataDir, 'packages', 'npm', name);

  it('installs a pinned npm package into DATA_DIR/packages, runs it with node after a handshake, and answers a tool call', async () => {
    // Two clicks at once: the second answers with the running task instead of installing twice.
    const [first, second] = await Promise.all([
      install({ package_name: 'acme-echo-mcp', package_manager: 'npm' }),
      install({ package_name: 'acme-echo-mcp', package_manager: 'npm' }),
    ]);
    expect(first.statusCode, first.body).toBe(200);
    expect(second.statusCode, second.body).toBe(200);
    const a = first.json().data;
    const b = second.json().data;
    expect(a).toMatchObject({ service_name: 'acme-echo-mcp', task_id: expect.any(String) });
    expect(b.mcp_service_id).toBe(a.mcp_service_id);
    expect(b.task_id).toBe(a.task_id);
    expect(['pending', 'installing']).toContain(a.status);
    expect(['pending', 'installing']).toContain(b.status);

    const status = await waitForTask(t, token, a.task_id);
    expect(status.status, status.logs.join('\n')).toBe('completed');
    expect(status.service_id).toBe(a.mcp_service_id);
    expect(status.logs.some((l) => l.startsWith('$ npm install --prefix') && l.includes(`--registry ${npm.url}`))).toBe(true);
    expect(status.logs.some((l) => /added \d+ package/.test(l))).toBe(true);
    expect(status.logs.at(-1)).toMatch(/^Handshake complete: \d+ tools/);

    const row = await serviceNamed('acme-echo-mcp');
    const dir = packageDir('acme-echo-mcp');
    expect(row).toMatchObject({
      enabled: 1,
      type: 'stdio',
      source: 'npm',
      package_manager: 'npm',
      version: '1.0.0',
      command: 'node',
      // Relative to DATA_DIR, and the script relative to the install directory it runs in.
      install_dir: 'packages/npm/acme-echo-mcp',
    });
    expect(JSON.parse(row?.args_json ?? '[]')).toEqual(['./node_modules/acme-echo-mcp/server.mjs']);
    expect(JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')).dependencies).toEqual({ 'acme-echo-mcp': '1.0.0' });

    const result = await callToolThroughGateway(t, token, 'acme-echo-mcp', 'echo', { text: 'through the gateway' });
    expect(firstText(result)).toContain('through the gateway');

    const installed = (await t.app.inject({ method: 'GET', url: '/api/mcp_market/installed', headers: bearer(token) })).json().data;
    expect(installed.find((s: { name: string }) => s.name === 'acme-echo-mcp')).toMatchObject({ enabled: true, health_status: 'healthy' });
  });

  it('Update of a service at the newest release answers "already the latest" in the reader’s language and restarts nothing', async () => {
    const row = await serviceNamed('acme-echo-mcp');
    if (!row) throw new Error('acme-echo-mcp is not installed');
    await callToolThroughGateway(t, token, 'acme-echo-mcp', 'echo', { text: 'running' });
    const running = processesIn(packageDir('acme-echo-mcp'));
    expect(running.length).toBeGreaterThan(0);
    const update = await t.app.inject({ method: 'POST', url: `/api/mcp_services/${row.id}/update_package`, headers: bearer(token) });
    expect(update.statusCode, update.body).toBe(200);
    const taskId = update.json().data.task_id as string;
    const done = await waitForTask(t, token, taskId);
    expect(done).toMatchObject({ status: 'completed', version: '1.0.0', already_latest: true });
    expect(done.message).toBe('acme-echo-mcp already runs the latest version (1.0.0): nothing was reinstalled');
    const zh = await t.app.inject({
      method: 'GET',
      url: `/api/mcp_market/install_status/${taskId}`,
      headers: { ...bearer(token), 'accept-language': 'zh-CN' },
    });
    expect(zh.json().data.message).toBe('acme-echo-mcp 已是最新版本（1.0.0），未重新安装');
    // The same process serves, on the same files; the row was not touched and nothing was left beside it.
    expect(processesIn(packageDir('acme-echo-mcp'))).toEqual(running);
    expect(await serviceNamed('acme-echo-mcp')).toMatchObject({
      updated_at: row.updated_at,
      version: '1.0.0',
      health_status: row.health_status,
    });
    expect(existsSync(`${packageDir('acme-echo-mcp')}.next`)).toBe(false);
    expect(existsSync(`${packageDir('acme-echo-mcp')}.previous`)).toBe(false);
  });

  it('answers already_installed_instance_added for a package that is installed', async () => {
    const res = await install({ package_name: 'acme-echo-mcp', package_manager: 'npm' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject({ status: 'already_installed_instance_added', service_name: 'acme-echo-mcp' });
    expect(res.json().data.task_id).toBeUndefined();
    expect(res.json().message).toBe('acme-echo-mcp is already installed; your values for it were saved');
  });

  it('removes the installed files and the working directory on uninstall', async () => {
    const row = await serviceNamed('acme-echo-mcp');
    const workDir = path.join(t.dataDir, 'services', String(row?.id));
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/mcp_market/uninstall',
      headers: bearer(token),
      payload: { service_id: row?.id },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(existsSync(packageDir('acme-echo-mcp'))).toBe(false);
    expect(existsSync(workDir)).toBe(false);
    expect(await serviceNamed('acme-echo-mcp')).toBeUndefined();
  });

  it('fails an install whose install script fails: the npm output is in the log, no service and no files are left', async () => {
    const res = await install({ package_name: 'acme-broken-install', package_manager: 'npm' });
    expect(res.statusCode, res.body).toBe(200);
    const status = await waitForTask(t, token, res.json().data.task_id);
    expect(status.status).toBe('failed');
    // npm prints the failing script's output, prefixed with its own log level.
    expect(status.logs.some((l) => l.includes('gyp ERR! build failed'))).toBe(true);
    expect(status.error_message).toMatch(/npm exited with code \d+/);
    expect(status.logs).toContain(`Installation failed: ${status.error_message}`);
    expect(status.service_id).toBeNull();
    expect(await serviceNamed('acme-broken-install')).toBeUndefined();
    expect(existsSync(packageDir('acme-broken-install'))).toBe(false);
  });

  it('answers 404 for a marketplace package the registry does not know, and fails a custom install of one with npm’s own error', async () => {
    const unknown = await install({ package_name: 'acme-no-such-package', package_manager: 'npm' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().message).toBe('Package acme-no-such-package was not found on npm');

    const custom = await install({ source_type: 'custom', package_name: 'acme-no-such-package', package_manager: 'npm' });
    expect(custom.statusCode, custom.body).toBe(200);
    const status = await waitForTask(t, token, custom.json().data.task_id);
    expect(status.status).toBe('failed');
    expect(status.logs.join('\n')).toMatch(/E404|404 Not Found/);
    expect(await serviceNamed('acme-no-such-package')).toBeUndefined();
  });

  it('fails an install whose server never answers initialize, and leaves no process behind', async () => {
    const res = await install({ package_name: 'acme-silent-mcp', package_manager: 'npm' });
    expect(res.statusCode, res.body).toBe(200);
    const status = await waitForTask(t, token, res.json().data.task_id);
    expect(status.status).toBe('failed');
    expect(status.error_message).toMatch(/did not complete the MCP handshake|MCP handshake did not finish/);
    expect(status.logs).toContain('The service and its files were removed');
    expect(processesMentioning('acme-silent-mcp')).toEqual([]);
    expect(processesIn(packageDir('acme-silent-mcp'))).toEqual([]);
    expect(await serviceNamed('acme-silent-mcp')).toBeUndefined();
    expect(existsSync(packageDir('acme-silent-mcp'))).toBe(false);
  }, 180_000);

  it('refuses MCP Registry entries it cannot run (a container image) with the reason', async () => {
    const res = await install({ package_name: 'io.github.acme/docker-only', package_manager: 'mcp_registry' });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toContain('oci packages (ghcr.io/acme/docker-only:0.9.0) are not supported');
    expect(await serviceNamed('docker-only')).toBeUndefined();
  });

  it('validates the request: custom package names and versions', async () => {
    const badName = await install({ source_type: 'custom', package_name: '--registry=http://evil', package_manager: 'npm' });
    expect(badName.statusCode).toBe(400);
    const badVersion = await install({ package_name: 'acme-echo-mcp', package_manager: 'npm', version: '>=1 <2' });
    expect(badVersion.statusCode).toBe(400);
    expect(badVersion.json().message).toContain('Invalid version');
  });
});

describe.each(engines)('marketplace installs of PyPI packages on %s', (engine) => {
  let kit: InstallKit;
  let fake: FakeRegistries;
  let t: TestApp;
  let token: string;
  let wheels: string;

  beforeAll(async () => {
    wheels = mkdtempSync(path.join(tmpdir(), 'toolport-wheels-'));
    buildNotesWheel(wheels);
    kit = await startInstallKit(engine, { pypiFilesDir: wheels });
    ({ fake, t, token } = kit);
  });
  afterAll(async () => {
    await kit?.close();
    rmSync(wheels, { recursive: true, force: true });
  });

  const install = (payload: Record<string, unknown>, as = token, lang = 'en') =>
    t.app.inject({
      method: 'POST',
      url: '/api/mcp_market/install_or_add_service',
      headers: { ...bearer(as), 'accept-language': lang },
      payload: { package_name: 'acme-notes-mcp', package_manager: 'pypi', ...payload },
    });

  it('asks for the required variables first (a placeholder is not a value), creating nothing', async () => {
    for (const vars of [{}, { ACME_NOTES_TOKEN: '<your-token-here>' }]) {
      const res = await install({ user_provided_env_vars: vars });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json()).toMatchObject({
        success: false,
        message: 'Please provide the required environment variables: ACME_NOTES_TOKEN',
        data: { required_env_vars: ['ACME_NOTES_TOKEN'] },
      });
    }
    const zh = await install({}, token, 'zh-CN');
    expect(zh.json().message).toBe('请填写必需的环境变量：ACME_NOTES_TOKEN');
    expect(await t.ctx.db.selectFrom('services').selectAll().execute()).toEqual([]);
    expect(await t.ctx.db.selectFrom('install_tasks').selectAll().execute()).toEqual([]);
  });

  it('installs the wheel from the simple index into a venv and runs its console script', async () => {
    const res = await install({ user_provided_env_vars: { ACME_NOTES_TOKEN: 'notes-secret-1234' } });
    expect(res.statusCode, res.body).toBe(200);
    const status = await waitForTask(t, token, res.json().data.task_id);
    expect(status.status, status.logs.join('\n')).toBe('completed');
    expect(status.logs.some((l) => l.includes('-m venv') || l.includes(' venv '))).toBe(true);
    expect(status.logs.some((l) => l.includes(`--index-url ${fake.urls.pypiIndex}`) && l.includes('acme-notes-mcp==0.3.1'))).toBe(true);
    expect(status.logs.join('\n')).not.toContain('notes-secret-1234');

    const row = await t.ctx.db.selectFrom('services').selectAll().where('name', '=', 'acme-notes-mcp').executeTakeFirstOrThrow();
    // The console script runs with the venv's Python, both named relative to the install directory.
    expect(row).toMatchObject({
      command: './venv/bin/python',
      install_dir: 'packages/pypi/acme-notes-mcp',
      version: '0.3.1',
      source: 'pypi',
      enabled: 1,
    });
    expect(JSON.parse(row.args_json)).toEqual(['./venv/bin/acme-notes-mcp']);
    // The token given and the registry's default for the directory.
    expect(t.ctx.secrets.decryptJson(row.env_enc, {})).toEqual({ ACME_NOTES_TOKEN: 'notes-secret-1234', ACME_NOTES_DIR: '~/notes' });

    const result = await callToolThroughGateway(t, token, 'acme-notes-mcp', 'add_note', { text: 'buy milk' });
    expect(firstText(result)).toBe('noted: buy milk (token set, dir ~/notes)');
  }, 180_000);

  it('stores a second admin’s own values when the package is already installed', async () => {
    const other = await t.createUser({ role: 10 });
    const res = await install({ user_provided_env_vars: { ACME_NOTES_TOKEN: 'personal-token-5678', NOT_DECLARED: 'x' } }, other.token);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.status).toBe('already_installed_instance_added');
    const row = await t.ctx.db
      .selectFrom('service_user_envs')
      .selectAll()
      .where('user_id', '=', other.id)
      .where('service_id', '=', res.json().data.mcp_service_id)
      .executeTakeFirstOrThrow();
    expect(row.env_enc).not.toContain('personal-token-5678');
    expect(t.ctx.secrets.decryptJson(row.env_enc, {})).toEqual({ ACME_NOTES_TOKEN: 'personal-token-5678' });
  });
});
