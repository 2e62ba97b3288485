import { existsSync } from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, type PostgresPool, type PostgresPoolClient, SqliteDialect } from 'kysely';
import pg from 'pg';
import { isPostgres } from './migrations/helpers.js';
import { migrations } from './migrations/index.js';
import type { Database } from './schema.js';

export type Engine = 'sqlite' | 'postgres';
export type Db = Kysely<Database>;

// BIGINT (20) and NUMERIC (1700, what SUM over BIGINT yields) come back as strings by default; every
// such column here is a millisecond time or a count well inside Number's exact range.
pg.types.setTypeParser(20, (v) => Number(v));
pg.types.setTypeParser(1700, (v) => Number(v));

export interface DbHandle {
  db: Db;
  engine: Engine;
  /** Describes the target without credentials, for logs and error messages. */
  describe: string;
}

export function openDatabase(opts: { databaseUrl?: string | undefined; dataDir: string }): DbHandle {
  if (opts.databaseUrl) {
    const url = new URL(opts.databaseUrl);
    const pool = new pg.Pool({
      connectionString: opts.databaseUrl,
      max: 10,
      // Bounds (decision 0043): a server that does not accept, or answers nothing (frozen, a dead link),
      // fails the query instead of holding it, and its pool slot, for ever.
      connectionTimeoutMillis: 5000,
      query_timeout: QUERY_TIMEOUT_MS,
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
    });
    // An idle client losing its server must not crash the process; the next query reconnects.
    pool.on('error', () => undefined);
    // Nor may a checked-out one between two statements (a transaction waiting on its caller, say): pg emits
    // 'error' on it then, and its next query fails with the same cause, which its caller handles.
    pool.on('connect', (client) => client.on('error', () => undefined));
    return {
      db: new Kysely<Database>({ dialect: new PostgresDialect({ pool: discardingTimedOut(pool) }) }),
      engine: 'postgres',
      describe: `postgres://${url.host}${url.pathname}`,
    };
  }
  const file = path.join(opts.dataDir, 'toolport.db');
  const sqlite = new SQLite(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('synchronous = NORMAL');
  return { db: new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) }), engine: 'sqlite', describe: file };
}

/** The configured database could not be opened for a command (the message says why and what to check). */
export class DatabaseOpenError extends Error {}

/**
 * The configured database on one connection that nothing else uses meanwhile, for the commands that must refuse
 * a running server (`toolport rotate-secret`): SQLite in exclusive locking mode without waiting (the lock, once
 * taken, is kept until the connection closes, and a server's open connection makes taking it fail), PostgreSQL
 * as a pool of one. Neither migrated nor created: a missing SQLite file is a DatabaseOpenError.
 */
export function openExclusiveDatabase(opts: { databaseUrl?: string | undefined; dataDir: string }): DbHandle {
  if (opts.databaseUrl) {
    const url = new URL(opts.databaseUrl);
    const pool = new pg.Pool({ connectionString: opts.databaseUrl, max: 1, connectionTimeoutMillis: 5000 });
    pool.on('error', () => undefined);
    return {
      db: new Kysely<Database>({ dialect: new PostgresDialect({ pool }) }),
      engine: 'postgres',
      describe: `postgres://${url.host}${url.pathname}`,
    };
  }
  const file = path.join(opts.dataDir, 'toolport.db');
  if (!existsSync(file)) throw new DatabaseOpenError(`there is no database at ${file}: check DATA_DIR`);
  let handle: SQLite.Database;
  try {
    handle = new SQLite(file, { fileMustExist: true });
    handle.pragma('busy_timeout = 0');
    handle.pragma('locking_mode = EXCLUSIVE');
  } catch (err) {
    throw new DatabaseOpenError(`cannot open ${file} (${err instanceof Error ? err.message : String(err)})`);
  }
  return { db: new Kysely<Database>({ dialect: new SqliteDialect({ database: handle }) }), engine: 'sqlite', describe: file };
}

/** A query with no answer for this long fails: longer than any query here takes on a live server (purges included). */
const QUERY_TIMEOUT_MS = 30_000;

/**
 * The pool as Kysely sees it, except that a connection whose query timed out is destroyed when
 * released instead of going back to the pool: its timed-out query may still be pending on it (a
 * frozen server), and whatever ran next on it would wait behind that.
 */
function discardingTimedOut(pool: pg.Pool): PostgresPool {
  return {
    async connect() {
      const client = await pool.connect();
      let broken = false;
      return {
        query: ((...args: Parameters<pg.PoolClient['query']>) =>
          (client.query as (...a: unknown[]) => Promise<unknown>)(...args).catch((err: Error) => {
            if (/query read timeout/i.test(err.message)) broken = true;
            throw err;
          })) as PostgresPoolClient['query'],
        release: () => client.release(broken),
      };
    },
    end: () => pool.end(),
  };
}

export function migrator(db: Db): Migrator {
  return new Migrator({ db, provider: { getMigrations: async () => migrations } });
}

const SQLITE_MIGRATION_ATTEMPTS = 5;

/**
 * Applies every pending migration and returns their names. On PostgreSQL Kysely serialises
 * concurrent migrators with an advisory lock. On SQLite its lock is a no-op, so a second migrator
 * on the same file (another process, or a second handle in this one) fails when the first wins
 * the race; its transaction rolled back, so once the winner is done there is nothing left to do,
 * and while the winner is still busy this one waits and tries again.
 */
export async function migrateToLatest(db: Db): Promise<string[]> {
  for (let attempt = 1; ; attempt++) {
    const { error, results } = await migrator(db).migrateToLatest();
    if (!error) return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
    if (isPostgres(db) || attempt >= SQLITE_MIGRATION_ATTEMPTS) throw error instanceof Error ? error : new Error(String(error));
    if (await migrationsApplied(db)) return [];
    await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
  }
}

/** True when every known migration has been applied: the readiness probe's second half. */
export async function migrationsApplied(db: Db): Promise<boolean> {
  const list = await migrator(db).getMigrations();
  return list.every((m) => m.executedAt !== undefined);
}
