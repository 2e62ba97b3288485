import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgDatabase, createTestApp, engines, type TestApp } from '../../../test/harness.js';
import { expectedRollup, figuresOf, fineKey, makeRecords, serviceDayKey } from '../../../test/kits/history.js';
import { type Db, migrator, openDatabase } from '../../db/db.js';
import { dayIn } from '../../infra/day.js';
import { DbMeter } from '../metering/index.js';
import { addDays, dayEnd, dayStart, isDay } from './days.js';
import { type NewRequestRecord, recomputeRollups, recordedDays, storeRecords } from './rollups.js';

const TZ = 'America/Los_Angeles';

/** Both rollup tables as maps keyed like the expected ones, for some services. */
async function storedRollups(db: Db, serviceIds: number[]) {
  const fine = await db.selectFrom('request_rollups').selectAll().where('service_id', 'in', serviceIds).execute();
  const perService = await db.selectFrom('service_day_rollups').selectAll().where('service_id', 'in', serviceIds).execute();
  return {
    fine: new Map(fine.map((r) => [fineKey(r), figuresOf(r)])),
    perService: new Map(perService.map((r) => [serviceDayKey(r), figuresOf(r)])),
  };
}

const expected = (records: NewRequestRecord[]) => ({
  fine: expectedRollup(records, fineKey),
  perService: expectedRollup(records, serviceDayKey),
});

describe('days in a time zone', () => {
  it('finds the first millisecond of a day across daylight-saving changes and odd offsets', () => {
    const cases: [string, string][] = [
      ['UTC', '2026-03-08'],
      // The US switches at 02:00: the day still starts at midnight, and is 23 or 25 hours long.
      [TZ, '2026-03-08'],
      [TZ, '2026-11-01'],
      // +05:45, +14:00, and Santiago, whose clocks jump from 00:00 to 01:00 (the day starts at 01:00).
      ['Asia/Kathmandu', '2026-06-15'],
      ['Pacific/Kiritimati', '2026-01-01'],
      ['America/Santiago', '2026-09-06'],
    ];
    for (const [tz, day] of cases) {
      const start = dayStart(tz, day);
      expect(dayIn(tz, start), `${tz} ${day}`).toBe(day);
      expect(dayIn(tz, start - 1), `${tz} ${day}`).toBe(addDays(day, -1));
    }
    expect(dayEnd(TZ, '2026-11-01') - dayStart(TZ, '2026-11-01')).toBe(25 * 3_600_000);
    expect(dayEnd(TZ, '2026-03-08') - dayStart(TZ, '2026-03-08')).toBe(23 * 3_600_000);
    expect(dayStart('Asia/Kathmandu', '2026-06-15')).toBe(Date.UTC(2026, 5, 14, 18, 15));
    expect(['2026-02-29', '2026-13-01', '2026-1-01', 'x'].some(isDay)).toBe(false);
    expect(isDay('2028-02-29')).toBe(true);
  });
});

describe.each(engines)('daily rollups on %s', (engine) => {
  let t: TestApp;
  // Four days around the end of daylight saving time in Los Angeles (a 25-hour day).
  const from = Date.UTC(2026, 9, 30, 3);
  const to = Date.UTC(2026, 10, 3, 7);
  let nextService = 500;
  const services = (n: number) => Array.from({ length: n }, () => (nextService += 1));

  beforeAll(async () => {
    t = await createTestApp(engine);
  });
  afterAll(async () => t?.close());

  it('equal the raw records per day in the server time zone, service, user, method and target, errors and refusals apart', async () => {
    const ids = services(3);
    const records = makeRecords({ from, to, count: 1800, timeZone: TZ, serviceIds: ids, userIds: [1, 2, 3], seed: 7 });
    // Stored in uneven slices, as flushes would: rows of one key are added to across transactions.
    for (let i = 0; i < records.length; ) {
      const n = 1 + ((i * 37) % 700);
      await storeRecords(t.ctx.db, records.slice(i, i + n));
      i += n;
    }
    const stored = await storedRollups(t.ctx.db, ids);
    const want = expected(records);
    expect(stored.fine).toEqual(want.fine);
    expect(stored.perService).toEqual(want.perService);
    // The days are those of Los Angeles, not UTC: five of them, the 25-hour one included.
    expect([...new Set(records.map((r) => r.day))].sort()).toEqual(['2026-10-29', '2026-10-30', '2026-10-31', '2026-11-01', '2026-11-02']);
    expect([...want.perService.values()].some((f) => f.error_count > 0 && f.limited_count > 0)).toBe(true);
    expect(await t.ctx.db.selectFrom('request_records').select('id').where('service_id', 'in', ids).execute()).toHaveLength(1800);
  });

  it('are written by the meter with the records it flushes', async () => {
    const [id] = services(1) as [number];
    const meter = new DbMeter({ db: t.ctx.db, logger: t.ctx.logger, dataDir: t.dataDir, timeZone: () => TZ });
    const base = { serviceId: id, userId: 4, method: 'tools/call', target: 'echo', bytesIn: 10, bytesOut: 20 };
    meter.record({ ...base, latencyMs: 12, outcome: 'ok' });
    meter.record({ ...base, latencyMs: 30, outcome: 'error', errorMessage: 'boom' });
    meter.record({ ...base, latencyMs: 0, outcome: 'limited', errorMessage: 'daily request limit exceeded: 2/2' });
    await meter.flush();
    const rows = await t.ctx.db.selectFrom('service_day_rollups').selectAll().where('service_id', '=', id).execute();
    expect(rows).toEqual([
      {
        day: dayIn(TZ),
        service_id: id,
        request_count: 2,
        error_count: 1,
        limited_count: 1,
        latency_sum_ms: 42,
        latency_max_ms: 30,
        bytes_in: 30,
        bytes_out: 60,
      },
    ]);
  });

  it('are rebuilt from records stored without them, identically when run twice or twice at once', async () => {
    const ids = services(2);
    const records = makeRecords({ from, to, count: 900, timeZone: TZ, serviceIds: ids, userIds: [5, 6], seed: 11 });
    // As an older replica or a bulk import would store them: no rollups at all.
    for (let i = 0; i < records.length; i += 300)
      await t.ctx.db
        .insertInto('request_records')
        .values(records.slice(i, i + 300))
        .execute();
    expect((await storedRollups(t.ctx.db, ids)).fine.size).toBe(0);
    const days = [...new Set(records.map((r) => r.day))];
    const want = expected(records);

    const first = await recomputeRollups(t.ctx.db, days);
    expect(first).toEqual({ rebuilt: [...days].sort(), skipped: [] });
    expect(await storedRollups(t.ctx.db, ids)).toEqual(want);

    await recomputeRollups(t.ctx.db, days);
    expect(await storedRollups(t.ctx.db, ids)).toEqual(want);

    await Promise.all([recomputeRollups(t.ctx.db, days), recomputeRollups(t.ctx.db, [...days].reverse())]);
    expect(await storedRollups(t.ctx.db, ids)).toEqual(want);
    // The other suites' rows were rebuilt too (same days) and are still right.
    expect(await recordedDays(t.ctx.db)).toEqual(expect.arrayContaining(days.sort()));
  });

  it('stay exact when a rebuild runs while records are flushed into the same days', async () => {
    const ids = services(2);
    const records = makeRecords({ from, to, count: 1200, timeZone: TZ, serviceIds: ids, userIds: [7, 8], seed: 13 });
    const days = [...new Set(records.map((r) => r.day))];
    const writes = (async () => {
      for (let i = 0; i < records.length; i += 100) await storeRecords(t.ctx.db, records.slice(i, i + 100));
    })();
    const rebuilds = (async () => {
      for (let i = 0; i < 4; i += 1) await recomputeRollups(t.ctx.db, days);
    })();
    await Promise.all([writes, rebuilds]);
    expect(await storedRollups(t.ctx.db, ids)).toEqual(expected(records));
  });

  it('leave a day alone once the retention purge removed some of its records', async () => {
    const [id] = services(1) as [number];
    const records = makeRecords({ from, to, count: 200, timeZone: TZ, serviceIds: [id], userIds: [9], seed: 17 });
    await storeRecords(t.ctx.db, records);
    const day = records[0]?.day as string;
    const other = records.find((r) => r.day !== day)?.day as string;
    await t.ctx.db.deleteFrom('request_records').where('day', '=', day).where('service_id', '=', id).execute();
    const result = await recomputeRollups(t.ctx.db, [day, other]);
    expect(result.skipped).toContain(day);
    expect(result.rebuilt).toContain(other);
    expect((await storedRollups(t.ctx.db, [id])).perService).toEqual(expected(records).perService);
  });
});

describe.each(engines)('migration 0003 on %s', (engine) => {
  it('builds the rollups of the records stored before it', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'toolport-0003-'));
    const pgDb = engine === 'postgres' ? await createPgDatabase() : undefined;
    const { db } = openDatabase({ databaseUrl: pgDb?.url, dataDir });
    try {
      const { error } = await migrator(db).migrateTo('0002_oauth_states');
      expect(error).toBeUndefined();
      const records = makeRecords({
        from: Date.UTC(2026, 0, 1),
        to: Date.UTC(2026, 0, 4),
        count: 600,
        timeZone: 'Asia/Shanghai',
        serviceIds: [1, 2],
        userIds: [1, 2, 3],
        seed: 23,
      });
      for (let i = 0; i < records.length; i += 200)
        await db
          .insertInto('request_records')
          .values(records.slice(i, i + 200))
          .execute();
      const { error: upError, results } = await migrator(db).migrateTo('0003_history');
      expect(upError).toBeUndefined();
      expect(results?.map((r) => r.migrationName)).toEqual(['0003_history']);
      expect(await storedRollups(db, [1, 2])).toEqual(expected(records));
    } finally {
      await db.destroy();
      await pgDb?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
