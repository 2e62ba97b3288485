/**
 * History benchmark (issue "Operations"); not part of `npm test`. Run from the repository root:
 *
 *   npx tsx bench/history.bench.ts                       # SQLite, 5 million request records
 *   npx tsx bench/history.bench.ts --pg                  # PostgreSQL (a fresh database on BENCH_PG_URL's server)
 *   BENCH_ROWS=10000 npx tsx bench/history.bench.ts      # smoke run
 *
 * Builds the real app on a fresh database, bulk-loads request records spread over BENCH_DAYS days
 * (20 services, 50 users, a few tools each, 5% failed, 1% refused) and service log lines, builds
 * the daily rollups from them, then times the analytics and logs endpoints through `app.inject`
 * (p50/p95 over BENCH_CALLS calls per case, after a warm-up), with a trivial authenticated endpoint
 * as the baseline of the same run and the raw queries the rollups replace for comparison. Prints a
 * Markdown report. See docs/performance.md.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { buildApp } from '../apps/server/src/app.js';
import { loadConfig } from '../apps/server/src/config.js';
import { type Db, openDatabase } from '../apps/server/src/db/db.js';
import { dayIn } from '../apps/server/src/infra/day.js';
import { createLogger } from '../apps/server/src/infra/logger.js';
import { addDays } from '../apps/server/src/modules/history/days.js';
import { recomputeRollups, recordedDays } from '../apps/server/src/modules/history/rollups.js';
import { serviceRow } from '../apps/server/test/kits/service-row.js';

const ROWS = Number(process.env.BENCH_ROWS ?? 5_000_000);
const DAYS = Number(process.env.BENCH_DAYS ?? 60);
const LOG_LINES = Number(process.env.BENCH_LOG_LINES ?? 50_000);
const CALLS = Number(process.env.BENCH_CALLS ?? 100);
const WARMUP = 5;
const SERVICES = 20;
const USERS = 50;
const TIME_ZONE = 'Asia/Shanghai';
const POSTGRES = process.argv.includes('--pg');
const PG_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const ADMIN_PASSWORD = 'bench-admin-password';
const CHUNK = 20_000;

const ms = (n: number) => n.toFixed(2);
const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
const log = (line: string) => process.stderr.write(`${line}\n`);

/** A small deterministic generator, so two runs load the same history. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1_664_525) + 1_013_904_223) >>> 0;
    return s / 2 ** 32;
  };
}

type RecordRow = [number, string, number, number, string, string, number, string, number, number, string];
const RECORD_COLUMNS = [
  'created_at',
  'day',
  'service_id',
  'user_id',
  'method',
  'target',
  'latency_ms',
  'outcome',
  'bytes_in',
  'bytes_out',
  'error_message',
];

/** Records in time order (as the meter writes them) from `start` to `end`, a chunk at a time. */
function* recordChunks(start: number, end: number): Generator<RecordRow[]> {
  const rnd = random(42);
  const step = (end - start) / ROWS;
  const tools = ['search', 'fetch', 'read_file', 'write_file', 'list', 'echo', 'add', 'summarise'];
  let chunk: RecordRow[] = [];
  for (let i = 0; i < ROWS; i += 1) {
    const at = Math.floor(start + i * step + rnd() * step);
    const service = 1 + Math.floor(rnd() * rnd() * SERVICES); // a few busy services, a long tail
    const roll = rnd();
    const outcome = roll < 0.01 ? 'limited' : roll < 0.06 ? 'error' : 'ok';
    const resource = rnd() < 0.1;
    chunk.push([
      at,
      dayIn(TIME_ZONE, at),
      service,
      1 + Math.floor(rnd() * USERS),
      resource ? 'resources/read' : 'tools/call',
      resource ? `file:///data/${Math.floor(rnd() * 5)}.txt` : (tools[(service + Math.floor(rnd() * 4)) % tools.length] as string),
      outcome === 'limited' ? 0 : Math.floor(5 + rnd() * rnd() * 2000),
      outcome,
      80 + Math.floor(rnd() * 400),
      outcome === 'limited' ? 90 : Math.floor(rnd() * 20_000),
      outcome === 'error' ? 'upstream error: tool failed' : outcome === 'limited' ? 'daily request limit exceeded: 1000/1000' : '',
    ]);
    if (chunk.length === CHUNK) {
      yield chunk;
      chunk = [];
    }
  }
  if (chunk.length > 0) yield chunk;
}

function logLines(start: number, end: number) {
  const rnd = random(7);
  return Array.from({ length: LOG_LINES }, (_, i) => {
    const service = 1 + Math.floor(rnd() * SERVICES);
    const install = rnd() < 0.1;
    return {
      created_at: Math.floor(start + ((end - start) * i) / LOG_LINES),
      service_id: service,
      service_name: `svc-${service}`,
      phase: install ? 'install' : 'run',
      level: rnd() < 0.05 ? 'error' : rnd() < 0.1 ? 'warn' : 'info',
      message: install ? `npm install step ${i}` : `stderr line ${i}: something happened`,
    };
  });
}

interface Loader {
  records(rows: RecordRow[]): Promise<void>;
  /** Drops the secondary indexes of request_records for the load and puts the same ones back after. */
  withoutIndexes(load: () => Promise<void>): Promise<void>;
  query(text: string, params?: unknown[]): Promise<unknown[]>;
  /** Planner statistics after the load (PostgreSQL; SQLite runs without, as a fresh install does). */
  analyze(): Promise<void>;
  close(): Promise<void>;
}

function sqliteLoader(file: string): Loader {
  const raw = new SQLite(file);
  raw.pragma('journal_mode = WAL');
  raw.pragma('synchronous = OFF');
  const insert = raw.prepare(
    `INSERT INTO request_records (${RECORD_COLUMNS.join(', ')}) VALUES (${RECORD_COLUMNS.map(() => '?').join(', ')})`,
  );
  const many = raw.transaction((rows: RecordRow[]) => {
    for (const r of rows) insert.run(...r);
  });
  return {
    records: async (rows) => {
      many(rows);
    },
    withoutIndexes: async (load) => {
      const defs = raw
        .prepare(`SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'request_records' AND sql IS NOT NULL`)
        .all() as { name: string; sql: string }[];
      for (const d of defs) raw.exec(`DROP INDEX ${d.name}`);
      await load();
      for (const d of defs) raw.exec(d.sql);
    },
    query: async (text, params = []) => raw.prepare(text).all(...params),
    analyze: async () => undefined,
    close: async () => {
      raw.close();
    },
  };
}

async function pgLoader(url: string): Promise<Loader> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const types = ['bigint', 'text', 'int', 'int', 'text', 'text', 'int', 'text', 'int', 'int', 'text'];
  return {
    records: async (rows) => {
      const columns = RECORD_COLUMNS.map((_, c) => rows.map((r) => r[c]));
      await client.query(
        `INSERT INTO request_records (${RECORD_COLUMNS.join(', ')}) SELECT * FROM unnest(${types.map((t, i) => `$${i + 1}::${t}[]`).join(', ')})`,
        columns,
      );
    },
    withoutIndexes: async (load) => {
      const { rows } = await client.query<{ indexname: string; indexdef: string }>(
        `SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'request_records' AND indexname <> 'request_records_pkey'`,
      );
      for (const r of rows) await client.query(`DROP INDEX ${r.indexname}`);
      await load();
      await client.query('SET maintenance_work_mem = $1', ['512MB']).catch(() => client.query(`SET maintenance_work_mem = '512MB'`));
      for (const r of rows) await client.query(r.indexdef);
      await client.query('ANALYZE');
    },
    query: async (text, params = []) => (await client.query(text, params)).rows,
    analyze: async () => {
      await client.query('ANALYZE');
    },
    close: async () => client.end(),
  };
}

/** Services, request records (bulk), service log lines, then the rollups; a line for the report. */
async function generate(db: Db, loader: Loader, now: number): Promise<string> {
  for (let i = 1; i <= SERVICES; i += 1) {
    await db
      .insertInto('services')
      .values(
        serviceRow({
          name: `svc-${i}`,
          display_name: `Service ${i}`,
          command: '/bin/true',
          enabled: 0,
          health_status: i % 4 === 0 ? 'unhealthy' : 'healthy',
          tool_count: 8,
          created_at: now,
          updated_at: now,
        }),
      )
      .execute();
  }

  // The history: DAYS days up to now, in the server time zone.
  const start = now - DAYS * 86_400_000;
  const loadStarted = performance.now();
  await loader.withoutIndexes(async () => {
    let done = 0;
    for (const chunk of recordChunks(start, now)) {
      await loader.records(chunk);
      done += chunk.length;
      if (done % 500_000 < CHUNK) log(`  ${done} records`);
    }
  });
  const loadSeconds = (performance.now() - loadStarted) / 1000;
  const lines = logLines(start, now);
  for (let i = 0; i < lines.length; i += 2000) {
    await db
      .insertInto('service_logs')
      .values(lines.slice(i, i + 2000))
      .execute();
  }

  const rollupStarted = performance.now();
  const days = await recordedDays(db);
  const rolled = await recomputeRollups(db, days);
  const rollupSeconds = (performance.now() - rollupStarted) / 1000;
  await loader.analyze();
  return `bulk load ${loadSeconds.toFixed(1)} s (indexes rebuilt after), rollups of ${rolled.rebuilt.length} days built in ${rollupSeconds.toFixed(1)} s`;
}

async function main(): Promise<void> {
  // BENCH_DATA_DIR keeps the history between runs (SQLite: that directory; PostgreSQL: the database
  // tp_bench_history_kept): loaded once, measured again and again.
  const keep = process.env.BENCH_DATA_DIR;
  const dataDir = keep ?? mkdtempSync(path.join(tmpdir(), 'toolport-history-bench-'));
  if (keep) mkdirSync(keep, { recursive: true });
  let reuse = keep !== undefined && !POSTGRES && existsSync(path.join(keep, 'toolport.db'));
  let pgName: string | undefined;
  let databaseUrl: string | undefined;
  if (POSTGRES) {
    pgName = keep ? 'tp_bench_history_kept' : `tp_bench_history_${process.pid}`;
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [pgName]);
    reuse = keep !== undefined && exists.rowCount === 1;
    if (!reuse) await admin.query(`CREATE DATABASE ${pgName}`);
    await admin.end();
    const url = new URL(PG_URL);
    url.pathname = `/${pgName}`;
    databaseUrl = url.toString();
  }
  const config = loadConfig({
    DATA_DIR: dataDir,
    ADMIN_PASSWORD,
    SECRET_KEY: 'bench-secret-key-that-is-long-enough-0123456789',
    LOG_LEVEL: 'silent',
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
  });
  const database = openDatabase(config);
  const { app, ctx } = await buildApp({ config, database, logger: createLogger('silent'), print: () => undefined });
  await app.ready();
  const report: string[] = [];
  try {
    await ctx.options.set('TimeZone', TIME_ZONE);
    const now = Date.now();
    const today = dayIn(TIME_ZONE, now);
    const loader = database.engine === 'postgres' ? await pgLoader(databaseUrl as string) : sqliteLoader(database.describe);
    let loaded = 'reused the history of an earlier run (BENCH_DATA_DIR)';
    if (!reuse) loaded = await generate(ctx.db, loader, now);
    const rollupRows = await ctx.db
      .selectFrom('request_rollups')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    const size =
      database.engine === 'postgres'
        ? `${Math.round(Number(((await loader.query('SELECT pg_database_size(current_database()) AS n')) as { n: string }[])[0]?.n) / 2 ** 20)} MB`
        : `${Math.round(statSync(database.describe).size / 2 ** 20)} MB (+ WAL)`;

    const login = await app.inject({ method: 'POST', url: '/api/auth/login', payload: { username: 'root', password: ADMIN_PASSWORD } });
    const headers = { authorization: `Bearer ${login.json().data.access_token}` };
    const logsTotal = async (query: string) => {
      const res = await app.inject({ method: 'GET', url: `/api/mcp_logs?${query}`, headers });
      return res.json().data.total as number;
    };
    const lastPage = async (query: string) => `${query}${query ? '&' : ''}page=${Math.max(1, Math.ceil((await logsTotal(query)) / 20))}`;
    const middlePage = async (query: string) => `${query}${query ? '&' : ''}page=${Math.max(1, Math.ceil((await logsTotal(query)) / 40))}`;

    const cases: [string, string][] = [
      ['baseline: GET /api/user/self', '/api/user/self'],
      ['analytics: system overview', '/api/analytics/system/overview'],
      ['analytics: services utilization', '/api/analytics/services/utilization'],
      ['analytics: history, last 30 days', '/api/analytics/history'],
      [`analytics: history, ${DAYS} days, one service + tools`, `/api/analytics/history?from=${addDays(today, 1 - DAYS)}&service_id=3`],
      ['analytics: history, 30 days, one user', '/api/analytics/history?user_id=7'],
      ['logs: page 1', '/api/mcp_logs?page=1'],
      ['logs: page 50', '/api/mcp_logs?page=50'],
      ['logs: middle page', `/api/mcp_logs?${await middlePage('')}`],
      ['logs: last page', `/api/mcp_logs?${await lastPage('')}`],
      ['logs: level=error, page 1', '/api/mcp_logs?level=error'],
      ['logs: level=error, last page', `/api/mcp_logs?${await lastPage('level=error')}`],
      ['logs: service_id=3, page 1', '/api/mcp_logs?service_id=3'],
      ['logs: service_id=3, middle page', `/api/mcp_logs?${await middlePage('service_id=3')}`],
      ['logs: service_id=3&level=warn, last page', `/api/mcp_logs?${await lastPage('service_id=3&level=warn')}`],
      ['logs: service_name=svc-1 (11 services), page 1', '/api/mcp_logs?service_name=svc-1'],
      ['logs: service_name=svc-1, middle page', `/api/mcp_logs?${await middlePage('service_name=svc-1')}`],
      ['logs: phase=install, last page', `/api/mcp_logs?${await lastPage('phase=install')}`],
    ];

    const results: { name: string; url: string; p50: number; p95: number; max: number }[] = [];
    for (const [name, url] of cases) {
      const times: number[] = [];
      for (let i = 0; i < WARMUP + CALLS; i += 1) {
        const started = performance.now();
        const res = await app.inject({ method: 'GET', url, headers });
        const elapsed = performance.now() - started;
        if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body.slice(0, 300)}`);
        if (i >= WARMUP) times.push(elapsed);
      }
      times.sort((a, b) => a - b);
      results.push({ name, url, p50: percentile(times, 50), p95: percentile(times, 95), max: times[times.length - 1] ?? 0 });
      log(`  ${name}: p50 ${ms(percentile(times, 50))} ms`);
    }

    // What the rollups and indexes replace: the same figures straight from request_records.
    const raw: [string, string, unknown[]][] = [
      ['raw: COUNT(*) of request_records (a logs total without rollups)', 'SELECT COUNT(*) AS n FROM request_records', []],
      [
        'raw: 30 days per day from request_records (history without rollups)',
        'SELECT day, COUNT(*) AS n, SUM(latency_ms) AS l FROM request_records WHERE day >= $1 GROUP BY day',
        [addDays(today, -29)],
      ],
      [
        'raw: middle page of request_records by plain OFFSET (no seek)',
        'SELECT id FROM request_records ORDER BY created_at DESC, id DESC LIMIT 20 OFFSET $1',
        [ROWS / 2],
      ],
    ];
    const rawResults: { name: string; p50: number }[] = [];
    for (const [name, text, params] of raw) {
      const query = database.engine === 'postgres' ? text : text.replace(/\$\d+/g, '?');
      const times: number[] = [];
      for (let i = 0; i < 6; i += 1) {
        const started = performance.now();
        await loader.query(query, params);
        if (i > 0) times.push(performance.now() - started);
      }
      times.sort((a, b) => a - b);
      rawResults.push({ name, p50: percentile(times, 50) });
      log(`  ${name}: p50 ${ms(percentile(times, 50))} ms`);
    }
    await loader.close();

    const baseline = results[0] as { p50: number };
    const row = (cells: string[]) => `| ${cells.join(' | ')} |`;
    report.push(
      `History benchmark: ${database.engine}, ${ROWS.toLocaleString('en')} request records over ${DAYS} days (${TIME_ZONE}), ` +
        `${LOG_LINES.toLocaleString('en')} service log lines, ${SERVICES} services, ${USERS} users; ${CALLS} calls per case via app.inject.`,
    );
    report.push(`${loaded}; ${Number(rollupRows.n).toLocaleString('en')} rows in request_rollups; database ${size}.`);
    report.push('');
    report.push(row(['Case', 'p50 ms', 'p95 ms', 'max ms', 'p50 / baseline']));
    report.push(row(['---', '---:', '---:', '---:', '---:']));
    for (const r of results) report.push(row([r.name, ms(r.p50), ms(r.p95), ms(r.max), `${(r.p50 / baseline.p50).toFixed(1)}x`]));
    for (const r of rawResults) report.push(row([r.name, ms(r.p50), '', '', `${(r.p50 / baseline.p50).toFixed(1)}x`]));
    process.stdout.write(`${report.join('\n')}\n`);
  } finally {
    await app.close();
    await database.db.destroy();
    if (!keep) rmSync(dataDir, { recursive: true, force: true });
    if (pgName && !keep) {
      const admin = new pg.Client({ connectionString: PG_URL });
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS ${pgName} WITH (FORCE)`);
      await admin.end();
    }
  }
}

await main();
