import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { type Kysely, sql } from 'kysely';
import { type CommandCore, withCommandCore } from '../build/core.js';
import { CliCommandError, CliUsageError, parseCommand } from '../cli/args.js';
import { DatabaseOpenError, type DbHandle } from '../db/db.js';
import { migrations } from '../db/migrations/index.js';
import type { Database } from '../db/schema.js';
import { Secrets, type StoredMasterSecret } from '../infra/secrets.js';
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
/** How long PostgreSQL connections of replicas that were just stopped may take to go away. */
const CONNECTIONS_GONE_MS = 3000;

function currentKey(core: CommandCore): StoredMasterSecret {
  const stored = core.storedSecret();
  if (!stored) {
    const file = path.join(core.config.dataDir, KEY_FILE);
    throw new CliCommandError(
      `there is no key to rotate: SECRET_KEY is not set and ${file} does not exist (check DATA_DIR; the server generates the file at its first start)`,
    );
  }
  if (!stored.secret) throw new CliCommandError(`${stored.file} is empty: it is not the key this installation was started with`);
  return stored;
}

function newKey(env: NodeJS.ProcessEnv, current: StoredMasterSecret): { secret: string; generated: boolean } {
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

/**
 * The database on the core's one exclusive connection (db/db.ts openExclusiveDatabase): nothing else uses it
 * meanwhile (SQLite) or can write to it (PostgreSQL).
 */
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

function openStore(core: CommandCore, ignoreConnections: boolean): Store {
  let database: DbHandle;
  try {
    database = core.openDatabase('exclusive');
  } catch (err) {
    if (err instanceof DatabaseOpenError) throw new CliCommandError(err.message);
    throw err;
  }
  return database.engine === 'postgres' ? postgresStore(database, ignoreConnections) : sqliteStore(database);
}

function sqliteStore({ db, describe: file }: DbHandle): Store {
  return {
    db,
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

function postgresStore({ db, describe }: DbHandle, ignoreConnections: boolean): Store {
  const others = async (conn: Kysely<Database>) => {
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
      where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend'`.execute(conn);
    return rows[0]?.n ?? 0;
  };
  return {
    db,
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
  await withCommandCore(env, (core) => rotate(core, env, print, values['ignore-connections'] === true, io.hooks));
}

/**
 * The rotation on a command core (build/core.ts): the keys as the server reads them, and the database on the
 * core's exclusive connection, which is held until the key file is in place and the free space scrubbed, and
 * closed by the core's lifecycle.
 */
async function rotate(
  core: CommandCore,
  env: NodeJS.ProcessEnv,
  print: (line: string) => void,
  ignoreConnections: boolean,
  hooks: RotationHooks | undefined,
): Promise<void> {
  const { config } = core;
  const current = currentKey(core);
  const next = newKey(env, current);
  const from = new Secrets(current.secret);
  const to = new Secrets(next.secret);

  const store = openStore(core, ignoreConnections);
  let staged: string | undefined;
  let counts: Awaited<ReturnType<typeof reencryptAll>> = [];
  try {
    await store.db.connection().execute(async (conn) => {
      try {
        await store.begin(conn);
        counts = await reencryptAll(conn, from, to, hooks);
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
  if (store.scrub) {
    try {
      await store.db.connection().execute(async (conn) => store.scrub?.(conn));
    } catch (err) {
      print(
        `Warning: the replaced values could not be cleared from the free space of ${store.describe} (${errorText(err)}); run VACUUM on it with the server stopped.`,
      );
    }
  }
  print(
    'Tokens signed with the old key no longer verify: console access tokens (the console renews them from its refresh token; users whose refresh token has expired sign in again) and gateway session ids (MCP clients reconnect and initialise a new session).',
  );
  print('Backups made before this rotation still need the old key.');
}
