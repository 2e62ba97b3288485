import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { type CommandCore, withCommandCore } from '../build/core.js';
import { CliCommandError, CliUsageError, parseCommand } from '../cli/args.js';
import { prepareDataDir } from '../config.js';
import { migrations } from '../db/migrations/index.js';
import { resolveInstallDir } from '../infra/install-dir.js';
import { Secrets } from '../infra/secrets.js';
import { recordCommandIn } from '../modules/audit/index.js';
import { BackupError, backupDatabase, type DatabaseSummary, DB_FILE, databaseInUse, inspectDatabase, replaceDatabase } from './sqlite.js';

/**
 * `toolport backup <file>` and `toolport restore <file>` (docs/operations.md, "Backups"). Both read
 * the environment like the server, on a command core (build/core.ts): the file is copied by its own
 * connection (backup/sqlite.ts), the database is opened through the core only for the audit entry, after the
 * copy, and closed by its lifecycle; neither starts the server. With PostgreSQL they explain the pg_dump and
 * pg_restore commands instead and exit 1, since nothing was backed up or restored.
 */
export interface BackupCommandIo {
  /** The environment the configuration is read from (tests pass their own). */
  env?: NodeJS.ProcessEnv;
  print?: (line: string) => void;
}

const KEY_FILE = 'secret.key';
/** Where a backup keeps the generated secret key it needs: beside it, with this suffix. */
export const keyFileOf = (backup: string): string => `${path.resolve(backup)}.${KEY_FILE}`;

const known = Object.keys(migrations);
const stamp = (now: Date) => now.toISOString().replace(/[:.]/g, '-');

function describe(summary: DatabaseSummary): string {
  const mb = (summary.bytes / 1024 / 1024).toFixed(1);
  return `${summary.users} users, ${summary.services} services, ${summary.requestRecords} request records, ${mb} MB, migration ${summary.migrations.at(-1)}`;
}

function fileArgument(args: string[], command: string): string {
  const { positionals } = parseCommand(args, {});
  const [file, ...extra] = positionals;
  if (!file || extra.length > 0) throw new CliUsageError(`expected: toolport ${command} <file>`);
  return file;
}

/** BackupError is the operator's to fix: exit 1 with its message. */
function operatorError<T>(work: () => T): T {
  try {
    return work();
  } catch (err) {
    if (err instanceof BackupError) throw new CliCommandError(err.message);
    throw err;
  }
}

/** Writes a small file readable by its owner only, through a temporary file and a rename. */
function writePrivate(file: string, content: Buffer | string): void {
  const partial = `${file}.partial-${process.pid}`;
  try {
    writeFileSync(partial, content, { mode: 0o600 });
    renameSync(partial, file);
  } finally {
    rmSync(partial, { force: true });
  }
}

const postgresBackup = (file: string) =>
  [
    'DATABASE_URL selects PostgreSQL, which `toolport backup` does not copy: back it up with pg_dump (it is consistent while',
    'the server runs), for example',
    `  pg_dump --format=custom --no-owner --file=${file} "$DATABASE_URL"`,
    'and keep SECRET_KEY with the dump: the encrypted values in it need it. See docs/operations.md, "Backups".',
  ].join('\n');

const postgresRestore = (file: string) =>
  [
    'DATABASE_URL selects PostgreSQL, which `toolport restore` does not write: stop every replica, then restore the dump',
    'with pg_restore, for example',
    `  pg_restore --clean --if-exists --no-owner --dbname="$DATABASE_URL" ${file}`,
    'and start the replicas with the SECRET_KEY of the installation the dump was made on. See docs/operations.md, "Backups".',
  ].join('\n');

export async function runBackupCommand(args: string[], io: BackupCommandIo = {}): Promise<void> {
  const file = fileArgument(args, 'backup');
  const print = io.print ?? ((line: string) => process.stdout.write(`${line}\n`));
  await withCommandCore(io.env, async (core) => {
    const { config } = core;
    if (config.databaseUrl) throw new CliCommandError(postgresBackup(file));

    const source = path.join(config.dataDir, DB_FILE);
    const summary = operatorError(() => backupDatabase(source, file, known));
    print(`Backed up ${source} to ${path.resolve(file)} (${describe(summary)})`);
    await recordCommandIn(core.openDatabase('shared').db, {
      command: 'toolport backup',
      action: 'backup',
      object: 'backup',
      id: path.resolve(file),
      changes: { file: path.resolve(file), contents: describe(summary) },
    });

    const keyFile = path.join(config.dataDir, KEY_FILE);
    if (config.secretKey) {
      print('SECRET_KEY comes from the environment: keep it with the backup, restore needs the same value.');
    } else if (existsSync(keyFile)) {
      writePrivate(keyFileOf(file), readFileSync(keyFile));
      print(`The generated secret key was copied to ${keyFileOf(file)}: restore needs it. Keep it as safe as the backup.`);
    }
  });
}

interface RestoreKey {
  secret: string;
  from: string;
  /** The backup's own key file, to become DATA_DIR/secret.key. */
  install?: Buffer;
}

/** The master secret the restored database will be read with, as the server will resolve it. */
function restoreKey(core: CommandCore, backup: string): RestoreKey | undefined {
  if (core.config.secretKey) return { secret: core.config.secretKey, from: 'SECRET_KEY' };
  const beside = keyFileOf(backup);
  if (existsSync(beside)) {
    const content = readFileSync(beside);
    return { secret: content.toString('utf8').trim(), from: beside, install: content };
  }
  const current = core.storedSecret();
  return current?.file ? { secret: current.secret, from: current.file } : undefined;
}

function checkKey(key: RestoreKey | undefined, summary: DatabaseSummary, backup: string): void {
  if (!summary.sealedSample) return;
  const wanted = `set SECRET_KEY to the backed-up installation's value, or put its secret.key beside the backup as ${keyFileOf(backup)}`;
  if (!key) throw new CliCommandError(`${backup} holds encrypted values and no secret key to read them was found: ${wanted}`);
  try {
    new Secrets(key.secret).decrypt(summary.sealedSample);
  } catch {
    throw new CliCommandError(`the secret key from ${key.from} does not decrypt ${backup}: ${wanted}`);
  }
}

/** Makes the backup's key DATA_DIR/secret.key; a different key found there is kept beside it. */
function installKey(dataDir: string, content: Buffer, now: Date): string | undefined {
  const target = path.join(dataDir, KEY_FILE);
  let keptAs: string | undefined;
  if (existsSync(target)) {
    if (readFileSync(target).equals(content)) return undefined;
    keptAs = `${target}.before-restore-${stamp(now)}`;
    renameSync(target, keptAs);
  }
  writePrivate(target, content);
  return keptAs;
}

export async function runRestoreCommand(args: string[], io: BackupCommandIo = {}): Promise<void> {
  const file = fileArgument(args, 'restore');
  const print = io.print ?? ((line: string) => process.stdout.write(`${line}\n`));
  await withCommandCore(io.env, (core) => restore(core, file, print));
}

async function restore(core: CommandCore, file: string, print: (line: string) => void): Promise<void> {
  const { config } = core;
  if (config.databaseUrl) throw new CliCommandError(postgresRestore(file));

  const backup = path.resolve(file);
  const live = path.join(config.dataDir, DB_FILE);
  if (backup === live) throw new CliCommandError(`${file} is the live database itself: give the backup file`);
  // Everything is checked before anything in DATA_DIR changes.
  const summary = operatorError(() => inspectDatabase(backup, known));
  const key = restoreKey(core, backup);
  checkKey(key, summary, backup);
  prepareDataDir(config.dataDir);
  if (databaseInUse(live)) {
    throw new CliCommandError(`a Toolport server (or another toolport command) is using ${live}: stop it, then run restore again`);
  }

  const now = new Date();
  const replaced = replaceDatabase(config.dataDir, backup, now);
  print(`Restored ${backup} to ${live} (${describe(summary)}); the server applies newer migrations when it starts.`);
  // Into the restored database, when it is recent enough to have the trail.
  await recordCommandIn(core.openDatabase('shared').db, {
    command: 'toolport restore',
    action: 'restore',
    object: 'backup',
    id: backup,
    changes: { file: backup, contents: describe(summary), replaced: replaced ?? '' },
  });
  if (replaced) print(`The database it replaced was kept as ${replaced}.`);
  const missing = summary.installDirs.map((dir) => resolveInstallDir(config.dataDir, dir)).filter((dir) => !existsSync(dir));
  if (missing.length > 0) {
    print(
      `${missing.length} installed services have no files here yet (${missing[0]}${missing.length > 1 ? ', …' : ''}): copy DATA_DIR/packages from the old installation, or install them again from the Market.`,
    );
  }
  if (key?.install) {
    const keptKey = installKey(config.dataDir, key.install, now);
    print(`The backup's secret key is now ${path.join(config.dataDir, KEY_FILE)}.`);
    if (keptKey) print(`The secret key it replaced was kept as ${keptKey}.`);
  }
}
