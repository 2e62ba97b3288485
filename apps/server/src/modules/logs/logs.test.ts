import { Role } from '@toolport/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, engines, type TestApp } from '../../../test/harness.js';
import { makeRecords, random } from '../../../test/kits/history.js';
import { type SuiteUser, serviceRow, suiteUser } from '../../../test/kits/services.js';
import { dayIn } from '../../infra/day.js';
import { storeRecords } from '../history/index.js';

describe.each(engines)('service logs on %s', (engine) => {
  let t: TestApp;
  let admin: SuiteUser;
  const base = Date.UTC(2026, 5, 1);

  beforeAll(async () => {
    t = await createTestApp(engine);
    admin = await suiteUser(t, Role.Admin);
    // 45 lines: service 1 "weather" (30: install then run), service 2 "web_search" (15, every third an error).
    const rows = Array.from({ length: 45 }, (_, i) => {
      const weather = i < 30;
      return {
        created_at: base + i * 1000,
        service_id: weather ? 1 : 2,
        service_name: weather ? 'weather' : 'web_search',
        phase: weather && i < 10 ? 'install' : 'run',
        level: !weather && i % 3 === 0 ? 'error' : 'info',
        message: `line ${i}`,
      };
    });
    await t.ctx.db.insertInto('service_logs').values(rows).execute();
  });
  afterAll(async () => t?.close());

  const logs = async (query: string, as: SuiteUser = admin) => {
    const res = await t.app.inject({ method: 'GET', url: `/api/mcp_logs${query}`, headers: as.headers });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data as {
      logs: { message: string; service_id: number; phase: string; level: string; created_at: number }[];
      total: number;
      page: number;
    };
  };

  it('pages newest first, 20 by default', async () => {
    const first = await logs('');
    expect(first.total).toBe(45);
    expect(first.page).toBe(1);
    expect(first.logs).toHaveLength(20);
    expect(first.logs[0]?.message).toBe('line 44');
    expect(first.logs[19]?.message).toBe('line 25');
    const third = await logs('?page=3&page_size=20');
    expect(third.logs.map((l) => l.message)).toEqual(['line 4', 'line 3', 'line 2', 'line 1', 'line 0']);
    expect((await logs('?page=9')).logs).toEqual([]);
  });

  it('filters by service id, service name (part, any case, wildcards literal), phase and level', async () => {
    expect((await logs('?service_id=2')).total).toBe(15);
    expect((await logs('?service_name=WEATH')).total).toBe(30);
    expect((await logs('?service_name=b_s')).total).toBe(15);
    // "_" is a literal underscore, not "any character".
    expect((await logs('?service_name=web%25')).total).toBe(0);
    expect((await logs('?service_name=a_h')).total).toBe(0);
    expect((await logs('?phase=install')).total).toBe(10);
    const errors = await logs('?service_id=2&level=error&page_size=100');
    expect(errors.total).toBe(5);
    expect(errors.logs.every((l) => l.level === 'error' && l.service_id === 2)).toBe(true);
    // The console's "all" and empty filters mean no filter.
    expect((await logs('?phase=all&level=&service_id=&service_name=')).total).toBe(45);
  });

  it('caps page_size at 100 and refuses nonsense', async () => {
    for (const q of ['?page_size=101', '?page=0', '?phase=boot', '?level=debug', '?service_id=abc']) {
      const res = await t.app.inject({ method: 'GET', url: `/api/mcp_logs${q}`, headers: admin.headers });
      expect(res.statusCode, q).toBe(400);
    }
  });

  it('is for admins only', async () => {
    const user = await suiteUser(t, Role.User);
    expect((await t.app.inject({ method: 'GET', url: '/api/mcp_logs', headers: user.headers })).statusCode).toBe(403);
  });
});

interface Line {
  id: number;
  created_at: number;
  service_id: number | null;
  service_name: string;
  phase: string;
  level: string;
  message: string;
}

describe.each(engines)('service logs with counted requests on %s', (engine) => {
  let t: TestApp;
  let admin: SuiteUser;
  // Five days around the end of daylight saving time in Los Angeles (one of 25 hours), in that time zone.
  const tz = 'America/Los_Angeles';
  const from = Date.UTC(2026, 9, 30, 3);
  const to = Date.UTC(2026, 10, 3, 7);
  /** Every line the endpoint should know of, as the oracle sees it. */
  let all: (Line & { raw: number })[] = [];
  const ids: Record<string, number> = {};

  beforeAll(async () => {
    t = await createTestApp(engine);
    admin = await suiteUser(t, Role.Admin);
    await t.ctx.options.set('TimeZone', tz);
    for (const name of ['alpha_svc', 'beta-svc']) {
      const row = await t.ctx.db.insertInto('services').values(serviceRow({ name })).returning('id').executeTakeFirstOrThrow();
      ids[name] = row.id;
    }
    const names = new Map([
      [ids.alpha_svc, 'alpha_svc'],
      [ids['beta-svc'], 'beta-svc'],
    ]);
    // 700 requests of both services and of one uninstalled since (its name is gone).
    const records = makeRecords({
      from,
      to,
      count: 700,
      timeZone: tz,
      serviceIds: [ids.alpha_svc as number, ids['beta-svc'] as number, 9999],
      userIds: [1, 2],
      seed: 5,
    });
    await storeRecords(t.ctx.db, records);
    const stored = await t.ctx.db.selectFrom('request_records').selectAll().orderBy('id').execute();
    const levelOf: Record<string, string> = { ok: 'info', limited: 'warn', error: 'error' };
    all = stored.map((r) => ({
      raw: r.id,
      id: -r.id,
      created_at: r.created_at,
      service_id: r.service_id,
      service_name: names.get(r.service_id) ?? '',
      phase: 'run',
      level: levelOf[r.outcome] as string,
      message: '',
    }));
    // 150 service log lines at odd milliseconds over a wider span: some on days without any request.
    const rnd = random(3);
    const lines = Array.from({ length: 150 }, (_, i) => {
      const service = i % 3 === 0 ? 'alpha_svc' : i % 3 === 1 ? 'beta-svc' : 'gone';
      return {
        created_at: from - 2 * 86_400_000 + 2 * Math.floor((rnd() * (to - from + 4 * 86_400_000)) / 2) + 1,
        service_id: ids[service] ?? 9999,
        service_name: service,
        phase: i % 5 === 0 ? 'install' : 'run',
        level: ['info', 'warn', 'error'][i % 4 === 0 ? 2 : i % 7 === 0 ? 1 : 0] as string,
        message: `line ${i}`,
      };
    });
    // And a burst of warnings among the requests: under `level=warn` log lines outnumber requests several times.
    const warnings = Array.from({ length: 300 }, (_, i) => ({
      created_at: from + 2 * Math.floor((rnd() * (to - from)) / 2) + 1,
      service_id: ids['beta-svc'] as number,
      service_name: 'beta-svc',
      phase: 'run',
      level: 'warn',
      message: `warning ${i}`,
    }));
    await t.ctx.db.insertInto('service_logs').values(lines).execute();
    await t.ctx.db.insertInto('service_logs').values(warnings).execute();
    const storedLines = await t.ctx.db.selectFrom('service_logs').selectAll().execute();
    all.push(...storedLines.map((l) => ({ ...l, raw: l.id })));
    all.sort((a, b) => b.created_at - a.created_at || b.raw - a.raw);
  });
  afterAll(async () => t?.close());

  const get = async (query: string) => {
    const res = await t.app.inject({ method: 'GET', url: `/api/mcp_logs?${query}`, headers: admin.headers });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data as { logs: Line[]; total: number; page: number };
  };

  /** Every page of a filter at a page size, in order. */
  const everyPage = async (filter: string, size: number) => {
    const first = await get(`${filter}&page_size=${size}`);
    const out = [...first.logs];
    for (let page = 2; page <= Math.ceil(first.total / size); page += 1) {
      const next = await get(`${filter}&page_size=${size}&page=${page}`);
      expect(next.total).toBe(first.total);
      out.push(...next.logs);
    }
    return { total: first.total, lines: out };
  };

  const key = (l: Line) => `${l.id}@${l.created_at}`;

  it.each([
    ['', () => true],
    ['level=error', (l: Line) => l.level === 'error'],
    ['level=warn', (l: Line) => l.level === 'warn'],
    ['phase=run&level=info', (l: Line) => l.phase === 'run' && l.level === 'info'],
    ['phase=install', (l: Line) => l.phase === 'install'],
    ['service_name=SVC', (l: Line) => l.service_name.includes('svc')],
    ['service_name=alpha&level=info', (l: Line) => l.service_name === 'alpha_svc' && l.level === 'info'],
    ['service_id=9999', (l: Line) => l.service_id === 9999],
    ['service_name=beta&level=warn', (l: Line) => l.service_name === 'beta-svc' && l.level === 'warn'],
  ])('pages newest first through requests and log lines alike: "%s"', async (filter, keep) => {
    const want = all.filter(keep).map(key);
    expect(want.length).toBeGreaterThan(3);
    for (const size of [13, 100]) {
      const got = await everyPage(filter, size);
      expect(got.total, `size ${size}`).toBe(want.length);
      expect(got.lines.map(key), `size ${size}`).toEqual(want);
    }
  });

  it('jumps straight to a deep page and to the last page', async () => {
    const total = all.length;
    for (const page of [3, 17, Math.ceil(total / 20) - 1, Math.ceil(total / 20)]) {
      const got = await get(`page=${page}&page_size=20`);
      expect(got.logs.map(key), `page ${page}`).toEqual(all.slice((page - 1) * 20, page * 20).map(key));
    }
    expect((await get(`page=${Math.ceil(total / 20) + 1}&page_size=20`)).logs).toEqual([]);
  });

  it('shows a request as a run line: negative id, outcome as level, what was called, redacted', async () => {
    const at = (all[0]?.created_at as number) + 2;
    await storeRecords(t.ctx.db, [
      {
        created_at: at,
        day: dayIn(tz, at),
        service_id: ids['beta-svc'] as number,
        user_id: 2,
        method: 'tools/call',
        target: 'fetch',
        latency_ms: 41,
        outcome: 'error',
        bytes_in: 10,
        bytes_out: 0,
        error_message: 'upstream said: GET https://api.example.com/x?key=sk-secret-1234 failed',
      },
    ]);
    const record = await t.ctx.db.selectFrom('request_records').select('id').where('created_at', '=', at).executeTakeFirstOrThrow();
    const page = await get('level=error&service_name=beta');
    expect(page.logs[0]).toEqual({
      id: -record.id,
      created_at: at,
      service_id: ids['beta-svc'],
      service_name: 'beta-svc',
      phase: 'run',
      level: 'error',
      message: 'tools/call fetch: failed after 41 ms for user 2: upstream said: GET https://api.example.com/x?key=[REDACTED] failed',
    });
  });
});
