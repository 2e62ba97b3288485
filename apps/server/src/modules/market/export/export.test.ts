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

/** A remote whose URL carries credentials in its user info and query. */
const KEYED_URL = 'http://keyuser:key-pass-3@127.0.0.1:9/keyed?key=K-SECRET-1&region=eu&access_token=T-SECRET-2';

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
    npm = await startFakeNpm([
      echoPackage('acme-echo-mcp', '1.2.0'),
      echoPackage('acme-pinned-mcp', '1.0.0'),
      // A server that cannot start without its key: what a masked required value means.
      {
        name: 'acme-needs-key',
        version: '1.0.0',
        bin: { 'acme-needs-key': 'server.mjs' },
        files: {
          'server.mjs': `if (!process.env.ACME_KEY) { console.error('ACME_KEY is required'); process.exit(1); }\n${readFileSync(FIXTURE_SERVER, 'utf8').replace(/^#!.*\n/, '')}`,
        },
      },
    ]);
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
    // Credentials in a remote's URL: user info and key parameters (decision 0042).
    expect((await custom({ name: 'keyed-remote', type: 'streamableHttp', url: KEYED_URL })).statusCode).toBe(201);
    // A custom `npx` service typed without a version: installed pinned at the newest (1.0.0), then 1.1.0 comes out.
    const pinned = await custom({ name: 'pinned-echo', type: 'stdio', command: 'npx -y acme-pinned-mcp' });
    expect(pinned.statusCode, pinned.body).toBe(201);
    expect((await waitForTask(source, token, pinned.json().data.task_id)).status).toBe('completed');
    npm.publish(echoPackage('acme-pinned-mcp', '1.1.0'));
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
      'keyed-remote': { type: 'http', url: KEYED_URL },
      // As typed, at the version installed: an import installs that one, not the newest.
      'pinned-echo': { command: 'npx', args: ['-y', 'acme-pinned-mcp@1.0.0'] },
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
      expect(doc.mcpServers['keyed-remote']).toEqual({
        type: 'http',
        url: 'http://********:********@127.0.0.1:9/keyed?key=********&region=eu&access_token=********',
      });
      expect(JSON.stringify(doc)).not.toMatch(/export-token-1|r-1|K-SECRET-1|T-SECRET-2|keyuser|key-pass-3/);
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
    expect(lines).toEqual([`Exported 6 services to ${file}`]);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(await exportOf(source));
    expect(statSync(file).mode & 0o077).toBe(0);
  });

  it('recreates every service on a fresh instance with `toolport import`', async () => {
    const file = path.join(work, `export-${engine}.json`);
    const lines: string[] = [];
    const summary = await runImportCommand([file], { env: cliEnv(fresh), print: (l) => lines.push(l) });
    expect(summary, lines.join('\n')).toEqual({ success: 6, skipped: 0, failed: 0 });
    expect(lines.at(-1)).toBe('Done: 6 imported, 0 skipped, 0 failed');
    // The fresh instance now exports exactly what the first one did: packages reinstalled and pinned alike.
    expect(await exportOf(fresh)).toEqual(await exportOf(source));
    const echo = await fresh.ctx.db.selectFrom('services').selectAll().where('name', '=', 'acme-echo-mcp').executeTakeFirstOrThrow();
    expect(echo).toMatchObject({ enabled: 1, version: '1.2.0', install_dir: 'packages/npm/acme-echo-mcp' });
    // The custom service came back at the version the source runs, though the registry's newest is 1.1.0.
    const pinned = await fresh.ctx.db.selectFrom('services').selectAll().where('name', '=', 'pinned-echo').executeTakeFirstOrThrow();
    expect(pinned).toMatchObject({ enabled: 1, version: '1.0.0', typed_command: 'npx -y acme-pinned-mcp@1.0.0' });
    const keyed = await fresh.ctx.db.selectFrom('services').selectAll().where('name', '=', 'keyed-remote').executeTakeFirstOrThrow();
    expect(keyed.command).toBe(KEYED_URL);

    // Importing again changes nothing: every name exists.
    const again = await runImportCommand([file], { env: cliEnv(fresh), print: () => undefined });
    expect(again).toEqual({ success: 0, skipped: 6, failed: 0 });
  }, 240_000);

  it('never stores a masked value: an existing service keeps its own, a new one goes without, and the report says which', async () => {
    const masked = await exportOf(source, '');
    const notesBefore = await source.ctx.db
      .selectFrom('services')
      .selectAll()
      .where('name', '=', 'acme-notes-mcp')
      .executeTakeFirstOrThrow();
    const doc = {
      mcpServers: {
        'acme-notes-mcp': masked.mcpServers['acme-notes-mcp'],
        'remote-search': masked.mcpServers['remote-search'],
        'masked-remote': { type: 'http', url: 'http://127.0.0.1:9/masked', headers: { Authorization: '********', 'X-Team': 'blue' } },
        'keyed-remote': masked.mcpServers['keyed-remote'],
        'masked-url': { type: 'http', url: 'http://********:********@127.0.0.1:9/other?key=********&region=eu' },
        'needs-key': { command: 'npx', args: ['-y', 'acme-needs-key@1.0.0'], env: { ACME_KEY: '********' } },
      },
    };
    const start = await source.app.inject({ method: 'POST', url: '/api/mcp_market/batch-import', headers: bearer(token), payload: doc });
    expect(start.statusCode, start.body).toBe(200);
    const task = await waitForTask(source, token, start.json().data.task_id);
    const items = Object.fromEntries(
      task.logs
        .map((line) => JSON.parse(line) as { name?: string; status: string; message?: string })
        .filter((e) => e.name)
        .map((e) => [e.name, e]),
    );
    // Existing services: skipped, their stored values untouched, the report says the file's were masked.
    expect(items['acme-notes-mcp']).toEqual({
      name: 'acme-notes-mcp',
      status: 'skipped',
      message:
        'Skipped: a service named acme-notes-mcp already exists; its stored values are kept (masked in the file: ACME_NOTES_TOKEN, ACME_NOTES_DIR)',
    });
    expect(items['remote-search']?.message).toContain('masked in the file: Authorization');
    expect(items['keyed-remote']?.message).toContain('masked in the file: user:password@, ?key, ?access_token');
    const keyed = await source.ctx.db.selectFrom('services').selectAll().where('name', '=', 'keyed-remote').executeTakeFirstOrThrow();
    expect(keyed.command).toBe(KEYED_URL);
    const notes = await source.ctx.db.selectFrom('services').selectAll().where('name', '=', 'acme-notes-mcp').executeTakeFirstOrThrow();
    expect(notes.env_enc).toBe(notesBefore.env_enc);
    expect(source.ctx.secrets.decryptJson(notes.env_enc, {})).toMatchObject({ ACME_NOTES_TOKEN: 'export-token-1' });
    const search = await source.ctx.db.selectFrom('services').selectAll().where('name', '=', 'remote-search').executeTakeFirstOrThrow();
    expect(source.ctx.secrets.decryptJson(search.headers_enc, {})).toEqual({ Authorization: 'Bearer r-1' });

    // A new service that runs without the value: created, the masked value left empty, never the mask.
    expect(items['masked-remote']).toMatchObject({ status: 'success' });
    expect(items['masked-remote']?.message).toContain('Masked values (********) were not imported and are left empty: Authorization');
    const remote = await source.ctx.db.selectFrom('services').selectAll().where('name', '=', 'masked-remote').executeTakeFirstOrThrow();
    expect(source.ctx.secrets.decryptJson(remote.headers_enc, {})).toEqual({ 'X-Team': 'blue' });
    // The same for a URL: the masked user info and parameters are left out, the rest kept.
    expect(items['masked-url']).toMatchObject({ status: 'success' });
    expect(items['masked-url']?.message).toContain('were not imported and are left empty: user:password@, ?key');
    const other = await source.ctx.db.selectFrom('services').selectAll().where('name', '=', 'masked-url').executeTakeFirstOrThrow();
    expect(other.command).toBe('http://127.0.0.1:9/other?region=eu');

    // A new service that cannot run without it (the value was required): the item fails, saying so.
    expect(items['needs-key']).toMatchObject({ status: 'failed' });
    expect(items['needs-key']?.message).toContain('The file had these values masked (********), so they were not imported: ACME_KEY');
    const stored = await source.ctx.db.selectFrom('services').select(['env_enc']).where('name', '=', 'needs-key').executeTakeFirst();
    if (stored) expect(JSON.stringify(source.ctx.secrets.decryptJson(stored.env_enc, {}))).not.toContain('********');
  }, 240_000);

  it('reports a missing or malformed file as a usage error', async () => {
    await expect(runImportCommand([], { env: cliEnv(fresh) })).rejects.toBeInstanceOf(CliUsageError);
    await expect(runImportCommand([path.join(work, 'nope.json')], { env: cliEnv(fresh) })).rejects.toThrow('cannot read');
    writeFileSync(path.join(work, 'bad.json'), '{"hello": 1}');
    await expect(runImportCommand([path.join(work, 'bad.json')], { env: cliEnv(fresh) })).rejects.toThrow('not an MCP configuration');
  });
});
