import { sql } from 'kysely';
import type { Logger } from 'pino';
import { type Config, ConfigError, loadConfig, prepareDataDir, StartRefused } from './config.js';
import { type DbHandle, openDatabase } from './db/db.js';
import { createLogger, logDestination } from './infra/logger.js';

/** What every CLI command starts from: a valid configuration, a writable DATA_DIR, a reachable database. */
export interface Runtime {
  config: Config;
  logger: Logger;
  database: DbHandle;
}

/** The configuration and the logger, read from the environment as the server reads them. */
export function readEnvironment(env: NodeJS.ProcessEnv = process.env): Pick<Runtime, 'config' | 'logger'> {
  const config = loadConfig(env);
  return { config, logger: createLogger(config.logLevel, logDestination(config.logFormat)) };
}

export async function openRuntime(env: NodeJS.ProcessEnv = process.env): Promise<Runtime> {
  const { config, logger } = readEnvironment(env);
  prepareDataDir(config.dataDir);
  const database = openDatabase(config);
  try {
    await sql`select 1`.execute(database.db);
  } catch (err) {
    await database.db.destroy().catch(() => undefined);
    const reason = err instanceof Error ? err.message || (err as NodeJS.ErrnoException).code || err.name : String(err);
    throw new ConfigError([`DATABASE_URL: cannot connect to ${database.describe} (${reason})`]);
  }
  return { config, logger, database };
}

/** Prints a configuration problem plainly and exits 1; anything else keeps its stack for the operator. */
export function exitOnStartupError(err: unknown): never {
  if (err instanceof ConfigError || err instanceof StartRefused) {
    process.stderr.write(`toolport: ${err.message}\n`);
  } else {
    process.stderr.write(`toolport: failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  }
  process.exit(1);
}
