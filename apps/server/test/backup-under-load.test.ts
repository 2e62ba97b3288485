import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuiltCli, exitOf, runCli } from './built-cli.js';
import { connect, type McpClient, textOf, until } from './gateway/clients.js';
import { addService, addUser, type LiveGateway, startGateway } from './gateway/gateway-harness.js';

/** The SECRET_KEY startGateway configures; the CLI gets the same one, as an operator's shell would. */
const SECRET_KEY = 'test-secret-key-that-is-long-enough-0123456789';
/** The day the test's own paired writes use, apart from the meter's real traffic of today. */
const PAIR_DAY = '2000-01-01';

type Dump = { schema: string[]; tables: Record<string, string[]> };

/** A dump without the audit trail's rows and their sequence (the trail is where a backup records itself). */
function withoutAuditTrail(d: Dump): Dump {
  const { audit_entries: _trail, ...tables } = d.tables;
  const sequence = tables.sqlite_sequence?.filter((row) => !row.includes('"audit_entries"'));
  return { schema: d.schema, tables: sequence ? { ...tables, sqlite_sequence: sequence } : tables };
}

/** Every table's rows (order-free: VACUUM may renumber implicit rowids) and the schema, read in one transaction. */
function dump(file: string): Dump {
  const db = new SQLite(file, { readonly: true, fileMustExist: true });
  try {
    return db.transaction(() => {
      const schema = db
        .prepare("select type || ' ' || name || ': ' || coalesce(sql, '') from sqlite_master order by type, name")
        .pluck()
        .all() as string[];
      const names = db.prepare("select name from sqlite_master where type = 'table' order by name").pluck().all() as string[];
      const tables: Record<string, string[]> = {};
      for (const name of names) {
        tables[name] = (db.prepare(`select * from "${name}"`).all() as unknown[]).map((row) => JSON.stringify(row)).sort();
      }
      return { schema, tables };
    })();
  } finally {
    db.close();
  }
}

/**
 * `toolport backup` (the built CLI, a child process) copies the live SQLite database while real MCP
 * clients call a stdio server-everything through the gateway and paired writes commit: the copy is
 * one consistent snapshot. Once the load has stopped, an online backup restored into a fresh
 * DATA_DIR by `toolport restore` holds exactly the source's rows, and the server can use it.
 */
// Each test runs the built CLI beside a gateway under full load: on two busy cores a start alone can take seconds, so
// the guard against a hang is two minutes rather than the suite's 30 s.
describe('toolport backup under load, toolport restore', { timeout: 120_000 }, () => {
  let gw: LiveGateway;
  let work: string;
  let alice: { id: number; key: string };
  let serviceId: number;
  const clients: McpClient[] = [];
  const cliEnv = () => ({ DATA_DIR: gw.config.dataDir, SECRET_KEY });
  const live = () => path.join(gw.config.dataDir, 'toolport.db');

  beforeAll(async () => {
    await ensureBuiltCli();
    work = mkdtempSync(path.join(tmpdir(), 'toolport-backup-load-'));
    gw = await startGateway('sqlite');
    alice = await addUser(gw.ctx, 'alice');
    serviceId = await addService(gw.ctx, { name: 'everything' });
    for (const opts of [
      { sdk: 'v1', wire: 'http' },
      { sdk: 'v2', wire: 'http' },
      { sdk: 'v1', wire: 'sse' },
    ] as const) {
      clients.push(await connect(gw.url, 'everything', alice.key, opts));
    }
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await gw?.close();
    rmSync(work, { recursive: true, force: true });
  });

  it('backs up a consistent snapshot while calls are metered, and restores an identical database', async () => {
    let stop = false;
    let calls = 0;
    let pairs = 0;
    // Real traffic: counted tools/call requests through the gateway, metered and recorded.
    const load = clients.map(async (client, n) => {
      for (let i = 0; !stop; i++) {
        expect(textOf(await client.callTool('echo', { message: `${n}-${i}` }))).toBe(`Echo: ${n}-${i}`);
        calls += 1;
      }
    });
    // Paired writes: a request record and its counter increment in one transaction each.
    const paired = (async () => {
      while (!stop) {
        await gw.ctx.db.transaction().execute(async (trx) => {
          await trx
            .insertInto('request_records')
            .values({
              created_at: Date.now(),
              day: PAIR_DAY,
              service_id: serviceId,
              user_id: alice.id,
              method: 'tools/call',
              target: 'paired',
              latency_ms: 1,
              outcome: 'ok',
              bytes_in: 1,
              bytes_out: 1,
              error_message: '',
            })
            .execute();
          await trx
            .insertInto('daily_counters')
            .values({ day: PAIR_DAY, service_id: serviceId, user_id: alice.id, request_count: 1, error_count: 0, total_latency_ms: 1 })
            .onConflict((oc) =>
              oc.columns(['day', 'service_id', 'user_id']).doUpdateSet({ request_count: sql`daily_counters.request_count + 1` }),
            )
            .execute();
        });
        pairs += 1;
        // better-sqlite3 answers synchronously: without a turn of the event loop this would starve it.
        await new Promise((r) => setImmediate(r));
      }
    })();
    const running = [...load, paired];

    try {
      // A load loop that failed ends the wait with its error.
      await Promise.race([
        until(() => calls >= 30 && pairs >= 30, 'calls and paired writes'),
        ...running.map((p) => p.then(() => undefined)),
      ]);
      const pairsBefore = pairs;
      const callsBefore = calls;
      const snapshot = path.join(work, 'under-load.db');
      const run = runCli(['backup', snapshot], cliEnv());
      expect(await exitOf(run), run.stderr()).toBe(0);
      expect(run.stdout()).toMatch(/^Backed up .*toolport\.db to .*under-load\.db \(\d+ users, 1 services, \d+ request records/);
      // The load really ran while the backup did.
      expect(calls).toBeGreaterThan(callsBefore);
      expect(pairs).toBeGreaterThan(pairsBefore);

      const db = new SQLite(snapshot, { readonly: true });
      try {
        expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
        const counted = Number(
          db.prepare('select coalesce(sum(request_count), 0) from daily_counters where day = ?').pluck().get(PAIR_DAY),
        );
        const recorded = Number(db.prepare('select count(*) from request_records where day = ?').pluck().get(PAIR_DAY));
        // One transaction's two writes are in the snapshot together or not at all.
        expect(counted).toBe(recorded);
        expect(recorded).toBeGreaterThanOrEqual(pairsBefore);
        expect(recorded).toBeLessThanOrEqual(pairs);
      } finally {
        db.close();
      }
    } finally {
      stop = true;
      await Promise.all(running);
    }

    // Quiesced: every call answered, pending counters and records written. The server keeps running.
    await gw.ctx.meter.flush();
    const backup = path.join(work, 'quiesced.db');
    let before: Dump | undefined;
    let after: Dump | undefined;
    // A periodic write (a health check, a log line) between the two reads would make them differ: try again.
    // The backup records itself in the live database's audit trail once the copy is made (decision 0049): the
    // comparison leaves that trail out, and the trail is asked for the one new entry.
    let recorded: string[] = [];
    for (let attempt = 0; attempt < 3 && (!before || JSON.stringify(before) !== JSON.stringify(after)); attempt++) {
      const full = dump(live());
      before = withoutAuditTrail(full);
      const run = runCli(['backup', backup], cliEnv());
      expect(await exitOf(run), run.stderr()).toBe(0);
      const fullAfter = dump(live());
      after = withoutAuditTrail(fullAfter);
      const known = new Set(full.tables.audit_entries);
      recorded = (fullAfter.tables.audit_entries ?? []).filter((row) => !known.has(row));
    }
    expect(after).toEqual(before);
    expect(recorded.map((row) => (JSON.parse(row) as { action: string; object_id: string }).action)).toEqual(['backup']);
    expect((JSON.parse(recorded[0] as string) as { object_id: string }).object_id).toBe(backup);
    const source = before as Dump;
    const tools = JSON.parse(source.tables.daily_counters?.find((r) => !r.includes(PAIR_DAY)) ?? '{}') as { request_count?: number };
    expect(tools.request_count).toBe(calls);

    const fresh = path.join(work, 'fresh-data');
    const restore = runCli(['restore', backup], { DATA_DIR: fresh, SECRET_KEY });
    expect(await exitOf(restore), restore.stderr()).toBe(0);
    expect(restore.stdout()).toContain(`to ${path.join(fresh, 'toolport.db')}`);
    expect(withoutAuditTrail(dump(path.join(fresh, 'toolport.db')))).toEqual(source);

    const migrate = runCli(['migrate'], { DATA_DIR: fresh, SECRET_KEY });
    expect(await exitOf(migrate), migrate.stderr()).toBe(0);
    expect(migrate.stdout()).toBe('Database is up to date\n');
  });

  it('refuses to restore over the running server’s database, which keeps serving', async () => {
    const backup = path.join(work, 'quiesced.db');
    const run = runCli(['restore', backup], cliEnv());
    expect(await exitOf(run)).toBe(1);
    expect(run.stderr()).toBe(
      `toolport: a Toolport server (or another toolport command) is using ${live()}: stop it, then run restore again\n`,
    );
    expect(textOf(await (clients[0] as McpClient).callTool('echo', { message: 'still here' }))).toBe('Echo: still here');

    const usage = runCli(['backup'], cliEnv());
    expect(await exitOf(usage)).toBe(2);
    expect(usage.stderr()).toContain('toolport: expected: toolport backup <file>');
  });
});
