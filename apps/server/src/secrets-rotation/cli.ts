import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import { CliCommandError, CliUsageError, parseCommand } from '../cli/args.js';
import { type Config, loadConfig } from '../config.js';
import { migrations } from '../db/migrations/index.js';
import type { Database } from '../db/schema.js';
import { Secrets } from '../infra/secrets.js';
import { createCommandAudit } from '../modules/audit/index.js';
import { describeCounts, RotationError, type RotationHooks, reencryptAll, SEALED_COLUMNS } from './rotate.js';

/**
 * `toolport rotate-secret` (docs/operations.md, "Secrets and rotation"): every encrypted value is
 * re-encrypted under a new master secret in one transaction, checked, and only then committed. The
 * new key comes from NEW_SECRET_KEY, or, when the current one is the generated DATA_DIR/secret.key,
 * is generated into that file. No key is ever printed.
 */
export interface RotateCommandIo {
  /** The environment the configuration is read from (tests pass their own). */
  env?: NodeJS.ProcessEnv;
  print?: (line: string) => void;
  /** Tests only: a failure made in the middle of the transaction. */
  hooks?: RotationHooks;
}

const KEY_FILE = 'secret.key';
const DB_FILE = 'toolport.db';
/** How long PostgreSQL connections of replicas that were just stopped may take to go away. */
const CONNECTIONS_GONE_MS = 3000;

interface CurrentKey {
  secret: string;
  /** DATA_DIR/secret.key when the key is the generated file; undefined when it is SECRET_KEY. */
  file: string | undefined;
}

function currentKey(config: Config): CurrentKey {
  if (config.secretKey) return { secret: config.secretKey, file: undefined };
  const file = path.join(config.dataDir, KEY_FILE);
  if (!existsSync(file)) {
    throw new CliCommandError(
      `there is no key to rotate: SECRET_KEY is not set and ${file} does not exist (check DATA_DIR; the server generates the file at its first start)`,
    );
  }
  const secret = readFileSync(file, 'utf8').trim();
  if (!secret) throw new CliCommandError(`${file} is empty: it is not the key this installation was started with`);
  return { secret, file };
}

function newKey(env: NodeJS.ProcessEnv, current: CurrentKey): { secret: string; generated: boolean } {
  const given = env.NEW_SECRET_KEY;
  if (given) {
    if (given.length < 32) throw new CliCommandError('NEW_SECRET_KEY: must be at least 32 characters');
    if (given !== given.trim()) throw new CliCommandError('NEW_SECRET_KEY: must not begin or end with white space');
    if (given === current.secret) throw new CliCommandError('NEW_SECRET_KEY is the current key: give a new one');
    return { secret: given, generated: false };
  }
  if (!current.file) {
    throw new CliCommandError(
      'SECRET_KEY is set, so the new key must be given too: run again with NEW_SECRET_KEY set to it (for example NEW_SECRET_KEY="$(openssl rand -base64 48)"), then set SECRET_KEY to that value on every replica',
    );
  }
  return { secret: randomBytes(48).toString('base64url'), generated: true };
}

function fsyncPath(file: string): void {
  const fd = openSync(file, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** The new key file, written and synced beside the old one before the commit; renamed over it after. */
function stageKeyFile(file: string, secret: string): string {
  const staged = `${file}.rotate-${process.pid}`;
  writeFileSync(staged, `${secret}\n`, { mode: 0o600, flag: 'w' });
  fsyncPath(staged);
  return staged;
}

const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err));
const codeOf = (err: unknown): string => String((err as { code?: unknown }).code ?? '');

/** The database on one connection, opened so that nothing else uses it meanwhile (SQLite) or can write to it (PostgreSQL). */
interface Store {
  db: Kysely<Database>;
  describe: string;
  /** Opens the transaction on a database of this version's schema; refuses when a server has the database. */
  begin(conn: Kysely<Database>): Promise<void>;
  /**
   * After the commit: drops what the old key still opens from the file's free space (SQLite keeps the
   * bytes of replaced rows in free pages and in the WAL until these are rewritten).
   */
  scrub?(conn: Kysely<Database>): Promise<void>;
}

function sqliteStore(config: Config): Store {
  const file = path.join(config.dataDir, DB_FILE);
  if (!existsSync(file)) throw new CliCommandError(`there is no database at ${file}: check DATA_DIR`);
  let handle: SQLite.Database;
  try {
    handle = new SQLite(file, { fileMustExist: true });
    // No waiting: a server holding the file is a refusal, not something to wait for. In exclusive
    // locking mode the lock taken is kept until the connection closes, and a server's open
    // connection (it keeps a shared lock in WAL mode) makes taking it fail.
    handle.pragma('busy_timeout = 0');
    handle.pragma('locking_mode = EXCLUSIVE');
  } catch (err) {
    throw new CliCommandError(`cannot open ${file} (${errorText(err)})`);
  }
  return {
    db: new Kysely<Database>({ dialect: new SqliteDialect({ database: handle }) }),
    describe: file,
    async begin(conn) {
      try {
        await sql`begin exclusive`.execute(conn);
      } catch (err) {
        if (codeOf(err).startsWith('SQLITE_BUSY') || codeOf(err).startsWith('SQLITE_LOCKED')) {
          throw new CliCommandError(
            `a Toolport server (or another toolport command) is using ${file}: stop it, then run rotate-secret again`,
          );
        }
        throw err;
      }
      await checkSchema(conn);
    },
    async scrub(conn) {
      await sql`vacuum`.execute(conn);
      await sql`pragma wal_checkpoint(truncate)`.execute(conn);
    },
  };
}

function postgresStore(config: Config, ignoreConnections: boolean): Store {
  const url = new URL(config.databaseUrl as string);
  const pool = new pg.Pool({ connectionString: config.databaseUrl, max: 1, connectionTimeoutMillis: 5000 });
  pool.on('error', () => undefined);
  const describe = `postgres://${url.host}${url.pathname}`;
  const others = async (conn: Kysely<Database>) => {
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
      where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend'`.execute(conn);
    return rows[0]?.n ?? 0;
  };
  return {
    db: new Kysely<Database>({ dialect: new PostgresDialect({ pool }) }),
    describe,
    async begin(conn) {
      if (!ignoreConnections) {
        let count = await others(conn);
        for (const until = Date.now() + CONNECTIONS_GONE_MS; count > 0 && Date.now() < until; count = await others(conn)) {
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
        if (count > 0) {
          throw new CliCommandError(
            `${count} other connections to ${describe} are open: stop every Toolport replica first (one still running would keep using the old key). If they are not Toolport's (a connection pooler, psql), run again with --ignore-connections`,
          );
        }
      }
      await checkSchema(conn);
      await sql`begin`.execute(conn);
      // Writes wait until the commit; reads go on. A replica must not be running anyway.
      await sql`set local lock_timeout = '10s'`.execute(conn);
      const tables = [...new Set(SEALED_COLUMNS.map((c) => c.table))];
      await sql`lock table ${sql.join(tables.map((t) => sql.table(t)))} in exclusive mode`.execute(conn);
    },
  };
}

/** Refuses a database whose schema is not this version's: older (migrate first) or newer (upgrade first). */
async function checkSchema(conn: Kysely<Database>): Promise<void> {
  const known = Object.keys(migrations);
  let applied: string[];
  try {
    const { rows } = await sql<{ name: string }>`select name from kysely_migration`.execute(conn);
    applied = rows.map((r) => r.name);
  } catch {
    throw new CliCommandError('the database has no Toolport schema: check DATA_DIR / DATABASE_URL');
  }
  const unknown = applied.filter((m) => !known.includes(m));
  if (unknown.length > 0)
    throw new CliCommandError(`the database was migrated by a newer Toolport (${unknown.join(', ')}): use that version`);
  const pending = known.filter((m) => !applied.includes(m));
  if (pending.length > 0)
    throw new CliCommandError('the database is not migrated to this version: run `toolport migrate` first, then rotate');
}

export async function runRotateSecretCommand(args: string[], io: RotateCommandIo = {}): Promise<void> {
  const { values, positionals } = parseCommand(args, { 'ignore-connections': { type: 'boolean', default: false } });
  if (positionals.length > 0) throw new CliUsageError('expected: toolport rotate-secret [--ignore-connections]');
  const env = io.env ?? process.env;
  const print = io.print ?? ((line: string) => process.stdout.write(`${line}\n`));
  const config = loadConfig(env);
  const current = currentKey(config);
  const next = newKey(env, current);
  const from = new Secrets(current.secret);
  const to = new Secrets(next.secret);

  const store = config.databaseUrl ? postgresStore(config, values['ignore-connections'] === true) : sqliteStore(config);
  let staged: string | undefined;
  let counts: Awaited<ReturnType<typeof reencryptAll>> = [];
  try {
    await store.db.connection().execute(async (conn) => {
      try {
        await store.begin(conn);
        counts = await reencryptAll(conn, from, to, io.hooks);
        // In the same transaction: the rotation and its audit entry are committed together.
        await createCommandAudit(conn).command({
          command: 'toolport rotate-secret',
          action: 'rotate',
          object: 'secret',
          changes: { reencrypted: counts, new_key_from: next.generated ? 'generated' : 'NEW_SECRET_KEY' },
        });
        if (current.file) staged = stageKeyFile(current.file, next.secret);
        await sql`commit`.execute(conn);
      } catch (err) {
        await sql`rollback`.execute(conn).catch(() => undefined);
        throw err;
      }
    });
  } catch (err) {
    if (staged) rmSync(staged, { force: true });
    if (err instanceof RotationError) throw new CliCommandError(err.message);
    if (err instanceof CliCommandError) throw err;
    throw new CliCommandError(`rotation failed, nothing was changed: ${errorText(err)}`);
  } finally {
    await store.db.destroy().catch(() => undefined);
  }

  print(`Re-encrypted with the new key in ${store.describe}: ${describeCounts(counts)}.`);
  if (current.file && staged) {
    try {
      renameSync(staged, current.file);
      fsyncPath(path.dirname(current.file));
    } catch (err) {
      throw new CliCommandError(
        `the database now uses the new key, but it could not be put in ${current.file} (${errorText(err)}): move ${staged} to ${current.file} before starting the server`,
      );
    }
    print(`The new key ${next.generated ? 'was generated into' : 'from NEW_SECRET_KEY was written to'} ${current.file} (mode 600).`);
    if (config.databaseUrl) print('Copy that file to every replica (or set SECRET_KEY to its content there) before starting them.');
  } else {
    print('Now set SECRET_KEY to the value of NEW_SECRET_KEY wherever the server runs (every replica), then start it.');
  }
  // Committed and the key in place: a failure from here on must not read as "nothing was changed".
  if (!config.databaseUrl) {
    let scrubbing: Store | undefined;
    try {
      const opened = sqliteStore(config);
      scrubbing = opened;
      await opened.db.connection().execute(async (conn) => opened.scrub?.(conn));
    } catch (err) {
      print(
        `Warning: the replaced values could not be cleared from the free space of ${store.describe} (${errorText(err)}); run VACUUM on it with the server stopped.`,
      );
    } finally {
      await scrubbing?.db.destroy().catch(() => undefined);
    }
  }
  print(
    'Tokens signed with the old key no longer verify: console access tokens (the console renews them from its refresh token; users whose refresh token has expired sign in again) and gateway session ids (MCP clients reconnect and initialise a new session).',
  );
  print('Backups made before this rotation still need the old key.');
}
