import { cpSync, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeRegistries, startFakeRegistries } from '../../../../test/fake-registries.js';
import { bearer, createPgDatabase, createTestApp, engines, type TestApp } from '../../../../test/harness.js';
import {
  buildNotesWheel,
  callToolThroughGateway,
  echoPackage,
  type FakeNpm,
  firstText,
  startFakeNpm,
  waitForTask,
} from '../../../../test/kits/install.js';

/**
 * Installed packages are found relative to DATA_DIR: moved to another path (SQLite, the database
 * goes along), or copied to another replica that mounts it elsewhere (PostgreSQL), they start and
 * answer there. Rows an earlier version wrote with absolute paths keep working as they are.
 */
describe.each(engines)('installed packages after DATA_DIR moves, on %s', (engine) => {
  let work: string;
  let fake: FakeRegistries;
  let npm: FakeNpm;
  let databaseUrl: string | undefined;
  let dropPg: (() => Promise<void>) | undefined;
  let first: TestApp | undefined;
  let second: TestApp | undefined;
  const firstDir = () => path.join(work, 'first-data');
  const secondDir = () => path.join(work, 'elsewhere', 'second-data');

  const startApp = async (dataDir: string) => {
    const app = await createTestApp(engine, {
      ...fake.env,
      NPM_REGISTRY_URL: npm.url,
      DATA_DIR: dataDir,
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    });
    await app.app.listen({ host: '127.0.0.1', port: 0 });
    return app;
  };
  const cwdOf = async (app: TestApp, token: string, service: string) =>
    JSON.parse(firstText(await callToolThroughGateway(app, token, service, 'pids', {}))).cwd as string;

  beforeAll(async () => {
    work = mkdtempSync(path.join(tmpdir(), 'toolport-relocate-'));
    mkdirSync(firstDir());
    mkdirSync(path.dirname(secondDir()));
    buildNotesWheel(path.join(work, 'wheels'));
    fake = await startFakeRegistries({ pypiFilesDir: path.join(work, 'wheels') });
    npm = await startFakeNpm([echoPackage('acme-moving-mcp')]);
    if (engine === 'postgres') {
      const pg = await createPgDatabase();
      databaseUrl = pg.url;
      dropPg = pg.drop;
    }
  });
  afterAll(async () => {
    await second?.close();
    await first?.close();
    await npm?.close();
    await fake?.close();
    await dropPg?.();
    rmSync(work, { recursive: true, force: true });
  });

  it('installs an npm and a PyPI package with their directory stored relative to DATA_DIR', async () => {
    first = await startApp(firstDir());
    const token = await first.rootToken();
    for (const payload of [
      { package_name: 'acme-moving-mcp', package_manager: 'npm' },
      { package_name: 'acme-notes-mcp', package_manager: 'pypi', user_provided_env_vars: { ACME_NOTES_TOKEN: 'moving-token' } },
    ]) {
      const res = await first.app.inject({
        method: 'POST',
        url: '/api/mcp_market/install_or_add_service',
        headers: bearer(token),
        payload,
      });
      expect(res.statusCode, res.body).toBe(200);
      const status = await waitForTask(first, token, res.json().data.task_id);
      expect(status.status, status.logs.join('\n')).toBe('completed');
    }
    const rows = await first.ctx.db
      .selectFrom('services')
      .select(['name', 'install_dir', 'command', 'args_json'])
      .orderBy('name')
      .execute();
    expect(rows).toEqual([
      {
        name: 'acme-moving-mcp',
        install_dir: 'packages/npm/acme-moving-mcp',
        command: 'node',
        args_json: '["./node_modules/acme-moving-mcp/server.mjs"]',
      },
      {
        name: 'acme-notes-mcp',
        install_dir: 'packages/pypi/acme-notes-mcp',
        command: './venv/bin/python',
        args_json: '["./venv/bin/acme-notes-mcp"]',
      },
    ]);
    expect(await cwdOf(first, token, 'acme-moving-mcp')).toBe(path.join(firstDir(), 'packages', 'npm', 'acme-moving-mcp'));
  }, 240_000);

  it('starts both from the new DATA_DIR path and answers tool calls there', async () => {
    if (engine === 'sqlite') {
      // One instance moved: stopped, its DATA_DIR (database included) renamed, started again.
      await first?.close();
      first = undefined;
      renameSync(firstDir(), secondDir());
    } else {
      // A second replica mounting a copy of the volume at another path, next to the first.
      cpSync(firstDir(), secondDir(), { recursive: true, verbatimSymlinks: true });
    }
    second = await startApp(secondDir());
    const token = await second.rootToken();
    expect(await cwdOf(second, token, 'acme-moving-mcp')).toBe(path.join(secondDir(), 'packages', 'npm', 'acme-moving-mcp'));
    expect(firstText(await callToolThroughGateway(second, token, 'acme-moving-mcp', 'echo', { text: 'moved' }))).toBe('echo: moved');
    expect(firstText(await callToolThroughGateway(second, token, 'acme-notes-mcp', 'add_note', { text: 'still here' }))).toBe(
      'noted: still here (token set, dir ~/notes)',
    );
    if (first) {
      // The first replica still runs its own copy.
      const firstToken = await first.rootToken();
      expect(await cwdOf(first, firstToken, 'acme-moving-mcp')).toBe(path.join(firstDir(), 'packages', 'npm', 'acme-moving-mcp'));
    }
  }, 120_000);

  it('keeps running a row written with absolute paths by an earlier version', async () => {
    const app = second as TestApp;
    const token = await app.rootToken();
    const dir = path.join(secondDir(), 'packages', 'npm', 'acme-moving-mcp');
    const row = await app.ctx.db.selectFrom('services').select('id').where('name', '=', 'acme-moving-mcp').executeTakeFirstOrThrow();
    await app.ctx.db
      .updateTable('services')
      .set({
        install_dir: dir,
        args_json: JSON.stringify([path.join(dir, 'node_modules', 'acme-moving-mcp', 'server.mjs')]),
        updated_at: Date.now(),
      })
      .where('id', '=', row.id)
      .execute();
    app.ctx.events.emit({ type: 'service.changed', serviceId: row.id });
    expect(await cwdOf(app, token, 'acme-moving-mcp')).toBe(dir);
    expect(firstText(await callToolThroughGateway(app, token, 'acme-moving-mcp', 'echo', { text: 'absolute' }))).toBe('echo: absolute');
  });

  it('uninstalls from the new path: the files there are removed', async () => {
    const app = second as TestApp;
    const token = await app.rootToken();
    const row = await app.ctx.db.selectFrom('services').select('id').where('name', '=', 'acme-notes-mcp').executeTakeFirstOrThrow();
    const res = await app.app.inject({
      method: 'POST',
      url: '/api/mcp_market/uninstall',
      headers: bearer(token),
      payload: { service_id: row.id },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(existsSync(path.join(secondDir(), 'packages', 'pypi', 'acme-notes-mcp'))).toBe(false);
    if (engine === 'postgres') expect(existsSync(path.join(firstDir(), 'packages', 'pypi', 'acme-notes-mcp'))).toBe(true);
  });
});
