import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createTestApp, engines, type TestApp } from '../../../test/harness.js';
import { makeRecords } from '../../../test/kits/history.js';
import { serviceRow } from '../../../test/kits/services.js';
import { dayIn } from '../../infra/day.js';
import { addDays } from './days.js';
import { HistoryRetention, type PurgeReport, type RetentionSettings } from './retention.js';
import { storeRecords } from './rollups.js';

const DAY = 86_400_000;
const TZ = 'Asia/Tokyo';

describe.each(engines)('history retention on %s', (engine) => {
  let t: TestApp;
  let admin: Record<string, string>;
  const now = Date.now();
  const today = dayIn(TZ, now);
  let serviceIds: number[] = [];
  let totalRecords = 0;

  const job = (settings: RetentionSettings = {}) =>
    new HistoryRetention(t.ctx.db, t.ctx.options, t.ctx.logger, { batchSize: 40, pauseMs: 0, now: () => now, ...settings });
  const count = async (table: 'request_records' | 'service_logs' | 'install_tasks' | 'install_task_logs') =>
    Number(
      (
        await t.ctx.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  const put = (key: string, value: unknown, headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'PUT', url: '/api/option/', headers: { ...admin, ...headers }, payload: { key, value } });
  const setDays = async (records: number, logs: number, installs: number) => {
    for (const [key, value] of [
      ['RequestRecordRetentionDays', records],
      ['ServiceLogRetentionDays', logs],
      ['InstallLogRetentionDays', installs],
    ] as const) {
      expect((await put(key, value)).statusCode).toBe(200);
    }
  };

  /** Finished (or not) install tasks of a given age, each with `lines` log lines. */
  const task = async (ageDays: number, finished: boolean, lines = 3) => {
    const id = `task-${ageDays}-${finished ? 'done' : 'open'}-${Math.random().toString(36).slice(2, 8)}`;
    const at = now - ageDays * DAY;
    await t.ctx.db
      .insertInto('install_tasks')
      .values({
        id,
        kind: 'install',
        service_id: null,
        status: finished ? 'completed' : 'installing',
        error_message: '',
        payload_json: '{}',
        result_json: '{}',
        created_by: null,
        created_at: at - 60_000,
        updated_at: at,
        finished_at: finished ? at : null,
      })
      .execute();
    await t.ctx.db
      .insertInto('install_task_logs')
      .values(Array.from({ length: lines }, (_, i) => ({ task_id: id, seq: i + 1, line: `step ${i}`, created_at: at - 1000 + i })))
      .execute();
    return id;
  };

  beforeAll(async () => {
    t = await createTestApp(engine);
    admin = bearer(await t.rootToken());
    await t.ctx.options.set('TimeZone', TZ);
    for (const name of ['keep-a', 'keep-b']) {
      const row = await t.ctx.db.insertInto('services').values(serviceRow({ name })).returning('id').executeTakeFirstOrThrow();
      serviceIds.push(row.id);
    }
    serviceIds = serviceIds.sort((a, b) => a - b);
    // Twenty days of requests up to now, in Tokyo's days.
    const records = makeRecords({ from: now - 20 * DAY, to: now, count: 1500, timeZone: TZ, serviceIds, userIds: [1, 2, 3], seed: 29 });
    await storeRecords(t.ctx.db, records);
    totalRecords = records.length;
    // Service log lines 1 to 60 days old.
    await t.ctx.db
      .insertInto('service_logs')
      .values(
        Array.from({ length: 60 }, (_, i) => ({
          created_at: now - (i + 1) * DAY + 1,
          service_id: serviceIds[0] as number,
          service_name: 'keep-a',
          phase: 'run',
          level: 'info',
          message: `line ${i + 1} days old`,
        })),
      )
      .execute();
  });
  afterAll(async () => t?.close());

  it('refuses retention values out of range with a localised message; 0 is allowed', async () => {
    for (const bad of ['-1', 'abc', '3651', '1.5']) {
      const en = await put('RequestRecordRetentionDays', bad);
      expect(en.statusCode, bad).toBe(400);
      expect(en.json().message).toBe(
        'Invalid value for preference RequestRecordRetentionDays: must be a whole number of days from 0 to 3650 (0 keeps everything)',
      );
    }
    const zh = await put('InstallLogRetentionDays', 4000, { 'accept-language': 'zh-CN' });
    expect(zh.statusCode).toBe(400);
    expect(zh.json().message).toBe('设置项 InstallLogRetentionDays 的值无效：必须是 0 到 3650 之间的整数天数（0 表示永久保留）');
    expect((await put('ServiceLogRetentionDays', 0)).statusCode).toBe(200);
    expect(t.ctx.options.get('ServiceLogRetentionDays')).toBe('0');
    const list = await t.app.inject({ method: 'GET', url: '/api/option/', headers: admin });
    const values = Object.fromEntries((list.json().data as { key: string; value: string }[]).map((o) => [o.key, o.value]));
    expect(values).toMatchObject({ RequestRecordRetentionDays: '90', InstallLogRetentionDays: '30', ServiceLogRetentionDays: '0' });
  });

  it('keeps everything when every retention is 0', async () => {
    await setDays(0, 0, 0);
    await task(400, true);
    const before = await Promise.all([count('request_records'), count('service_logs'), count('install_tasks'), count('install_task_logs')]);
    expect(await job().runOnce()).toEqual({
      requestRecords: 0,
      serviceLogs: 0,
      installTasks: 0,
      installLogLines: 0,
      auditEntries: 0,
      stopped: false,
    });
    expect(
      await Promise.all([count('request_records'), count('service_logs'), count('install_tasks'), count('install_task_logs')]),
    ).toEqual(before);
  });

  it('purges each kind by its own preference; analytics answer the same from the rollups afterwards', async () => {
    const ask = async (url: string) => {
      const res = await t.app.inject({ method: 'GET', url, headers: admin });
      expect(res.statusCode, res.body).toBe(200);
      return res.json().data;
    };
    const range = `from=${addDays(today, -21)}&to=${today}`;
    const analytics = async () => ({
      history: await ask(`/api/analytics/history?${range}`),
      oneService: await ask(`/api/analytics/history?${range}&service_id=${serviceIds[0]}`),
      oneUser: await ask(`/api/analytics/history?${range}&user_id=2`),
      overview: await ask('/api/analytics/system/overview'),
      utilization: await ask('/api/analytics/services/utilization'),
    });
    const before = await analytics();
    expect(before.history.days.reduce((s: number, d: { requests: number; limited: number }) => s + d.requests + d.limited, 0)).toBe(
      totalRecords,
    );
    await t.ctx.db.deleteFrom('install_tasks').execute();
    const young = await task(5, true, 4);
    await task(40, true, 120);
    await task(100, true, 2);
    const unfinished = await task(100, false, 2);

    await setDays(7, 30, 30);
    const report = (await job().runOnce()) as PurgeReport;

    // Request records: whole days before the one containing "now - 7 days" (Tokyo), every later one complete.
    const keepFrom = dayIn(TZ, now - 7 * DAY);
    const left = await t.ctx.db.selectFrom('request_records').select(['day']).execute();
    expect(left.every((r) => r.day >= keepFrom)).toBe(true);
    const kept = before.history.days
      .filter((d: { day: string }) => d.day >= keepFrom)
      .reduce((s: number, d: { requests: number; limited: number }) => s + d.requests + d.limited, 0);
    expect(left).toHaveLength(kept);
    expect(report.requestRecords).toBe(totalRecords - kept);
    expect(report.requestRecords).toBeGreaterThan(0);
    // Service log lines: those older than 30 days.
    const lines = await t.ctx.db.selectFrom('service_logs').select('message').execute();
    expect(lines.map((l) => l.message).sort()).toEqual(Array.from({ length: 30 }, (_, i) => `line ${i + 1} days old`).sort());
    expect(report.serviceLogs).toBe(30);
    // Install tasks finished more than 30 days ago, with their lines; unfinished ones stay.
    const tasks = await t.ctx.db.selectFrom('install_tasks').select('id').execute();
    expect(tasks.map((r) => r.id).sort()).toEqual([young, unfinished].sort());
    expect(await count('install_task_logs')).toBe(6);
    expect(report).toMatchObject({ installTasks: 2, installLogLines: 122, stopped: false });

    expect(await analytics()).toEqual(before);
    // The logs screen counts what is left.
    const logs = await t.app.inject({ method: 'GET', url: '/api/mcp_logs', headers: admin });
    expect(logs.json().data.total).toBe(kept + 30);
    // A second run finds nothing more.
    expect(await job().runOnce()).toEqual({
      requestRecords: 0,
      serviceLogs: 0,
      installTasks: 0,
      installLogLines: 0,
      auditEntries: 0,
      stopped: false,
    });
  });

  it('stops between two batches when closed, and does nothing once closed', async () => {
    await t.ctx.db
      .insertInto('service_logs')
      .values(
        Array.from({ length: 200 }, (_, i) => ({
          created_at: now - 90 * DAY + i,
          service_id: null,
          service_name: '',
          phase: 'run',
          level: 'info',
          message: `old ${i}`,
        })),
      )
      .execute();
    const before = await count('service_logs');
    let closing: Promise<void> | undefined;
    const batches: number[] = [];
    const purge = job({
      onBatch: (table, deleted) => {
        if (table !== 'service_logs') return;
        batches.push(deleted);
        // Closed while the first batch is done: the run must not start another.
        closing ??= purge.close();
      },
    });
    const report = (await purge.runOnce()) as PurgeReport;
    await closing;
    expect(batches).toEqual([40]);
    expect(report).toMatchObject({ serviceLogs: 40, stopped: true });
    expect(await count('service_logs')).toBe(before - 40);
    purge.start();
    expect(await purge.runOnce()).toMatchObject({ serviceLogs: 0, stopped: true });
    expect(await count('service_logs')).toBe(before - 40);
  });

  it('runs one purge at a time: a second run, or on PostgreSQL a second replica, is told the work is busy', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let entered: () => void = () => undefined;
    const inside = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const first = job({
      onBatch: async () => {
        entered();
        await gate;
      },
    });
    const running = first.runOnce();
    await inside;
    expect(await first.runOnce()).toBe('busy');
    if (engine === 'postgres') expect(await job().runOnce()).toBe('busy');
    release();
    expect(await running).toMatchObject({ stopped: false });
    expect(await count('service_logs')).toBe(30);
  });

  it('is stopped when the app closes', async () => {
    const local = await createTestApp(engine);
    await local.close();
    expect(await local.ctx.retention.runOnce()).toMatchObject({ requestRecords: 0, stopped: true });
  });
});
