import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { McpServersDocument } from '@toolport/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeRegistries, startFakeRegistries } from '../../../../test/fake-registries.js';
import { bearer, createTestApp, engines, type TestApp } from '../../../../test/harness.js';
import { buildNotesWheel, echoPackage, type FakeNpm, FIXTURE_SERVER, startFakeNpm, waitForTask } from '../../../../test/kits/install.js';
import { CliUsageError } from '../../../cli.js';
import { runImportCommand } from '../batch/cli.js';
import { findExecutable } from '../installers/path-lookup.js';
import { runExportCommand } from './cli.js';

/**
 * Export then import on a fresh instance recreates the services: through the API on one side and the
 * `toolport export` / `toolport import` commands on the other, against each instance's database.
 */
describe.each(engines)('export and import on %s', (engine) => {
  let fake: FakeRegistries;
  let npm: FakeNpm;
  let source: TestApp;
  let fresh: TestApp;
  let token: string;
  let work: string;

  /** The environment a shell would give the CLI for one instance. */
  const cliEnv = (t: TestApp) => ({
    ...fake.env,
    NPM_REGISTRY_URL: npm.url,
    DATA_DIR: t.dataDir,
    SECRET_KEY: t.config.secretKey,
    LOG_LEVEL: 'silent',
    ...(t.config.databaseUrl ? { DATABASE_URL: t.config.databaseUrl } : {}),
  });

  beforeAll(async () => {
    work = mkdtempSync(path.join(tmpdir(), 'toolport-export-'));
    buildNotesWheel(path.join(work, 'wheels'));
    fake = await startFakeRegistries({ pypiFilesDir: path.join(work, 'wheels') });
    npm = await startFakeNpm([echoPackage('acme-echo-mcp', '1.2.0')]);
    const env = { ...fake.env, NPM_REGISTRY_URL: npm.url };
    source = await createTestApp(engine, env);
    fresh = await createTestApp(engine, env);
    token = await source.rootToken();

    const install = async (payload: Record<string, unknown>) => {
      const res = await source.app.inject({
        method: 'POST',
        url: '/api/mcp_market/install_or_add_service',
        headers: bearer(token),
        payload,
      });
      expect(res.statusCode, res.body).toBe(200);
      expect((await waitForTask(source, token, res.json().data.task_id)).status).toBe('completed');
    };
    await install({ package_name: 'acme-echo-mcp', package_manager: 'npm', custom_args: ['--verbose'] });
    await install({
      package_name: 'acme-notes-mcp',
      package_manager: 'pypi',
      user_provided_env_vars: { ACME_NOTES_TOKEN: 'export-token-1' },
    });
    const custom = (payload: Record<string, unknown>) =>
      source.app.inject({ method: 'POST', url: '/api/mcp_market/custom_service', headers: bearer(token), payload });
    expect(
      (await custom({ name: 'remote-search', type: 'streamableHttp', url: 'http://127.0.0.1:9/mcp', headers: 'Authorization=Bearer r-1' }))
        .statusCode,
    ).toBe(201);
    expect(
      (
        await custom({
          name: 'local-fixture',
          type: 'stdio',
          command: `"${findExecutable('node')}" "${FIXTURE_SERVER}"`,
          environments: 'MODE=x',
        })
      ).statusCode,
    ).toBe(201);
  }, 240_000);
  afterAll(async () => {
    await source?.close();
    await fresh?.close();
    await npm?.close();
    await fake?.close();
    rmSync(work, { recursive: true, force: true });
  });

  const exportOf = async (t: TestApp, query = '?include_secrets=true'): Promise<McpServersDocument> => {
    const res = await t.app.inject({ method: 'GET', url: `/api/mcp_market/export${query}`, headers: bearer(await t.rootToken()) });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data;
  };

  it('exports marketplace packages as pinned npx / uvx entries, with values, to admins only', async () => {
    const doc = await exportOf(source);
    expect(doc.mcpServers).toEqual({
      'acme-echo-mcp': { command: 'npx', args: ['-y', 'acme-echo-mcp@1.2.0', '--verbose'] },
      'acme-notes-mcp': {
        command: 'uvx',
        args: ['acme-notes-mcp@0.3.1'],
        env: { ACME_NOTES_TOKEN: 'export-token-1', ACME_NOTES_DIR: '~/notes' },
      },
      'remote-search': { type: 'http', url: 'http://127.0.0.1:9/mcp', headers: { Authorization: 'Bearer r-1' } },
      'local-fixture': { command: findExecutable('node'), args: [FIXTURE_SERVER], env: { MODE: 'x' } },
    });
    const user = await source.createUser({ role: 1 });
    expect((await source.app.inject({ method: 'GET', url: '/api/mcp_market/export', headers: bearer(user.token) })).statusCode).toBe(403);
  });

  it('masks every variable and header value unless include_secrets is asked for', async () => {
    for (const query of ['', '?include_secrets=false', '?include_secrets=0']) {
      const doc = await exportOf(source, query);
      expect(doc.mcpServers['acme-notes-mcp']?.env).toEqual({ ACME_NOTES_TOKEN: '********', ACME_NOTES_DIR: '********' });
      expect(doc.mcpServers['remote-search']).toEqual({
        type: 'http',
        url: 'http://127.0.0.1:9/mcp',
        headers: { Authorization: '********' },
      });
      expect(JSON.stringify(doc)).not.toMatch(/export-token-1|r-1/);
    }
    expect((await exportOf(source, '?include_secrets=1')).mcpServers['remote-search']?.headers).toEqual({ Authorization: 'Bearer r-1' });
    const bad = await source.app.inject({ method: 'GET', url: '/api/mcp_market/export?include_secrets=yes', headers: bearer(token) });
    expect(bad.statusCode).toBe(400);
    const lines: string[] = [];
    await runExportCommand([], { env: cliEnv(source), print: (l) => lines.push(l) });
    expect(JSON.parse(lines.join('\n'))).toEqual(await exportOf(source, ''));
  });

  it('writes the same document with `toolport export`, readable by its owner only', async () => {
    const file = path.join(work, `export-${engine}.json`);
    const lines: string[] = [];
    await runExportCommand(['--include-secrets', file], { env: cliEnv(source), print: (l) => lines.push(l) });
    expect(lines).toEqual([`Exported 4 services to ${file}`]);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(await exportOf(source));
    expect(statSync(file).mode & 0o077).toBe(0);
  });

  it('recreates every service on a fresh instance with `toolport import`', async () => {
    const file = path.join(work, `export-${engine}.json`);
    const lines: string[] = [];
    const summary = await runImportCommand([file], { env: cliEnv(fresh), print: (l) => lines.push(l) });
    expect(summary, lines.join('\n')).toEqual({ success: 4, skipped: 0, failed: 0 });
    expect(lines.at(-1)).toBe('Done: 4 imported, 0 skipped, 0 failed');
    // The fresh instance now exports exactly what the first one did: packages reinstalled and pinned alike.
    expect(await exportOf(fresh)).toEqual(await exportOf(source));
    const echo = await fresh.ctx.db.selectFrom('services').selectAll().where('name', '=', 'acme-echo-mcp').executeTakeFirstOrThrow();
    expect(echo).toMatchObject({ enabled: 1, version: '1.2.0', install_dir: 'packages/npm/acme-echo-mcp' });

    // Importing again changes nothing: every name exists.
    const again = await runImportCommand([file], { env: cliEnv(fresh), print: () => undefined });
    expect(again).toEqual({ success: 0, skipped: 4, failed: 0 });
  }, 240_000);

  it('reports a missing or malformed file as a usage error', async () => {
    await expect(runImportCommand([], { env: cliEnv(fresh) })).rejects.toBeInstanceOf(CliUsageError);
    await expect(runImportCommand([path.join(work, 'nope.json')], { env: cliEnv(fresh) })).rejects.toThrow('cannot read');
    writeFileSync(path.join(work, 'bad.json'), '{"hello": 1}');
    await expect(runImportCommand([path.join(work, 'bad.json')], { env: cliEnv(fresh) })).rejects.toThrow('not an MCP configuration');
  });
});
