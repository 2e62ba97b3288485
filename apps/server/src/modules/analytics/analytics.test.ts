import { Role } from '@toolport/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, engines, type TestApp } from '../../../test/harness.js';
import { type SuiteUser, serviceRow, suiteUser } from '../../../test/kits/services.js';
import { dayIn } from '../../infra/day.js';
import { addDays, type NewRequestRecord, storeRecords } from '../history/index.js';

const TZ = 'Pacific/Kiritimati';

describe.each(engines)('analytics on %s', (engine) => {
  let t: TestApp;
  let user: SuiteUser;
  let other: SuiteUser;
  let admin: SuiteUser;
  const ids: Record<string, number> = {};
  const today = dayIn(TZ);
  const yesterday = addDays(today, -1);

  /** `n` records of one kind whose latencies add up to `latency`, stored as the meter would (with rollups). */
  const records = (
    n: number,
    o: { day: string; service: number; user: number; latency: number; outcome?: string; target?: string; method?: string },
  ): NewRequestRecord[] =>
    Array.from({ length: n }, (_, i) => ({
      created_at: Date.now(),
      day: o.day,
      service_id: o.service,
      user_id: o.user,
      method: o.method ?? 'tools/call',
      target: o.target ?? 'echo',
      latency_ms: i < n - 1 ? Math.floor(o.latency / n) : o.latency - Math.floor(o.latency / n) * (n - 1),
      outcome: o.outcome ?? 'ok',
      bytes_in: 100,
      bytes_out: o.outcome === 'limited' ? 80 : 1000,
      error_message: '',
    }));

  beforeAll(async () => {
    // A time zone far from UTC: "today" must follow the preference, not the machine.
    t = await createTestApp(engine);
    await t.ctx.options.set('TimeZone', TZ);
    user = await suiteUser(t, Role.User);
    other = await suiteUser(t, Role.User);
    admin = await suiteUser(t, Role.Admin);
    const services = [
      { name: 'alpha', display_name: 'Alpha', enabled: 1, health_status: 'healthy' },
      { name: 'beta', display_name: '', enabled: 1, health_status: 'unhealthy' },
      { name: 'gamma', display_name: 'Gamma', enabled: 1, health_status: 'unknown' },
      { name: 'delta', display_name: 'Delta', enabled: 0, health_status: 'healthy' },
    ];
    for (const s of services) {
      const row = await t.ctx.db
        .insertInto('services')
        .values(serviceRow({ ...s, command: '/bin/true' }))
        .returning('id')
        .executeTakeFirstOrThrow();
      ids[s.name] = row.id;
    }
    const alpha = ids.alpha as number;
    const beta = ids.beta as number;
    await storeRecords(t.ctx.db, [
      // alpha today: two users, 10 + 30 requests (400 + 1100 ms), one failed, and 5 refusals (not requests).
      ...records(9, { day: today, service: alpha, user: user.id, latency: 340, target: 'search' }),
      ...records(1, { day: today, service: alpha, user: user.id, latency: 60, outcome: 'error', target: 'search' }),
      ...records(30, { day: today, service: alpha, user: other.id, latency: 1100, target: 'fetch' }),
      ...records(5, { day: today, service: alpha, user: other.id, latency: 0, outcome: 'limited', target: 'fetch' }),
      // alpha yesterday: 500 requests, not today's.
      ...records(500, { day: yesterday, service: alpha, user: user.id, latency: 99_000, target: 'search' }),
      // beta today: 3 failed requests, 10 ms in all.
      ...records(3, {
        day: today,
        service: beta,
        user: user.id,
        latency: 10,
        outcome: 'error',
        method: 'resources/read',
        target: 'file:///a',
      }),
      // A service uninstalled since: still part of today's total.
      ...records(7, { day: today, service: 99_999, user: other.id, latency: 490 }),
    ]);
    // The meter's counters of the same calls: today's figures are read from them (the count the limit is enforced on).
    const counter = (service: number, userId: number, requests: number, errors: number, latency: number, day = today) => ({
      day,
      service_id: service,
      user_id: userId,
      request_count: requests,
      error_count: errors,
      total_latency_ms: latency,
    });
    await t.ctx.db
      .insertInto('daily_counters')
      .values([
        counter(alpha, user.id, 10, 1, 400),
        counter(alpha, other.id, 30, 0, 1100),
        counter(alpha, user.id, 500, 0, 99_000, yesterday),
        counter(beta, user.id, 3, 3, 10),
        counter(99_999, other.id, 7, 0, 490),
      ])
      .execute();
  });
  afterAll(async () => t?.close());

  const get = async (url: string, as: SuiteUser = user, headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'GET', url, headers: { ...as.headers, ...headers } });

  it('sums today’s system figures for any signed-in user', async () => {
    const res = await get('/api/analytics/system/overview');
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual({
      enabled_services: 3,
      healthy_services: 1,
      unhealthy_services: 1,
      today_total_requests: 50,
      // (400 + 1100 + 10 + 490) / 50
      today_avg_response_time_ms: 40,
    });
  });

  it('lists today’s requests and average latency per installed service', async () => {
    const res = await get('/api/analytics/services/utilization');
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual([
      {
        service_id: ids.alpha,
        service_name: 'alpha',
        display_name: 'Alpha',
        enabled: true,
        today_request_count: 40,
        today_avg_latency_ms: 37.5,
      },
      {
        service_id: ids.beta,
        service_name: 'beta',
        display_name: 'beta',
        enabled: true,
        today_request_count: 3,
        today_avg_latency_ms: 3.33,
      },
      {
        service_id: ids.gamma,
        service_name: 'gamma',
        display_name: 'Gamma',
        enabled: true,
        today_request_count: 0,
        today_avg_latency_ms: 0,
      },
      {
        service_id: ids.delta,
        service_name: 'delta',
        display_name: 'Delta',
        enabled: false,
        today_request_count: 0,
        today_avg_latency_ms: 0,
      },
    ]);
  });

  it('answers the last 30 days by default: every day, per service busiest first', async () => {
    const res = await get('/api/analytics/history');
    expect(res.statusCode, res.body).toBe(200);
    const data = res.json().data;
    expect(data.from).toBe(addDays(today, -29));
    expect(data.to).toBe(today);
    expect(data.days).toHaveLength(30);
    expect(data.days.at(-1)).toEqual({
      day: today,
      requests: 50,
      errors: 4,
      limited: 5,
      avg_latency_ms: 40,
      max_latency_ms: 70,
      bytes_in: 5500,
      bytes_out: 50_400,
    });
    expect(data.days.at(-2)).toMatchObject({ day: yesterday, requests: 500, avg_latency_ms: 198 });
    expect(data.days.at(0)).toMatchObject({ requests: 0, avg_latency_ms: 0, max_latency_ms: 0 });
    expect(data.services.map((s: { service_name: string; requests: number }) => [s.service_name, s.requests])).toEqual([
      ['alpha', 540],
      ['', 7],
      ['beta', 3],
    ]);
    expect(data.targets).toEqual([]);
  });

  it('breaks one service down by method and target, and one user’s own figures', async () => {
    const res = await get(`/api/analytics/history?from=${today}&to=${today}&service_id=${ids.alpha}`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.targets).toEqual([
      {
        method: 'tools/call',
        target: 'fetch',
        requests: 30,
        errors: 0,
        limited: 5,
        avg_latency_ms: 36.67,
        max_latency_ms: 56,
        bytes_in: 3500,
        bytes_out: 30_400,
      },
      {
        method: 'tools/call',
        target: 'search',
        requests: 10,
        errors: 1,
        limited: 0,
        avg_latency_ms: 40,
        max_latency_ms: 60,
        bytes_in: 1000,
        bytes_out: 10_000,
      },
    ]);
    const mine = await get(`/api/analytics/history?from=${yesterday}&user_id=${user.id}`);
    expect(mine.statusCode, mine.body).toBe(200);
    expect(
      mine
        .json()
        .data.days.slice(0, 2)
        .map((d: { requests: number }) => d.requests),
    ).toEqual([500, 13]);
    expect(mine.json().data.to).toBe(addDays(yesterday, 29));
  });

  it('shows another user’s figures to administrators only', async () => {
    expect((await get(`/api/analytics/history?user_id=${other.id}`)).statusCode).toBe(403);
    const res = await get(`/api/analytics/history?user_id=${other.id}`, admin);
    expect(res.statusCode).toBe(200);
    expect(res.json().data.days.at(-1)).toMatchObject({ requests: 37, limited: 5 });
  });

  it('refuses bad dates and ranges with localised messages', async () => {
    const bad = await get('/api/analytics/history?from=2026-02-30');
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({
      code: 'invalid_day',
      message: 'Invalid value for from: "2026-02-30" is not a date such as 2026-01-31',
    });
    const zh = await get('/api/analytics/history?to=tomorrow', user, { 'accept-language': 'zh-CN' });
    expect(zh.json().message).toBe('to 的值无效："tomorrow" 不是有效日期，格式如 2026-01-31');
    const reversed = await get('/api/analytics/history?from=2026-03-02&to=2026-03-01');
    expect(reversed.statusCode).toBe(400);
    expect(reversed.json().message).toBe('Invalid date range: 2026-03-02 is after 2026-03-01');
    const long = await get('/api/analytics/history?from=2025-01-01&to=2026-03-01', user, { 'accept-language': 'zh-CN' });
    expect(long.statusCode).toBe(400);
    expect(long.json().message).toBe('日期范围无效：一次最多查看 366 天');
  });

  it('leaves a service out of every figure for a user without access to it (issue 17)', async () => {
    const restrict = (user_ids: number[], restricted = true) =>
      t.app.inject({
        method: 'PUT',
        url: `/api/mcp_services/${ids.alpha}`,
        headers: admin.headers,
        payload: { access: { restricted, user_ids } },
      });
    expect((await restrict([other.id])).statusCode).toBe(200);
    try {
      // The role-1 user without access: alpha is gone from the overview, the utilization and the history.
      expect((await get('/api/analytics/system/overview')).json().data).toEqual({
        enabled_services: 2,
        healthy_services: 0,
        unhealthy_services: 1,
        today_total_requests: 10,
        today_avg_response_time_ms: 50,
      });
      const services = (await get('/api/analytics/services/utilization')).json().data.map((s: { service_name: string }) => s.service_name);
      expect(services).toEqual(['beta', 'gamma', 'delta']);
      const history = (await get('/api/analytics/history')).json().data;
      expect(history.days.at(-1)).toMatchObject({ day: today, requests: 10 });
      expect(history.days.at(-2)).toMatchObject({ day: yesterday, requests: 0 });
      expect(history.services.map((s: { service_name: string }) => s.service_name)).toEqual(['', 'beta']);
      const one = await get(`/api/analytics/history?service_id=${ids.alpha}`);
      expect(one.statusCode).toBe(403);
      // Refused by the id asked: the name of a service the user may not use is not told (decision 0040).
      expect(one.json().message).toBe(`You do not have access to the service with ID ${ids.alpha}`);
      expect((await get(`/api/analytics/history?service_id=${ids.alpha}`, user, { 'accept-language': 'zh-CN' })).json().message).toBe(
        `你无权使用 ID 为 ${ids.alpha} 的服务`,
      );

      // The user on the list and the admin still see it, with today's 50 requests.
      expect(
        (await get('/api/analytics/services/utilization', other)).json().data.map((s: { service_name: string }) => s.service_name),
      ).toContain('alpha');
      expect((await get('/api/analytics/system/overview', admin)).json().data.today_total_requests).toBe(50);
    } finally {
      expect((await restrict([], false)).statusCode).toBe(200);
    }
    expect((await get('/api/analytics/system/overview')).json().data.today_total_requests).toBe(50);
  });

  it('needs a signed-in caller', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/api/analytics/system/overview' })).statusCode).toBe(401);
    expect((await t.app.inject({ method: 'GET', url: '/api/analytics/history' })).statusCode).toBe(401);
  });
});
