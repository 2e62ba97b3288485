import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, engines, pgAdminUrl, type TestApp } from '../../../test/harness.js';
import { migrator } from '../../db/db.js';

/** Drops the app's PostgreSQL database under it, as when the server or its network goes away. */
async function dropDatabaseUnder(t: TestApp): Promise<void> {
  const { default: pg } = await import('pg');
  const name = new URL(t.config.databaseUrl ?? '').pathname.slice(1);
  const admin = new pg.Client({ connectionString: pgAdminUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE ${name} WITH (FORCE)`);
  await admin.end();
}

describe.each(engines)('status and probes on %s', (engine) => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it('describes the server before sign-in', async () => {
    t = await createTestApp(engine);
    const res = await t.app.inject({ method: 'GET', url: '/api/status' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      success: true,
      data: { system_name: 'Toolport', version: t.ctx.version, github_oauth: false, google_oauth: false, registration_enabled: true },
    });
    expect(res.json().data.start_time).toBe(Math.floor(t.ctx.startedAt / 1000));
  });

  it('answers the liveness probe', async () => {
    t = await createTestApp(engine);
    const res = await t.app.inject({ method: 'GET', url: '/api/health' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ success: true, data: { status: 'ok' } });
  });

  it('is ready once migrations are applied', async () => {
    t = await createTestApp(engine);
    const res = await t.app.inject({ method: 'GET', url: '/api/ready' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ success: true, data: { status: 'ready' } });
  });

  it('is not ready while a migration is pending', async () => {
    t = await createTestApp(engine);
    const { error } = await migrator(t.ctx.db).migrateDown();
    expect(error).toBeUndefined();
    const res = await t.app.inject({ method: 'GET', url: '/api/ready', headers: { 'accept-language': 'zh-CN' } });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({
      success: false,
      message: '未就绪：数据库迁移尚未完成',
      data: { status: 'not_ready', reason: 'migrations_pending' },
    });
  });

  it('answers 503 with the JSON envelope when the database is unreachable', async () => {
    t = await createTestApp(engine);
    if (engine === 'postgres') await dropDatabaseUnder(t);
    else await t.ctx.db.destroy();
    const res = await t.app.inject({ method: 'GET', url: '/api/ready' });
    expect(res.statusCode).toBe(503);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json()).toEqual({
      success: false,
      message: 'Not ready: the database is unreachable',
      data: { status: 'not_ready', reason: 'database_unreachable' },
    });
    // Liveness does not depend on the database: the process itself is fine.
    expect((await t.app.inject({ method: 'GET', url: '/api/health' })).statusCode).toBe(200);
  });
});
