import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliRun, exitOf } from '../built-cli.js';
import { FIXTURE_SERVER } from '../fixtures/upstream-kit.js';
import { connect, type McpClient, textOf, until } from '../gateway/clients.js';
import { killedServerKit } from './killed-server-kit.js';

const ADMIN_PASSWORD = 'sigkill-test-password';
const SECRET_KEY = 'sigkill-test-secret-key-0123456789abcdef';

/** Alive and not a zombie. */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** Live processes under `root`, read from /proc. */
function descendants(root: number): number[] {
  const parentOf = new Map<number, number>();
  for (const entry of readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parentOf.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // Ended meanwhile.
    }
  }
  const under = (pid: number) => {
    for (let p = parentOf.get(pid); p !== undefined && p > 1; p = parentOf.get(p)) if (p === root) return true;
    return false;
  };
  return [...parentOf.keys()].filter((pid) => under(pid) && alive(pid));
}

interface Snapshot {
  integrity: string;
  counted: number;
  records: unknown[];
  logs: unknown[];
  services: unknown[];
}

/**
 * SIGKILL of the built server (`toolport start` on SQLite) while real clients call a stdio tool
 * server that runs under a shell (a grandchild, as under npx): the killed gateway cannot stop its
 * upstream processes; the next start on the same DATA_DIR kills them, finds the database intact,
 * and every count, install, request record and log line committed before the kill is still there.
 */
describe('SIGKILL of the gateway under load', () => {
  const kit = killedServerKit('sigkill', { adminPassword: ADMIN_PASSWORD, secretKey: SECRET_KEY });
  const { api } = kit;
  const clients: McpClient[] = [];

  /** What is committed, read through a separate read-only connection. */
  const snapshot = (): Snapshot =>
    kit.committed((db) => ({
      integrity: db.prepare('pragma integrity_check').pluck().get() as string,
      counted: Number(db.prepare('select coalesce(sum(request_count), 0) from daily_counters').pluck().get()),
      records: db.prepare('select id, service_id, user_id, target, outcome from request_records order by id').all(),
      logs: db.prepare('select id, service_id, level, message from service_logs order by id').all(),
      services: db.prepare('select id, name, command, args_json, enabled from services order by id').all(),
    }));

  beforeAll(() => kit.prepare());
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    kit.cleanUp();
  });

  it('leaves nothing running after the next start and loses nothing committed', { timeout: 90_000 }, async () => {
    let run: CliRun | undefined;
    const first = await kit.start();
    run = first.run;
    try {
      const token = await kit.login(first.url);
      // A shell as leader; the server starts a child of its own that ignores SIGTERM and stdin's end.
      await kit.addStdioService(
        first.url,
        token,
        'fixture',
        `/bin/sh -c 'FIXTURE_MODE=fork-child ${process.execPath} ${FIXTURE_SERVER}; exit'`,
      );
      const key = (await api(first.url, 'GET', '/api/user/token', token)) as string;
      for (let i = 0; i < 3; i++) clients.push(await connect(first.url, 'fixture', key, { sdk: i === 2 ? 'v2' : 'v1', wire: 'http' }));

      let stop = false;
      let ok = 0;
      const load = clients.map(async (c, i) => {
        for (let n = 0; !stop; n++) {
          try {
            expect(textOf(await c.callTool('echo', { text: `${i}-${n}` }, { timeout: 10_000 }))).toBe(`echo: ${i}-${n}`);
            ok += 1;
          } catch {
            // From the kill on, calls fail: that is the point.
          }
        }
      });
      await until(() => ok >= 50, 'calls before the kill');
      const upstream = descendants(first.run.child.pid as number);
      // The shell, the fixture server under it and the server's own child.
      expect(upstream.length).toBeGreaterThanOrEqual(3);
      const { childPid } = JSON.parse(textOf(await (clients[0] as McpClient).callTool('pids', {}))) as { childPid: number };
      expect(upstream).toContain(childPid);
      // Counters and records are written every second: wait until some are committed, then read them.
      await until(() => snapshot().records.length > 0 && snapshot().counted > 0, 'committed counts and records');
      const before = snapshot();
      expect(before.services).toHaveLength(1);

      first.run.child.kill('SIGKILL');
      await exitOf(first.run);
      stop = true;
      await Promise.all(load);
      // Nobody stopped them: the gateway had no chance to. The server itself ends with its stdin; its child does not.
      await new Promise((r) => setTimeout(r, 500));
      expect(alive(childPid)).toBe(true);

      const second = await kit.start();
      run = second.run;
      // The next start on the same DATA_DIR killed the previous run's processes.
      await until(() => upstream.filter(alive).length === 0, 'the leftovers to be killed', 5_000);
      expect(second.run.stderr() + second.run.stdout()).toMatch(/left running by a previous gateway run/);

      const after = snapshot();
      expect(after.integrity).toBe('ok');
      expect(after.counted).toBeGreaterThanOrEqual(before.counted);
      expect(after.records.slice(0, before.records.length)).toEqual(before.records);
      expect(after.logs.slice(0, before.logs.length)).toEqual(before.logs);
      expect(after.services).toEqual(before.services);

      // And it serves again.
      const again = await connect(second.url, 'fixture', key, { sdk: 'v1', wire: 'http' });
      clients.push(again);
      expect(textOf(await again.callTool('echo', { text: 'again' }))).toBe('echo: again');
      const serving = descendants(second.run.child.pid as number);
      second.run.child.kill('SIGTERM');
      expect(await exitOf(second.run)).toBe(0);
      run = undefined;
      expect(serving.filter(alive)).toEqual([]);
    } finally {
      if (run && run.child.exitCode === null) run.child.kill('SIGKILL');
    }
  });
});
