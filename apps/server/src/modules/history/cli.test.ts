import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, engines, type TestApp } from '../../../test/harness.js';
import { expectedRollup, figuresOf, makeRecords, serviceDayKey } from '../../../test/kits/history.js';
import { CliUsageError } from '../../cli/args.js';
import { runHistoryCommand } from './cli.js';

const TZ = 'Asia/Shanghai';

describe.each(engines)('toolport history rebuild on %s', (engine) => {
  let t: TestApp;
  const env = () => ({
    DATA_DIR: t.dataDir,
    SECRET_KEY: t.config.secretKey,
    LOG_LEVEL: 'silent',
    ...(t.config.databaseUrl ? { DATABASE_URL: t.config.databaseUrl } : {}),
  });
  const perService = async (ids: number[]) => {
    const rows = await t.ctx.db.selectFrom('service_day_rollups').selectAll().where('service_id', 'in', ids).execute();
    return new Map(rows.map((r) => [serviceDayKey(r), figuresOf(r)]));
  };

  beforeAll(async () => {
    t = await createTestApp(engine);
  });
  afterAll(async () => t?.close());

  it('rolls up records stored without rollups, only the days asked for, and says how many', async () => {
    const ids = [901, 902];
    // Three days of Shanghai time in 2021, stored as an older replica would: records only.
    const records = makeRecords({
      from: Date.UTC(2021, 2, 1, 0),
      to: Date.UTC(2021, 2, 3, 12),
      count: 600,
      timeZone: TZ,
      serviceIds: ids,
      userIds: [1],
      seed: 5,
    });
    await t.ctx.db.insertInto('request_records').values(records).execute();
    const days = [...new Set(records.map((r) => r.day))].sort();
    expect(days).toHaveLength(3);
    expect((await perService(ids)).size).toBe(0);

    const lines: string[] = [];
    await runHistoryCommand(['rebuild', '--from', days[1] as string, '--to', days[2] as string], {
      env: env(),
      print: (l) => lines.push(l),
    });
    expect(lines).toEqual(['Rebuilt the rollups of 2 days']);
    const later = records.filter((r) => r.day !== days[0]);
    expect(await perService(ids)).toEqual(expectedRollup(later, serviceDayKey));

    lines.length = 0;
    await runHistoryCommand(['rebuild'], { env: env(), print: (l) => lines.push(l) });
    expect(lines[0]).toMatch(/^Rebuilt the rollups of \d+ days$/);
    expect(await perService(ids)).toEqual(expectedRollup(records, serviceDayKey));
  });

  it('refuses a malformed command line before touching the database', async () => {
    for (const args of [[], ['rebuild', 'now'], ['purge'], ['rebuild', '--from', '2021-02-30'], ['rebuild', '--since', '2021-01-01']]) {
      await expect(runHistoryCommand(args, { env: { DATA_DIR: '/nonexistent/toolport' } }), args.join(' ')).rejects.toBeInstanceOf(
        CliUsageError,
      );
    }
  });
});
