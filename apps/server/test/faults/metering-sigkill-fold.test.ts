import pg from 'pg';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliRun, exitOf } from '../built-cli.js';
import { REDIS_URL } from '../cluster/cluster-kit.js';
import { FIXTURE_SERVER } from '../fixtures/upstream-kit.js';
import { connect, type McpClient, textOf, until } from '../gateway/clients.js';
import { killedServerKit } from './killed-server-kit.js';
import { type PrivatePostgres, startPrivatePostgres } from './private-servers.js';

const ADMIN_PASSWORD = 'metering-fold-kill-password';
const SECRET_KEY = 'metering-fold-kill-secret-key-0123456789abcdef';
// Above what six clients can make in the 1.5 s of the freeze on a quiet machine (about 1,300), so the limit is met only after the restart.
const LIMIT = 4000;
const BEFORE_FREEZE = 100;
const CLIENTS = 6;

/**
 * Issue 25, item 3 (decision 0043), on PostgreSQL and Redis: the built server under load, its
 * PostgreSQL frozen so that the next fold of the journal hangs half-way, calls still answered from
 * memory meanwhile, then the server SIGKILLed in the middle of that fold and the database thawed.
 * The restart on the same DATA_DIR folds the killed run's journal before its first call: every
 * answered call is counted (at most the calls in flight at the kill more), and the daily limit
 * carries on from that count, in the database and in Redis alike.
 */
describe('SIGKILL in the middle of a fold, on PostgreSQL and Redis', () => {
  let pgServer: PrivatePostgres;
  const prefix = `toolport-fold-kill:${process.pid}:${Math.random().toString(36).slice(2, 8)}:`;
  // DATABASE_URL is the private server's, known once it runs: the kit reads this object at each start.
  const env: Record<string, string> = { REDIS_URL, REDIS_PREFIX: prefix };
  const kit = killedServerKit('metering-fold-kill', { adminPassword: ADMIN_PASSWORD, secretKey: SECRET_KEY }, env);
  const clients: McpClient[] = [];
  const counted = async (serviceId: number) => {
    const client = new pg.Client({ connectionString: pgServer.url });
    await client.connect();
    try {
      const { rows } = await client.query('select coalesce(sum(request_count), 0) as n from daily_counters where service_id = $1', [
        serviceId,
      ]);
      return Number(rows[0]?.n);
    } finally {
      await client.end();
    }
  };

  beforeAll(async () => {
    await kit.prepare();
    pgServer = await startPrivatePostgres();
    env.DATABASE_URL = pgServer.url;
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await pgServer?.close();
    const redis = createClient({ url: REDIS_URL });
    await redis.connect();
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(keys);
    await redis.close();
    kit.cleanUp();
  });

  // About 35 s on a quiet machine; the bound is for a loaded one (120 s once ran out in a full run).
  it('folds the killed run once at the restart, and the limit carries on', { timeout: 300_000 }, async () => {
    let run: CliRun | undefined;
    const first = await kit.start();
    run = first.run;
    try {
      const token = await kit.login(first.url);
      const serviceId = await kit.addStdioService(first.url, token, 'counted', `${process.execPath} ${FIXTURE_SERVER}`);
      await kit.api(first.url, 'PUT', `/api/mcp_services/${serviceId}`, token, { rpd_limit: LIMIT });
      const key = (await kit.api(first.url, 'GET', '/api/user/token', token)) as string;
      for (let i = 0; i < CLIENTS; i++) clients.push(await connect(first.url, 'counted', key, { sdk: i % 2 ? 'v2' : 'v1', wire: 'http' }));

      let answered = 0;
      let killed = false;
      let frozenAt = 0;
      await Promise.all(
        clients.map(async (c, i) => {
          for (let n = 0; !killed; n++) {
            try {
              const text = textOf(await c.callTool('echo', { text: `${i}-${n}` }, { timeout: 10_000 }));
              if (text !== `echo: ${i}-${n}`) throw new Error(`unexpected answer ${text}`);
              if (killed) return;
              answered += 1;
              if (answered === BEFORE_FREEZE) {
                pgServer.freeze();
                frozenAt = Date.now();
              }
              // 1.5 s frozen: the once-a-second fold has begun and hangs on the database. Calls go on meanwhile.
              if (frozenAt > 0 && Date.now() - frozenAt >= 1500 && !killed) {
                killed = true;
                first.run.child.kill('SIGKILL');
              }
            } catch (err) {
              if (!killed) throw err;
            }
            await new Promise((r) => setTimeout(r, 5));
          }
        }),
      );
      expect(await exitOf(first.run)).toBe('SIGKILL');
      run = undefined;
      pgServer.thaw();
      expect(answered).toBeGreaterThan(BEFORE_FREEZE);

      // The calls answered while the database was frozen are in no table yet: only in the journal.
      expect(await counted(serviceId)).toBeLessThan(answered);
      const second = await kit.start();
      run = second.run;
      // Folded before the restart took its first call: every answered call, at most those in flight more.
      const afterKill = await counted(serviceId);
      expect(afterKill).toBeGreaterThanOrEqual(answered);
      expect(afterKill).toBeLessThanOrEqual(answered + CLIENTS);

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
      expect(refusal).toMatch(new RegExp(`daily request limit exceeded: ${LIMIT}/${LIMIT}`));
      expect(more).toBe(LIMIT - afterKill);
      second.run.child.kill('SIGTERM');
      expect(await exitOf(second.run)).toBe(0);
      run = undefined;
      await until(async () => (await counted(serviceId)) === LIMIT, 'the final count');
    } finally {
      if (run && run.child.exitCode === null) run.child.kill('SIGKILL');
      pgServer.thaw();
    }
  });
});
