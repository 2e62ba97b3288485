import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrations } from '../src/db/migrations/index.js';
import { type CliRun, ensureBuiltCli, exitOf, freePort, runCli, waitUntilReady } from './built-cli.js';
import { ADMIN_PASSWORD, createPgDatabase } from './harness.js';

/**
 * Two replicas started at the same moment on one fresh PostgreSQL database (a rolling deploy, a
 * compose file with `replicas: 2`): both migrate, both bootstrap the super admin, and the database
 * ends up exactly as if one had started alone.
 */
describe('two servers starting at once on one fresh PostgreSQL database', () => {
  let database: Awaited<ReturnType<typeof createPgDatabase>>;
  const dataDirs: string[] = [];
  const runs: CliRun[] = [];

  beforeAll(async () => {
    await ensureBuiltCli();
    database = await createPgDatabase();
  });
  afterAll(async () => {
    for (const run of runs) if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill('SIGKILL');
    await Promise.all(runs.map((r) => r.exited));
    await database?.drop();
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  });

  it('migrates once, creates one root, serves on both and stops cleanly on SIGTERM', async () => {
    const ports = [await freePort(), await freePort()];
    for (const port of ports) {
      const dataDir = mkdtempSync(path.join(tmpdir(), 'toolport-replica-'));
      dataDirs.push(dataDir);
      runs.push(
        runCli(['start'], {
          PORT: String(port),
          HOST: '127.0.0.1',
          DATA_DIR: dataDir,
          DATABASE_URL: database.url,
          SECRET_KEY: 'replica-shared-secret-key-0123456789abcdef',
          ADMIN_PASSWORD,
        }),
      );
    }
    await Promise.all(runs.map((run, i) => waitUntilReady(run, ports[i] ?? 0)));

    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const users = await client.query<{ username: string }>('select username from users');
      expect(users.rows).toEqual([{ username: 'root' }]);
      const applied = await client.query<{ name: string }>('select name from kysely_migration order by name');
      expect(applied.rows.map((r) => r.name)).toEqual(Object.keys(migrations).sort());
    } finally {
      await client.end();
    }

    // Either replica signs root in: they share the database and the secret.
    for (const port of ports) {
      const res = await fetch(`http://127.0.0.1:${port}/api/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'root', password: ADMIN_PASSWORD }),
      });
      expect(res.status).toBe(200);
    }

    for (const run of runs) run.child.kill('SIGTERM');
    expect(await Promise.all(runs.map(exitOf))).toEqual([0, 0]);
  });
});
