import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliRun, exitOf } from '../built-cli.js';
import { FIXTURE_SERVER } from '../fixtures/upstream-kit.js';
import { connect, type McpClient, textOf, until } from '../gateway/clients.js';
import { killedServerKit } from './killed-server-kit.js';

const ADMIN_PASSWORD = 'metering-kill-password';
const SECRET_KEY = 'metering-kill-secret-key-0123456789abcdef';
const LIMIT = 300;
/** Answered calls before the kill: a few hundred milliseconds of traffic, well inside the meter's old one-second flush. */
const BEFORE_KILL = 150;
const CLIENTS = 8;

/**
 * Issue 14, item 3 (and issue 25: decision 0043): SIGKILL of the built server (SQLite, one instance)
 * right after a burst of answered calls, with no clean shutdown, then a restart on the same DATA_DIR,
 * which folds the killed run's journal. Every call a client got an answer for is in daily_counters and
 * request_records, and the daily limit carries on from the count: the user gets exactly `rpd_limit`
 * calls that day, not `rpd_limit` more.
 */
describe('SIGKILL right after answered calls: counts and the daily limit survive', () => {
  const kit = killedServerKit('metering-kill', { adminPassword: ADMIN_PASSWORD, secretKey: SECRET_KEY });
  const { api } = kit;
  const clients: McpClient[] = [];

  /** What is committed, read through a separate read-only connection. */
  const committed = (serviceId: number) =>
    kit.committed((db) => ({
      counted: Number(db.prepare('select coalesce(sum(request_count), 0) from daily_counters where service_id = ?').pluck().get(serviceId)),
      okRecords: Number(db.prepare("select count(*) from request_records where service_id = ? and outcome = 'ok'").pluck().get(serviceId)),
      rollup: Number(
        db.prepare('select coalesce(sum(request_count), 0) from service_day_rollups where service_id = ?').pluck().get(serviceId),
      ),
    }));

  beforeAll(() => kit.prepare());
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    kit.cleanUp();
  });

  it('keeps every answered call and the limit across a SIGKILL and restart', { timeout: 90_000 }, async () => {
    let run: CliRun | undefined;
    const first = await kit.start();
    run = first.run;
    try {
      const token = await kit.login(first.url);
      const serviceId = await kit.addStdioService(first.url, token, 'counted', `${process.execPath} ${FIXTURE_SERVER}`);
      await api(first.url, 'PUT', `/api/mcp_services/${serviceId}`, token, { rpd_limit: LIMIT });
      const key = (await api(first.url, 'GET', '/api/user/token', token)) as string;
      for (let i = 0; i < CLIENTS; i++) clients.push(await connect(first.url, 'counted', key, { sdk: i % 2 ? 'v2' : 'v1', wire: 'http' }));

      // A burst; the kill lands as the BEFORE_KILL-th answer arrives, while the other clients' calls are in flight.
      let answered = 0;
      let killed = false;
      await Promise.all(
        clients.map(async (c, i) => {
          for (let n = 0; !killed; n++) {
            try {
              const text = textOf(await c.callTool('echo', { text: `${i}-${n}` }, { timeout: 10_000 }));
              if (text !== `echo: ${i}-${n}`) throw new Error(`unexpected answer ${text}`);
              if (killed) return;
              answered += 1;
              if (answered >= BEFORE_KILL) {
                killed = true;
                first.run.child.kill('SIGKILL');
              }
            } catch (err) {
              if (!killed) throw err;
            }
          }
        }),
      );
      expect(await exitOf(first.run)).toBe('SIGKILL');
      run = undefined;
      expect(answered).toBe(BEFORE_KILL);

      // Restarted on the same DATA_DIR: the killed run's journal is folded before the first call is taken.
      const second = await kit.start();
      run = second.run;
      // Every answered call is counted; at most the calls then in flight (admitted, never answered) on top.
      const afterKill = committed(serviceId);
      expect(afterKill.counted).toBeGreaterThanOrEqual(answered);
      expect(afterKill.counted).toBeLessThanOrEqual(answered + CLIENTS);
      // The request records wait in the journal too, written at the end of the event-loop turn that answered
      // (decision 0043): only those of the turn the kill landed in can be missing, and the rollups agree with them.
      expect(afterKill.okRecords).toBeGreaterThanOrEqual(answered - CLIENTS);
      expect(afterKill.okRecords).toBeLessThanOrEqual(afterKill.counted);
      expect(afterKill.rollup).toBe(afterKill.okRecords);

      // The day's limit carries on from the folded count.
      const again = await connect(second.url, 'counted', key, { sdk: 'v1', wire: 'http' });
      clients.push(again);
      let more = 0;
      let refusal = '';
      while (!refusal && more <= LIMIT) {
        try {
          await again.callTool('echo', { text: String(more) });
          more += 1;
        } catch (err) {
          refusal = String(err);
        }
      }
      expect(refusal).toMatch(/daily request limit exceeded: 300\/300/);
      expect(more).toBe(LIMIT - afterKill.counted);
      // The installed list shows the limit enforced once the journal is folded (within about a second).
      const token2 = await kit.login(second.url);
      const usage = async () =>
        (
          (await api(second.url, 'GET', '/api/mcp_market/installed', token2)) as {
            id: number;
            user_daily_request_count: number;
            remaining_requests: number;
          }[]
        ).find((s) => s.id === serviceId);
      await until(async () => (await usage())?.remaining_requests === 0, 'the installed list to show the limit reached', 5000);
      expect(await usage()).toMatchObject({ user_daily_request_count: LIMIT, remaining_requests: 0 });
      second.run.child.kill('SIGTERM');
      expect(await exitOf(second.run)).toBe(0);
      run = undefined;
      expect(committed(serviceId).counted).toBe(LIMIT);
    } finally {
      if (run && run.child.exitCode === null) run.child.kill('SIGKILL');
    }
  });
});
