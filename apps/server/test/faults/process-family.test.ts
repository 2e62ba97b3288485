import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { census } from '../../src/gateway/upstream/process-census.js';
import { type CliRun, exitOf } from '../built-cli.js';
import { alive, FIXTURE_SERVER } from '../fixtures/upstream-kit.js';
import { connect, type McpClient, textOf, until } from '../gateway/clients.js';
import { addService, addUser, type LiveGateway, setServiceEnabled, startGateway } from '../gateway/gateway-harness.js';
import { killedServerKit } from './killed-server-kit.js';

/**
 * Every process a tool server starts is accounted for (docs/decisions/0045). The fixture server's family
 * (test/fixtures/family-members.mjs): a same-group child, a `setsid` child, a `setsid` child with a scrubbed
 * environment, a double-forked daemon, optionally a detached child that leaks memory; each ignores SIGTERM.
 * /proc is the judge of life and death, a zombie counting as dead.
 */

const ROLES = ['group', 'session', 'scrubbed', 'daemon'];
const dir = mkdtempSync(path.join(tmpdir(), 'toolport-family-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Every member the file names, in the order they started. */
function members(file: string): { role: string; pid: number }[] {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return text
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [role, pid] = line.split(' ');
      return { role: role as string, pid: Number(pid) };
    });
}

/** The members alive now, once there is exactly one of each role in `roles` (a stopped start's are dead). */
async function liveFamily(file: string, roles = ROLES): Promise<number[]> {
  let live: { role: string; pid: number }[] = [];
  await until(
    () => {
      live = members(file).filter((m) => alive(m.pid));
      return live.length === roles.length && roles.every((r) => live.some((m) => m.role === r));
    },
    `a live family in ${path.basename(file)}`,
  );
  return live.map((m) => m.pid);
}

describe('a tool server whose processes leave in every way, in a live gateway', () => {
  const MAX_RSS_MB = 150;
  let gw: LiveGateway;
  let key: string;
  const clients: McpClient[] = [];
  const client = async (service: string) => {
    const c = await connect(gw.url, service, key, { sdk: 'v1', wire: 'http' });
    clients.push(c);
    return c;
  };
  const logOf = async (serviceId: number) => {
    await gw.ctx.serviceLog.flush();
    return (await gw.ctx.db.selectFrom('service_logs').select('message').where('service_id', '=', serviceId).execute()).map(
      (r) => r.message,
    );
  };
  /** Counted by the census: the same instance as the server (its first pid). */
  const counted = (server: number, pids: number[]) =>
    until(() => {
      census.scan();
      const instance = census.instanceOf(server);
      return instance !== undefined && pids.every((pid) => census.instanceOf(pid) === instance);
    }, 'the census to count the family');

  beforeAll(async () => {
    gw = await startGateway('sqlite', { STDIO_MAX_RSS_MB: String(MAX_RSS_MB) });
    ({ key } = await addUser(gw.ctx, 'alice'));
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await gw?.close();
  });

  it('sums a detached child into the memory cap and ends the whole family when it is over', { timeout: 60_000 }, async () => {
    const file = path.join(dir, 'leaky');
    const id = await addService(gw.ctx, {
      name: 'leaky-family',
      args: [FIXTURE_SERVER],
      env: { FIXTURE_MODE: `family=${file},family-leak=40` },
    });
    const c = await client('leaky-family');
    const { pid } = JSON.parse(textOf(await c.callTool('pids', {}))) as { pid: number };
    const family = [pid, ...(await liveFamily(file, [...ROLES, 'leaker']))];
    // The server itself stays small: only the leaker, in a session of its own, takes it over the limit.
    const reason = `over the limit of ${MAX_RSS_MB} MiB (STDIO_MAX_RSS_MB)`;
    await expect(c.callTool('sleep', { ms: 60_000 }, { timeout: 120_000 })).rejects.toThrow(reason);
    await until(() => family.every((p) => !alive(p)), 'the whole family to end');
    expect((await logOf(id)).some((m) => m.startsWith('tool server stopped by the gateway: it used ') && m.endsWith(reason))).toBe(true);
    await setServiceEnabled(gw.ctx, id, false);
  });

  it('ends every process of the family when the service stops, and when the server itself dies', { timeout: 60_000 }, async () => {
    const file = path.join(dir, 'family');
    const id = await addService(gw.ctx, { name: 'family', args: [FIXTURE_SERVER], env: { FIXTURE_MODE: `family=${file}` } });
    const c = await client('family');
    const first = JSON.parse(textOf(await c.callTool('pids', {}))) as { pid: number };
    const stopped = [first.pid, ...(await liveFamily(file))];
    await counted(first.pid, stopped);
    await setServiceEnabled(gw.ctx, id, false);
    await until(() => stopped.every((p) => !alive(p)), 'the family to end with the stop');

    await setServiceEnabled(gw.ctx, id, true);
    const second = JSON.parse(textOf(await c.callTool('pids', {}))) as { pid: number };
    const crashed = [second.pid, ...(await liveFamily(file))];
    await counted(second.pid, crashed);
    await expect(c.callTool('crash', {})).rejects.toThrow('exited with code 2');
    await until(() => crashed.every((p) => !alive(p)), 'the family to end with its server');
  });
});

describe('SIGKILL of the gateway twice in a row, with boot-started services', () => {
  const kit = killedServerKit('family', { adminPassword: 'family-test-password', secretKey: 'family-test-secret-key-0123456789abcdef' });
  const file = path.join(dir, 'rounds');
  const runDir = () => path.join(kit.dataDir, 'run');
  /** The pids the running gateway's run file lists (its census's count). */
  const listed = () =>
    readdirSync(runDir()).flatMap((name) => {
      try {
        return ((JSON.parse(readFileSync(path.join(runDir(), name), 'utf8')) as { members?: [number, string][] }).members ?? []).map(
          ([pid]) => pid,
        );
      } catch {
        return [];
      }
    });
  /** The family of the server this gateway runs, once its run file lists it: what a SIGKILL must not lose. */
  const recorded = async () => {
    const family = await liveFamily(file);
    await until(() => family.every((pid) => listed().includes(pid)), 'the run file to list the family');
    return family;
  };

  beforeAll(() => kit.prepare());
  afterAll(() => kit.cleanUp());

  it('reaps every leftover at the next start, round after round, and a clean stop leaves nothing', { timeout: 120_000 }, async () => {
    let run: CliRun | undefined;
    try {
      const first = await kit.start();
      run = first.run;
      const token = await kit.login(first.url);
      await kit.api(first.url, 'PUT', '/api/option/', token, { key: 'StdioServiceStartupStrategy', value: 'boot' });
      await kit.addStdioService(
        first.url,
        token,
        'family',
        `/bin/sh -c 'FIXTURE_MODE=family=${file} exec ${process.execPath} ${FIXTURE_SERVER}'`,
      );
      let left = await recorded();

      for (const round of [1, 2]) {
        run.child.kill('SIGKILL');
        await exitOf(run);
        // Nobody stopped them: the server ends with its stdin, its family does not.
        expect(left.filter(alive), `round ${round}: the family outlives the killed gateway`).toEqual(left);
        const next = await kit.start();
        run = next.run;
        await until(() => left.every((pid) => !alive(pid)), `round ${round}: the leftovers to be reaped`);
        expect(run.stderr() + run.stdout()).toMatch(/left running by a previous gateway run/);
        // The service starts at boot again, and the new family is this run's.
        left = await recorded();
      }

      run.child.kill('SIGTERM');
      expect(await exitOf(run)).toBe(0);
      run = undefined;
      expect(left.filter(alive)).toEqual([]);
      expect(readdirSync(runDir())).toEqual([]);
    } finally {
      if (run && run.child.exitCode === null) run.child.kill('SIGKILL');
    }
  });
});
