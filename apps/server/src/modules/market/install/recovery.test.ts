import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createTestApp, engines, type TestApp } from '../../../../test/harness.js';
import { serviceRow } from '../../../../test/kits/services.js';
import { buildApp } from '../../../app.js';
import { openDatabase } from '../../../db/db.js';
import { createLogger } from '../../../infra/logger.js';
import { INTERRUPTED_REASON } from './recovery.js';
import { TASK_STALE_MS } from './tasks.js';

/**
 * A server that stops in the middle of an install leaves its task `installing`. The next start
 * (of this server or any replica) marks such tasks failed, and deletes the half-made service.
 */
describe.each(engines)('install tasks interrupted by a stopped server, on %s', (engine) => {
  let t: TestApp;
  let token: string;

  beforeAll(async () => {
    t = await createTestApp(engine);
    token = await t.rootToken();
  });
  afterAll(async () => t?.close());

  const task = async (id: string, kind: string, serviceId: number | null, updatedAt: number) => {
    await t.ctx.db
      .insertInto('install_tasks')
      .values({
        id,
        kind,
        service_id: serviceId,
        status: 'installing',
        error_message: '',
        payload_json: '{}',
        result_json: '{}',
        created_by: null,
        created_at: updatedAt,
        updated_at: updatedAt,
      })
      .execute();
    await t.ctx.db.insertInto('install_task_logs').values({ task_id: id, seq: 1, line: 'Installing…', created_at: updatedAt }).execute();
  };

  it('marks stale tasks failed at the next start, removing the half-made service and its files, and keeps their logs', async () => {
    const longAgo = Date.now() - TASK_STALE_MS - 60_000;
    const dir = path.join(t.dataDir, 'packages', 'npm', 'half-made');
    mkdirSync(path.join(dir, 'node_modules'), { recursive: true });
    writeFileSync(path.join(dir, 'package.json'), '{}');
    const halfMade = await t.ctx.db
      .insertInto('services')
      .values(serviceRow({ name: 'half-made', enabled: 0, health_status: 'installing', install_dir: dir, source: 'npm' }))
      .returning('id')
      .executeTakeFirstOrThrow();
    const custom = await t.ctx.db
      .insertInto('services')
      .values(serviceRow({ name: 'custom-one' }))
      .returning('id')
      .executeTakeFirstOrThrow();
    // A custom `npx` service whose pinned install was interrupted (decision 0035).
    const pinnedDir = path.join(t.dataDir, 'packages', 'npm', 'pinned-half');
    mkdirSync(pinnedDir, { recursive: true });
    const pinned = await t.ctx.db
      .insertInto('services')
      .values(
        serviceRow({
          name: 'pinned-half',
          enabled: 0,
          health_status: 'installing',
          install_dir: 'packages/npm/pinned-half',
          typed_command: 'npx -y acme-echo-mcp',
        }),
      )
      .returning('id')
      .executeTakeFirstOrThrow();
    await task('stale-install', 'marketplace', halfMade.id, longAgo);
    await task('stale-custom', 'custom', custom.id, longAgo);
    await task('stale-pinned', 'custom', pinned.id, longAgo);
    await task('stale-batch', 'batch', null, longAgo);
    // Still alive: its process refreshed it a moment ago.
    await task('running-elsewhere', 'marketplace', null, Date.now());

    // The restart: a second server on the same database and DATA_DIR.
    const database = openDatabase(t.config);
    const restarted = await buildApp({ config: t.config, database, logger: createLogger('silent'), print: () => undefined });
    try {
      const status = async (id: string) =>
        (await t.app.inject({ method: 'GET', url: `/api/mcp_market/install_status/${id}`, headers: bearer(token) })).json().data;
      const install = await status('stale-install');
      expect(install).toMatchObject({ status: 'failed', error_message: INTERRUPTED_REASON, service_id: null });
      expect(install.logs).toEqual(['Installing…', INTERRUPTED_REASON]);
      expect(await t.ctx.db.selectFrom('services').selectAll().where('id', '=', halfMade.id).executeTakeFirst()).toBeUndefined();
      expect(existsSync(dir)).toBe(false);

      // A custom service's first check was interrupted: the task fails, the service it belongs to stays.
      expect(await status('stale-custom')).toMatchObject({ status: 'failed', service_id: custom.id });
      expect(await t.ctx.db.selectFrom('services').selectAll().where('id', '=', custom.id).executeTakeFirst()).toBeDefined();
      // An interrupted pinned install: kept, disabled, the interruption as its reason; its files go.
      expect(await status('stale-pinned')).toMatchObject({ status: 'failed', service_id: pinned.id });
      expect(await t.ctx.db.selectFrom('services').selectAll().where('id', '=', pinned.id).executeTakeFirstOrThrow()).toMatchObject({
        enabled: 0,
        health_status: 'install_failed',
      });
      // Said in the reader's language, on the card as in the task's status.
      const listed = async (lang: string) =>
        (
          (
            await t.app.inject({ method: 'GET', url: '/api/mcp_market/installed', headers: { ...bearer(token), 'accept-language': lang } })
          ).json().data as { id: number; health_details: string }[]
        ).find((s) => s.id === pinned.id)?.health_details;
      expect(await listed('en')).toBe(INTERRUPTED_REASON);
      expect(await listed('zh-CN')).toBe('已中断：运行此任务的服务器在任务完成前停止了（重启或崩溃）。请重新开始。');
      expect(existsSync(pinnedDir)).toBe(false);
      // A batch's log holds only progress events: nothing is added to it.
      expect(await status('stale-batch')).toMatchObject({ status: 'failed', logs: ['Installing…'] });
      expect(await status('running-elsewhere')).toMatchObject({ status: 'installing' });
    } finally {
      await restarted.app.close();
      await database.db.destroy();
    }
  });
});
