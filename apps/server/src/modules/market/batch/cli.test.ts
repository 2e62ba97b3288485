import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURE_SERVER } from '../../../../test/kits/install.js';
import { serviceRow } from '../../../../test/kits/services.js';
import { loadConfig, prepareDataDir } from '../../../config.js';
import { migrateToLatest, openDatabase } from '../../../db/db.js';
import { runExportCommand } from '../export/cli.js';
import { runImportCommand } from './cli.js';

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/**
 * `toolport import` and `toolport export` build the modules they use and no gateway: an enabled stdio
 * service of the data directory (started at once by a server, whose default strategy is `boot`) stays
 * stopped, and what is imported runs only for its install's health check.
 */
describe('import and export commands start no tool server', () => {
  let work: string;
  let env: Record<string, string>;
  /** Written by the wrapper when a tool server starts: the marker file named in its arguments. */
  let wrapper: string;
  const marker = (name: string) => path.join(work, `${name}.started`);

  beforeAll(async () => {
    work = mkdtempSync(path.join(tmpdir(), 'toolport-cli-import-'));
    wrapper = path.join(work, 'marked-server.mjs');
    writeFileSync(
      wrapper,
      `import { writeFileSync } from 'node:fs';\nwriteFileSync(process.argv[2], String(process.pid));\nawait import(${JSON.stringify(FIXTURE_SERVER)});\n`,
    );
    env = {
      DATA_DIR: path.join(work, 'data'),
      SECRET_KEY: 'test-secret-key-that-is-long-enough-0123456789',
      ADMIN_PASSWORD: 'admin-password-1234',
      LOG_LEVEL: 'silent',
    };
    const config = loadConfig(env);
    prepareDataDir(config.dataDir);
    const database = openDatabase(config);
    try {
      await migrateToLatest(database.db);
      await database.db
        .insertInto('services')
        .values(
          serviceRow({ name: 'already-there', command: process.execPath, args_json: JSON.stringify([wrapper, marker('already-there')]) }),
        )
        .execute();
    } finally {
      await database.db.destroy();
    }
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('imports and health-checks a stdio server without starting the enabled one already there', async () => {
    const file = path.join(work, 'servers.json');
    writeFileSync(file, JSON.stringify({ mcpServers: { imported: { command: process.execPath, args: [wrapper, marker('imported')] } } }));
    const lines: string[] = [];
    const summary = await runImportCommand([file], { env, print: (l) => lines.push(l) });
    expect(summary, lines.join('\n')).toEqual({ success: 1, skipped: 0, failed: 0 });

    // The install's check was a real MCP round trip with the new server, stopped once it answered.
    const pid = Number(readFileSync(marker('imported'), 'utf8'));
    expect(alive(pid)).toBe(false);
    const database = openDatabase(loadConfig(env));
    try {
      const row = await database.db.selectFrom('services').selectAll().where('name', '=', 'imported').executeTakeFirstOrThrow();
      expect(row).toMatchObject({ enabled: 1, health_status: 'healthy' });
      expect(row.tool_count).toBeGreaterThan(0);
    } finally {
      await database.db.destroy();
    }
    expect(existsSync(marker('already-there'))).toBe(false);
  }, 60_000);

  it('exports without starting any of them', async () => {
    rmSync(marker('imported'), { force: true });
    const file = path.join(work, 'export.json');
    await runExportCommand([file], { env, print: () => undefined });
    expect(Object.keys(JSON.parse(readFileSync(file, 'utf8')).mcpServers).sort()).toEqual(['already-there', 'imported']);
    expect(existsSync(marker('already-there'))).toBe(false);
    expect(existsSync(marker('imported'))).toBe(false);
  });
});
