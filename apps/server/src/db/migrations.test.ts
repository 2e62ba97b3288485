import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { NO_MIGRATIONS, sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD, createPgDatabase, engines } from '../../test/harness.js';
import { buildApp } from '../app.js';
import { loadConfig } from '../config.js';
import { createLogger } from '../infra/logger.js';
import { type DbHandle, type Engine, migrateToLatest, migrationsApplied, migrator, openDatabase } from './db.js';
import { migrations } from './migrations/index.js';
import type { Database } from './schema.js';

/** Every table of schema.ts; adding a table there without adding it here is a type error. */
const schemaTables = {
  users: true,
  provider_identities: true,
  refresh_tokens: true,
  options: true,
  services: true,
  service_user_envs: true,
  service_user_switches: true,
  install_tasks: true,
  install_task_logs: true,
  request_records: true,
  daily_counters: true,
  meter_batches: true,
  meter_contributions: true,
  service_logs: true,
  revoked_sessions: true,
  oauth_states: true,
  request_rollups: true,
  service_day_rollups: true,
  upstream_oauth_services: true,
  upstream_oauth_tokens: true,
  upstream_oauth_states: true,
  oauth_server_clients: true,
  oauth_server_requests: true,
  oauth_server_grants: true,
  oauth_server_codes: true,
  oauth_server_refresh_tokens: true,
  tool_overrides: true,
  access_lists: true,
  access_users: true,
  groups: true,
  group_members: true,
  tool_embeddings: true,
  audit_entries: true,
  held_identities: true,
} satisfies Record<keyof Database, true>;

/** A fresh, empty database of one engine, and a way to throw it away. */
async function emptyDatabase(engine: Engine): Promise<{ handle: DbHandle; dispose: () => Promise<void> }> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'toolport-migrate-'));
  const pgDb = engine === 'postgres' ? await createPgDatabase() : undefined;
  const handle = openDatabase({ databaseUrl: pgDb?.url, dataDir });
  return {
    handle,
    dispose: async () => {
      await handle.db.destroy();
      await pgDb?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

const tableNames = async (handle: DbHandle) => (await handle.db.introspection.getTables()).map((t) => t.name);

describe.each(engines)('migrations on %s', (engine) => {
  let dispose: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await dispose?.();
    dispose = undefined;
  });

  it('build every table of the schema from an empty database, then apply nothing on a second run', async () => {
    const empty = await emptyDatabase(engine);
    dispose = empty.dispose;
    const { db } = empty.handle;
    expect(await tableNames(empty.handle)).toEqual([]);
    expect(await migrationsApplied(db)).toBe(false);

    expect(await migrateToLatest(db)).toEqual(Object.keys(migrations));
    expect(await tableNames(empty.handle)).toEqual(expect.arrayContaining(Object.keys(schemaTables)));
    expect(await migrationsApplied(db)).toBe(true);

    expect(await migrateToLatest(db)).toEqual([]);
  });

  it('roll all the way back to an empty schema and forward again', async () => {
    const empty = await emptyDatabase(engine);
    dispose = empty.dispose;
    const { db } = empty.handle;
    await migrateToLatest(db);
    const { error } = await migrator(db).migrateTo(NO_MIGRATIONS);
    expect(error).toBeUndefined();
    const left = (await tableNames(empty.handle)).filter((name) => !name.startsWith('kysely_'));
    expect(left).toEqual([]);
    expect(await migrateToLatest(db)).toEqual(Object.keys(migrations));
  });
});

describe('two apps starting at once on one SQLite DATA_DIR', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'toolport-twin-'));
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('both come up, sharing one migrated database with one root', async () => {
    const config = loadConfig({ DATA_DIR: dataDir, ADMIN_PASSWORD, LOG_LEVEL: 'silent' });
    const handles = [openDatabase(config), openDatabase(config)];
    const logger = createLogger('silent');
    try {
      const apps = await Promise.all(handles.map((database) => buildApp({ config, database, logger, print: () => undefined })));
      for (const { app } of apps) {
        await app.ready();
        expect((await app.inject({ method: 'GET', url: '/api/ready' })).statusCode).toBe(200);
      }
      const [first] = handles;
      const roots = await first?.db.selectFrom('users').select('username').execute();
      expect(roots).toEqual([{ username: 'root' }]);
      const applied = first && (await sql<{ name: string }>`select name from kysely_migration order by name`.execute(first.db));
      expect(applied?.rows.map((r) => r.name)).toEqual(Object.keys(migrations).sort());
      await Promise.all(apps.map(({ app }) => app.close()));
    } finally {
      await Promise.all(handles.map((h) => h.db.destroy()));
    }
  });
});
