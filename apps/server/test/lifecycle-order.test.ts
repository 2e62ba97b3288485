import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/db.js';
import { createLogger } from '../src/infra/logger.js';
import { ADMIN_PASSWORD } from './harness.js';

/**
 * The real server's one close path (src/lifecycle.ts, decision 0062): the order its builders register the parts
 * in, which the close reverses, and both ways in (the app's close, and Fastify's app.close() of tests and benches)
 * ending with the database the lifecycle owns.
 */
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function build() {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'toolport-lifecycle-'));
  dirs.push(dataDir);
  const config = loadConfig({
    DATA_DIR: dataDir,
    ADMIN_PASSWORD,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    SECRET_KEY: 'test-secret-key-that-is-long-enough-0123456789',
  });
  const database = openDatabase(config);
  const built = await buildApp({ config, database, logger: createLogger(config.logLevel), print: () => undefined, ownsDatabase: true });
  return { built, database };
}

const databaseOpen = (db: ReturnType<typeof openDatabase>['db']) =>
  sql`select 1`.execute(db).then(
    () => true,
    () => false,
  );

describe('the server lifecycle', () => {
  it('registers the parts so that the close gives up leadership, drains the HTTP server, and closes the database last', async () => {
    const { built, database } = await build();
    const names = built.parts();
    const at = (name: string) => {
      expect(names).toContain(name);
      return names.indexOf(name);
    };
    // Built first, closed last.
    expect(names[0]).toBe('database');
    expect(at('options')).toBeLessThan(at('metering'));
    // Counters are written before the gate they read through closes, and the service log after every writer.
    expect(at('database gate')).toBeLessThan(at('metering'));
    expect(at('service log')).toBeLessThan(at('users'));
    // The run record is released only after the gateway stopped its processes.
    expect(at('run record')).toBeLessThan(at('gateway'));
    // Installs finish writing after the gateway stopped (the HTTP server stops it), before the modules close.
    expect(at('gateway')).toBeLessThan(at('market'));
    expect(at('market')).toBeLessThan(at('http'));
    // Closed first: leadership, then the HTTP server.
    expect(names.slice(-2)).toEqual(['http', 'leadership']);
    expect(new Set(names).size).toBe(names.length);

    const res = await built.app.inject({ method: 'GET', url: '/api/status' });
    expect(res.statusCode).toBe(200);
    const report = await built.close();
    expect(report).toEqual({ failed: [], timedOut: [] });
    expect(await databaseOpen(database.db)).toBe(false);
    // Once: a second close is the first one's answer.
    expect(await built.close()).toBe(report);
  });

  it('takes the same path when Fastify is closed directly', async () => {
    const { built, database } = await build();
    expect(await databaseOpen(database.db)).toBe(true);
    await built.app.close();
    expect(await databaseOpen(database.db)).toBe(false);
    expect(await built.close()).toEqual({ failed: [], timedOut: [] });
  });
});
