import { chmodSync, closeSync, copyFileSync, existsSync, fsyncSync, openSync, readSync, renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';

/**
 * Backup and restore of the SQLite database (docs/decisions/0013-backups-and-shutdown.md). A backup is one
 * self-contained SQLite file made with `VACUUM INTO`: a single read transaction, so it is a consistent
 * snapshot while the server keeps writing, and it never has to start over the way the page-copying
 * backup API does when another process writes. A restore checks the file first and only then swaps
 * it in with a rename.
 */

export const DB_FILE = 'toolport.db';
/** The tables every Toolport database has since its first migration. */
const CORE_TABLES = ['kysely_migration', 'users', 'services', 'options', 'daily_counters', 'request_records'];
const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');
/** Busy time a backup waits for the server's write lock at most (VACUUM INTO only reads). */
const BUSY_TIMEOUT_MS = 10_000;

/** A problem the operator can act on; the message says what and what to do. */
export class BackupError extends Error {}

export interface DatabaseSummary {
  /** Applied migrations, oldest first. */
  migrations: string[];
  users: number;
  services: number;
  requestRecords: number;
  bytes: number;
  /** One encrypted value of the database, to check a secret key against (none in an empty one). */
  sealedSample: string | undefined;
  /** Where the services installed from npm or PyPI have their files (not part of a backup). */
  installDirs: string[];
}

const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err));

function fsyncPath(file: string): void {
  const fd = openSync(file, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function hasSqliteHeader(file: string): boolean {
  const fd = openSync(file, 'r');
  try {
    const head = Buffer.alloc(SQLITE_HEADER.length);
    return readSync(fd, head, 0, head.length, 0) === head.length && head.equals(SQLITE_HEADER);
  } finally {
    closeSync(fd);
  }
}

/**
 * Checks that `file` is an undamaged Toolport database whose migrations this version knows (an
 * older level is fine: the server migrates it at start) and summarises it.
 */
export function inspectDatabase(file: string, knownMigrations: string[]): DatabaseSummary {
  const stat = statSync(file, { throwIfNoEntry: false });
  if (!stat) throw new BackupError(`${file} does not exist`);
  if (!stat.isFile()) throw new BackupError(`${file} is not a file`);
  if (!hasSqliteHeader(file)) throw new BackupError(`${file} is not an SQLite database`);
  let db: SQLite.Database;
  try {
    db = new SQLite(file, { readonly: true, fileMustExist: true });
  } catch (err) {
    throw new BackupError(`${file} cannot be opened as an SQLite database (${errorText(err)})`);
  }
  try {
    const check = db.pragma('quick_check', { simple: false }) as { quick_check: string }[];
    if (check[0]?.quick_check !== 'ok') throw new BackupError(`${file} is damaged: ${check[0]?.quick_check ?? 'integrity check failed'}`);
    const tables = new Set((db.prepare("select name from sqlite_master where type = 'table'").pluck().all() as string[]) ?? []);
    const missing = CORE_TABLES.filter((t) => !tables.has(t));
    if (missing.length > 0) throw new BackupError(`${file} is an SQLite database but not a Toolport one (no ${missing.join(', ')} table)`);
    const migrations = db.prepare('select name from kysely_migration order by name').pluck().all() as string[];
    if (migrations.length === 0) throw new BackupError(`${file} is an SQLite database but not a Toolport one (no migration applied)`);
    const unknown = migrations.filter((m) => !knownMigrations.includes(m));
    if (unknown.length > 0) {
      throw new BackupError(
        `${file} was made by a newer Toolport (migration ${unknown.join(', ')} is unknown to this version): upgrade Toolport, then restore`,
      );
    }
    const count = (table: string) => Number(db.prepare(`select count(*) from ${table}`).pluck().get());
    const sealedSample = db.prepare("select api_key_enc from users where api_key_enc <> '' limit 1").pluck().get() as string | undefined;
    return {
      migrations,
      users: count('users'),
      services: count('services'),
      requestRecords: count('request_records'),
      bytes: stat.size,
      sealedSample,
      installDirs: db.prepare("select install_dir from services where install_dir <> ''").pluck().all() as string[],
    };
  } catch (err) {
    if (err instanceof BackupError) throw err;
    throw new BackupError(`${file} cannot be read as a Toolport database (${errorText(err)})`);
  } finally {
    db.close();
  }
}

/**
 * Writes a consistent snapshot of the live database `source` to `target`, through a temporary file
 * beside it that is checked and then renamed: `target` is either the old file or the whole new one.
 * The server may keep running and writing meanwhile.
 */
export function backupDatabase(source: string, target: string, knownMigrations: string[]): DatabaseSummary {
  if (!existsSync(source)) throw new BackupError(`there is no database at ${source}: check DATA_DIR`);
  const resolved = path.resolve(target);
  if ([source, `${source}-wal`, `${source}-shm`, `${source}-journal`].includes(resolved)) {
    throw new BackupError(`${target} is the live database itself: choose another file`);
  }
  const dir = path.dirname(resolved);
  if (!statSync(dir, { throwIfNoEntry: false })?.isDirectory()) throw new BackupError(`the directory ${dir} does not exist`);
  if (statSync(resolved, { throwIfNoEntry: false })?.isDirectory()) throw new BackupError(`${target} is a directory: give a file name`);

  const partial = `${resolved}.partial-${process.pid}`;
  rmSync(partial, { force: true });
  try {
    let db: SQLite.Database;
    try {
      db = new SQLite(source, { fileMustExist: true });
    } catch (err) {
      throw new BackupError(`cannot open ${source} (${errorText(err)})`);
    }
    try {
      db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
      db.prepare('VACUUM INTO ?').run(partial);
    } catch (err) {
      throw new BackupError(`the backup of ${source} failed (${errorText(err)})`);
    } finally {
      db.close();
    }
    // Password hashes, API key hashes and encrypted values: for the owner only, like the database.
    chmodSync(partial, 0o600);
    const summary = inspectDatabase(partial, knownMigrations);
    fsyncPath(partial);
    renameSync(partial, resolved);
    fsyncPath(dir);
    return { ...summary, bytes: statSync(resolved).size };
  } finally {
    rmSync(partial, { force: true });
  }
}

/**
 * True when another connection has the database open: a running server (or another toolport
 * command). SQLite's own file locks tell, so a server that crashed leaves nothing behind that could
 * be mistaken for a running one. Closing the probe folds a leftover write-ahead log into the file.
 */
export function databaseInUse(file: string): boolean {
  if (!existsSync(file)) return false;
  let db: SQLite.Database | undefined;
  try {
    db = new SQLite(file, { fileMustExist: true });
    db.pragma('busy_timeout = 0');
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE');
    db.exec('COMMIT');
    return false;
  } catch (err) {
    // Busy or locked: someone holds it. Anything else (a damaged file) is replaced anyway.
    const code = (err as { code?: string }).code ?? '';
    return code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED');
  } finally {
    db?.close();
  }
}

/**
 * Puts a copy of `backup` in place of `DATA_DIR/toolport.db`. The copy is written beside the live
 * file and renamed over it; the database it replaces is kept (with any write-ahead log of its own)
 * under a `.before-restore-<time>` name, which is returned.
 */
export function replaceDatabase(dataDir: string, backup: string, now = new Date()): string | undefined {
  const live = path.join(dataDir, DB_FILE);
  const incoming = path.join(dataDir, `.${DB_FILE}.restore-${process.pid}`);
  rmSync(incoming, { force: true });
  try {
    copyFileSync(backup, incoming);
    fsyncPath(incoming);
    let keptAs: string | undefined;
    if (existsSync(live)) {
      keptAs = `${live}.before-restore-${now.toISOString().replace(/[:.]/g, '-')}`;
      renameSync(live, keptAs);
    }
    // A log left beside the old file would be replayed into the restored one: it goes with the old file.
    for (const suffix of ['-wal', '-shm', '-journal']) {
      if (!existsSync(`${live}${suffix}`)) continue;
      if (keptAs) renameSync(`${live}${suffix}`, `${keptAs}${suffix}`);
      else rmSync(`${live}${suffix}`, { force: true });
    }
    renameSync(incoming, live);
    fsyncPath(dataDir);
    return keptAs;
  } finally {
    rmSync(incoming, { force: true });
  }
}
