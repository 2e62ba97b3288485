import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addService } from '../../test/gateway/gateway-harness.js';
import { createTestApp, type TestApp } from '../../test/harness.js';
import { CliCommandError, CliUsageError } from '../cli/args.js';
import { resolveMasterSecret, Secrets } from '../infra/secrets.js';
import { keyFileOf, runBackupCommand, runRestoreCommand } from './cli.js';

const require = createRequire(import.meta.url);

/**
 * `toolport backup` / `toolport restore` against a real app's SQLite database, run in-process with
 * the environment a shell would give them. The built CLI under load is in test/backup-under-load.test.ts.
 */
describe('toolport backup and restore on SQLite', () => {
  let source: TestApp;
  let work: string;
  let backup: string;
  const secretEnv = { API_TOKEN: 'token-kept-across-restore' };

  const run = async (command: 'backup' | 'restore', args: string[], env: Record<string, string>) => {
    const lines: string[] = [];
    const io = { env: { LOG_LEVEL: 'silent', ...env }, print: (line: string) => lines.push(line) };
    await (command === 'backup' ? runBackupCommand(args, io) : runRestoreCommand(args, io));
    return lines;
  };
  const freshDir = () => mkdtempSync(path.join(work, 'data-'));
  const serviceEnvIn = (dataDir: string) => {
    const db = new SQLite(path.join(dataDir, 'toolport.db'), { readonly: true });
    try {
      const sealed = db.prepare("select env_enc from services where name = 'kept'").pluck().get() as string;
      return new Secrets(resolveMasterSecret(undefined, dataDir)).decryptJson(sealed, {});
    } finally {
      db.close();
    }
  };

  beforeAll(async () => {
    work = mkdtempSync(path.join(tmpdir(), 'toolport-backup-'));
    // No SECRET_KEY: the app generates DATA_DIR/secret.key, which a backup must carry.
    source = await createTestApp('sqlite', { SECRET_KEY: '' });
    await addService(source.ctx, { name: 'kept', env: secretEnv });
    backup = path.join(work, 'toolport-backup.db');
  });
  afterAll(async () => {
    await source?.close();
    rmSync(work, { recursive: true, force: true });
  });

  it('backs up the running database with its generated key and restores both into a fresh DATA_DIR', async () => {
    const lines = await run('backup', [backup], { DATA_DIR: source.dataDir });
    expect(lines[0]).toMatch(
      /^Backed up .*toolport\.db to .*toolport-backup\.db \(1 users, 1 services, 0 request records, [\d.]+ MB, migration \d{4}_\w+\)$/,
    );
    expect(lines[1]).toContain(keyFileOf(backup));
    expect(statSync(backup).mode & 0o777).toBe(0o600);
    expect(statSync(keyFileOf(backup)).mode & 0o777).toBe(0o600);
    expect(readFileSync(keyFileOf(backup), 'utf8')).toBe(readFileSync(path.join(source.dataDir, 'secret.key'), 'utf8'));
    expect(readdirSync(work).filter((f) => f.includes('.partial-'))).toEqual([]);

    const target = freshDir();
    const restored = await run('restore', [backup], { DATA_DIR: target });
    expect(restored[0]).toMatch(/^Restored .* to .*toolport\.db \(1 users, 1 services/);
    expect(restored.join('\n')).not.toContain('kept as');
    expect(readFileSync(path.join(target, 'secret.key'), 'utf8')).toBe(readFileSync(path.join(source.dataDir, 'secret.key'), 'utf8'));
    expect(statSync(path.join(target, 'secret.key')).mode & 0o777).toBe(0o600);
    expect(serviceEnvIn(target)).toEqual(secretEnv);
  });

  it('keeps the database it replaces, with what a crashed server left in its log, and replays none of it', async () => {
    const target = freshDir();
    await run('restore', [backup], { DATA_DIR: target });
    // A server that dies mid-work leaves committed rows in toolport.db-wal, not yet in the file.
    const crash = [
      "const SQLite = require('better-sqlite3');",
      `const db = new SQLite(${JSON.stringify(path.join(target, 'toolport.db'))});`,
      "db.pragma('journal_mode = WAL');",
      "db.prepare(\"insert into options (key, value, updated_at) values ('crash.marker', 'x', 0)\").run();",
      "process.kill(process.pid, 'SIGKILL');",
    ].join('\n');
    spawnSync(process.execPath, ['-e', crash], { cwd: path.dirname(require.resolve('better-sqlite3/package.json')) });
    expect(existsSync(path.join(target, 'toolport.db-wal'))).toBe(true);

    const lines = await run('restore', [backup], { DATA_DIR: target });
    const kept = /kept as (.+)\.$/.exec(lines.find((l) => l.startsWith('The database it replaced')) ?? '')?.[1] ?? '';
    expect(kept).toMatch(/toolport\.db\.before-restore-/);
    const marker = (file: string) => {
      const db = new SQLite(file, { readonly: true });
      try {
        return db.prepare("select count(*) from options where key = 'crash.marker'").pluck().get();
      } finally {
        db.close();
      }
    };
    expect(marker(kept)).toBe(1);
    expect(existsSync(path.join(target, 'toolport.db-wal'))).toBe(false);
    expect(marker(path.join(target, 'toolport.db'))).toBe(0);
    expect(serviceEnvIn(target)).toEqual(secretEnv);
  });

  it('refuses to restore while a server has the database open, and changes nothing', async () => {
    const before = readdirSync(source.dataDir).sort();
    await expect(run('restore', [backup], { DATA_DIR: source.dataDir })).rejects.toThrow(
      new CliCommandError(
        `a Toolport server (or another toolport command) is using ${path.join(source.dataDir, 'toolport.db')}: stop it, then run restore again`,
      ),
    );
    expect(readdirSync(source.dataDir).sort()).toEqual(before);
    expect(await source.ctx.db.selectFrom('services').select('name').execute()).toEqual([{ name: 'kept' }]);
  });

  it('refuses files that are not a Toolport database it can use, before touching DATA_DIR', async () => {
    const target = freshDir();
    const refused = (file: string) => run('restore', [file], { DATA_DIR: target });

    await expect(refused(path.join(work, 'missing.db'))).rejects.toThrow(/missing\.db does not exist$/);
    const text = path.join(work, 'notes.txt');
    writeFileSync(text, 'not a database at all');
    await expect(refused(text)).rejects.toThrow(/notes\.txt is not an SQLite database$/);

    const foreign = path.join(work, 'foreign.db');
    const other = new SQLite(foreign);
    other.exec('create table notes (id integer primary key, body text)');
    other.close();
    await expect(refused(foreign)).rejects.toThrow(
      /foreign\.db is an SQLite database but not a Toolport one \(no kysely_migration, users, /,
    );

    const newer = path.join(work, 'newer.db');
    copyFileSync(backup, newer);
    copyFileSync(keyFileOf(backup), keyFileOf(newer));
    const db = new SQLite(newer);
    db.prepare('insert into kysely_migration (name, timestamp) values (?, ?)').run('9999_from_the_future', new Date().toISOString());
    db.close();
    await expect(refused(newer)).rejects.toThrow(
      /newer\.db was made by a newer Toolport \(migration 9999_from_the_future is unknown to this version\): upgrade Toolport, then restore$/,
    );

    const damaged = path.join(work, 'damaged.db');
    const bytes = readFileSync(backup);
    // Page 2 onwards overwritten: the header still says SQLite, the b-trees are gone.
    bytes.fill(0x5a, 4096);
    writeFileSync(damaged, bytes);
    await expect(refused(damaged)).rejects.toThrow(/damaged\.db (is damaged|cannot be read as a Toolport database)/);

    expect(readdirSync(target)).toEqual([]);
  });

  it('refuses a backup whose encrypted values the secret key at hand cannot read', async () => {
    const target = freshDir();
    await expect(run('restore', [backup], { DATA_DIR: target, SECRET_KEY: 'another-installation-secret-key-0123456789' })).rejects.toThrow(
      /^the secret key from SECRET_KEY does not decrypt .*toolport-backup\.db: set SECRET_KEY to the backed-up installation's value, or put its secret\.key beside the backup as /,
    );
    const lone = path.join(work, 'lone.db');
    copyFileSync(backup, lone);
    await expect(run('restore', [lone], { DATA_DIR: target })).rejects.toThrow(
      /lone\.db holds encrypted values and no secret key to read them was found: set SECRET_KEY/,
    );
    expect(readdirSync(target)).toEqual([]);
  });

  it('refuses to back up onto the live database, into a missing directory or from a DATA_DIR without a database', async () => {
    const live = path.join(source.dataDir, 'toolport.db');
    await expect(run('backup', [live], { DATA_DIR: source.dataDir })).rejects.toThrow(
      `${live} is the live database itself: choose another file`,
    );
    await expect(run('backup', [path.join(work, 'nowhere', 'b.db')], { DATA_DIR: source.dataDir })).rejects.toThrow(
      `the directory ${path.join(work, 'nowhere')} does not exist`,
    );
    const empty = freshDir();
    await expect(run('backup', [path.join(work, 'b.db')], { DATA_DIR: empty })).rejects.toThrow(
      `there is no database at ${path.join(empty, 'toolport.db')}: check DATA_DIR`,
    );
    expect(existsSync(path.join(work, 'b.db'))).toBe(false);
  });

  it('answers malformed commands with usage, and PostgreSQL with the pg_dump and pg_restore commands', async () => {
    await expect(run('backup', [], { DATA_DIR: source.dataDir })).rejects.toThrow(new CliUsageError('expected: toolport backup <file>'));
    await expect(run('restore', ['a.db', 'b.db'], { DATA_DIR: source.dataDir })).rejects.toThrow(
      new CliUsageError('expected: toolport restore <file>'),
    );
    await expect(run('backup', ['--all', 'a.db'], { DATA_DIR: source.dataDir })).rejects.toThrow(CliUsageError);

    const pg = { DATA_DIR: source.dataDir, DATABASE_URL: 'postgres://toolport:hunter2-password@db.internal:5432/toolport' };
    const dump = await run('backup', ['/backups/toolport.dump'], pg).then(
      () => '',
      (err: Error) => (err instanceof CliCommandError ? err.message : `unexpected: ${err}`),
    );
    expect(dump).toContain('pg_dump --format=custom --no-owner --file=/backups/toolport.dump "$DATABASE_URL"');
    expect(dump).toContain('keep SECRET_KEY with the dump');
    expect(dump).not.toContain('hunter2');
    const load = await run('restore', ['/backups/toolport.dump'], pg).then(
      () => '',
      (err: Error) => (err instanceof CliCommandError ? err.message : `unexpected: ${err}`),
    );
    expect(load).toContain('pg_restore --clean --if-exists --no-owner --dbname="$DATABASE_URL" /backups/toolport.dump');
    expect(load).not.toContain('hunter2');
    expect(existsSync('/backups/toolport.dump')).toBe(false);
  });
});
