import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { type Db, type DbHandle, migrateToLatest, openDatabase, openExclusiveDatabase } from '../db/db.js';
import { ConfigEvents } from '../infra/events.js';
import { type RemoteAddresses, remoteAddresses } from '../infra/outbound.js';
import { type Secrets, type StoredMasterSecret, storedMasterSecret } from '../infra/secrets.js';
import { Lifecycle } from '../lifecycle.js';
import { createOptionsModule, type OptionsModule } from '../modules/options/index.js';
import { openRuntime, readEnvironment } from '../runtime.js';
import { openSecrets } from '../secrets-rotation/start-check.js';

/**
 * What the server and every command that reads the configured database are built on (docs/decisions/0062):
 * the configuration, the logger, the migrated database, the secrets known to open what it stores, the
 * configuration events, the stored preferences, and the address rule of remote URLs, all registered on one
 * lifecycle. The server builds the rest on top (build/server-parts.ts, build/http-server.ts).
 */
export interface Core {
  config: Config;
  logger: Logger;
  database: DbHandle;
  db: Db;
  secrets: Secrets;
  events: ConfigEvents;
  /** The stored preferences (modules/options), loaded. */
  options: OptionsModule;
  /** Remote service URLs and their redirects, under the preference AllowPrivateNetworkUpstreams (infra/outbound.ts). */
  remote: RemoteAddresses;
  lifecycle: Lifecycle;
}

export interface CoreOptions {
  config: Config;
  logger: Logger;
  database: DbHandle;
  /** The lifecycle closes the database last (the server and the commands); a test that opened it closes it itself. */
  ownsDatabase?: boolean;
  /** Bound of one part's close (the server's: SHUTDOWN_GRACE_MS and its margin for the parts that drain). */
  closeTimeoutMs?: number;
}

export async function buildCore(opts: CoreOptions): Promise<Core> {
  const { config, logger, database } = opts;
  const { db } = database;
  const lifecycle = new Lifecycle({ logger, closeTimeoutMs: opts.closeTimeoutMs });
  if (opts.ownsDatabase) lifecycle.add({ name: 'database', close: () => db.destroy() });
  try {
    await migrateToLatest(db);
    const events = new ConfigEvents();
    const secrets = await openSecrets(db, config, database.describe);
    const options = createOptionsModule({ db, secrets, events });
    lifecycle.add({ name: 'options', close: () => options.close() });
    await options.service.load();
    // Read at every request: a change of the preference applies to the next connection without a restart.
    const remote = remoteAddresses(() => options.service.bool('AllowPrivateNetworkUpstreams'));
    return { config, logger, database, db, secrets, events, options, remote, lifecycle };
  } catch (err) {
    await lifecycle.close();
    throw err;
  }
}

/**
 * The core of a command (`toolport import`, `export`, `user`, `history`, `migrate`): the environment read
 * as the server reads it, the database opened and owned by the lifecycle, which the command closes at the end.
 */
export async function openCore(env: NodeJS.ProcessEnv = process.env): Promise<Core> {
  const rt = await openRuntime(env);
  return buildCore({ ...rt, ownsDatabase: true });
}

/** Runs `work` on a command's core and closes it through its lifecycle, whatever `work` does. */
export async function withCore<T>(env: NodeJS.ProcessEnv | undefined, work: (core: Core) => Promise<T>): Promise<T> {
  const core = await openCore(env ?? process.env);
  try {
    return await work(core);
  } finally {
    await core.lifecycle.close();
  }
}

/**
 * The core of the commands that work on the database file or must refuse a running server (`toolport backup`,
 * `restore`, `rotate-secret`): the configuration and logger read as the server reads them and the lifecycle,
 * with neither DATA_DIR prepared nor the database opened, migrated or its secrets checked up front, which would
 * hide what they check (docs/decisions/0062). They open what they need when they need it; the lifecycle closes it.
 */
export interface CommandCore {
  config: Config;
  logger: Logger;
  lifecycle: Lifecycle;
  /** The master secret as the server would read it (SECRET_KEY, else DATA_DIR/secret.key), never generated. */
  storedSecret(): StoredMasterSecret | undefined;
  /**
   * Opens the configured database as it is (not migrated), registered on the lifecycle. `shared`: as the
   * server opens it, beside a running one (an audit entry). `exclusive`: on one connection nothing else uses
   * meanwhile (db/db.ts openExclusiveDatabase; a DatabaseOpenError when the file is missing or cannot be opened).
   */
  openDatabase(mode: 'shared' | 'exclusive'): DbHandle;
}

export function openCommandCore(env: NodeJS.ProcessEnv = process.env): CommandCore {
  const { config, logger } = readEnvironment(env);
  const lifecycle = new Lifecycle({ logger });
  return {
    config,
    logger,
    lifecycle,
    storedSecret: () => storedMasterSecret(config.secretKey, config.dataDir),
    openDatabase(mode) {
      const database = mode === 'exclusive' ? openExclusiveDatabase(config) : openDatabase(config);
      lifecycle.add({ name: `database (${mode})`, close: () => database.db.destroy() });
      return database;
    },
  };
}

/** Runs `work` on a command core and closes what it opened through its lifecycle, whatever `work` does. */
export async function withCommandCore<T>(env: NodeJS.ProcessEnv | undefined, work: (core: CommandCore) => Promise<T>): Promise<T> {
  const core = openCommandCore(env ?? process.env);
  try {
    return await work(core);
  } finally {
    await core.lifecycle.close();
  }
}
