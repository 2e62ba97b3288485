import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import {
  alive,
  callTool,
  FIXTURE_SERVER,
  fixtureSpec,
  TestSession,
  testPool,
  toolText,
  until,
} from '../../../test/fixtures/upstream-kit.js';
import type { ServiceSpec } from '../catalog.js';
import type { UpstreamLink } from '../link-api.js';
import type { Link } from './link.js';
import type { LinkPool } from './pool.js';

type Kit = ReturnType<typeof testPool>;
let current: { kit: Kit; pool: LinkPool } | undefined;

/** A kit and its pool; `prepare` runs before the pool exists (catalog content, preferences). */
function setup(tuning: Parameters<typeof testPool>[0] = {}, prepare: (kit: Kit) => void = () => undefined) {
  const kit = testPool(tuning);
  prepare(kit);
  const pool = kit.make();
  current = { kit, pool };
  return { kit, pool };
}

afterEach(async () => {
  await current?.pool.shutdown();
  current?.kit.cleanup();
  current = undefined;
});

const pids = async (link: UpstreamLink, session: TestSession): Promise<{ pid: number; childPid: number | null }> =>
  JSON.parse(toolText(await callTool(link, session, 'pids', 'pids')));

/** Emits what the admin API would after changing a service in the catalog. */
function change(kit: Kit, spec: ServiceSpec, patch: Partial<ServiceSpec>): ServiceSpec {
  const next = kit.catalog.put({ ...spec, ...patch, updatedAt: spec.updatedAt + 1 });
  kit.events.emit({ type: 'service.changed', serviceId: spec.id });
  return next;
}

describe('supervisor', () => {
  it('restarts a crashing process with exponential backoff and marks it unhealthy', async () => {
    const { kit, pool } = setup({ backoffBaseMs: 100, backoffMaxMs: 400 });
    kit.options.set('StdioServiceStartupStrategy', 'boot');
    const spec = kit.catalog.put(fixtureSpec('exit-after-ready=800'));
    kit.events.emit({ type: 'option.changed', key: 'StdioServiceStartupStrategy' });
    const crashes = () => kit.catalog.health.filter((h) => h.serviceId === spec.id && h.status === 'unhealthy').map((h) => h.details);
    await until(() => crashes().length >= 4, 'four crashes');
    expect(new Set(crashes())).toEqual(new Set(['tool server exited with code 1']));
    expect(
      kit.serviceLog
        .of(spec.id)
        .filter((m) => m.startsWith('tool server exited'))
        .slice(0, 4),
    ).toEqual([
      'tool server exited with code 1; restarting in 0.1 s',
      'tool server exited with code 1; restarting in 0.2 s',
      'tool server exited with code 1; restarting in 0.4 s',
      'tool server exited with code 1; restarting in 0.4 s',
    ]);
    // Between crashes it came back each time.
    expect(kit.catalog.health.filter((h) => h.serviceId === spec.id && h.status === 'healthy').length).toBeGreaterThanOrEqual(3);
    expect(pool.links(spec.id)).toHaveLength(1);
  });

  it('starts the backoff over after a process ran stably', async () => {
    const { kit } = setup({ backoffBaseMs: 100, stableMs: 100 });
    kit.options.set('StdioServiceStartupStrategy', 'boot');
    const spec = kit.catalog.put(fixtureSpec('exit-after-ready=800'));
    kit.events.emit({ type: 'option.changed', key: 'StdioServiceStartupStrategy' });
    const crashes = () => kit.serviceLog.of(spec.id).filter((m) => m.startsWith('tool server exited'));
    await until(() => crashes().length >= 3, 'three crashes');
    expect(new Set(crashes())).toEqual(new Set(['tool server exited with code 1; restarting in 0.1 s']));
  });

  it('answers in-flight requests with an error when the process dies', async () => {
    const { kit, pool } = setup();
    const spec = kit.catalog.put(fixtureSpec(''));
    const alice = new TestSession('alice');
    const link = await pool.acquire(spec, alice);
    const slow = callTool(link, alice, 1, 'sleep', { ms: 60_000 });
    await until(() => (link as Link).inFlight === 1, 'the call in flight');
    void callTool(link, alice, 2, 'crash');
    const answer = await slow;
    expect('error' in answer.response && answer.response.error.message).toBe('upstream unavailable: tool server exited with code 2');
    // The session is still attached, so the process comes back and serves again.
    expect(toolText(await callTool(link, alice, 3, 'echo', { text: 'again' }))).toBe('echo: again');
  });

  it('starts on demand, stops when idle and starts again on the next request', async () => {
    const { kit, pool } = setup({ idleTimeoutMs: 200 });
    const spec = kit.catalog.put(fixtureSpec(''));
    const alice = new TestSession('alice');
    const link = await pool.acquire(spec, alice);
    const first = await pids(link, alice);
    expect(alive(first.pid)).toBe(true);
    pool.release(spec.id, alice);
    await until(() => !alive(first.pid), 'the idle process to stop');
    expect(kit.catalog.lastHealth(spec.id)?.status).toBe('stopped');
    const again = await pool.acquire(spec, alice);
    const second = await pids(again, alice);
    expect(second.pid).not.toBe(first.pid);
  });

  it('stops a demand-started process after the idle time with its session left open and health checks running', async () => {
    const { kit, pool } = setup({ idleTimeoutMs: 400 });
    const spec = kit.catalog.put(fixtureSpec(''));
    const alice = new TestSession('alice');
    const link = await pool.acquire(spec, alice);
    const first = await pids(link, alice);
    // Alice never ends her session; health checks go through the running link meanwhile.
    const checks = setInterval(() => void pool.checkHealth(spec.id), 100);
    try {
      await until(() => !alive(first.pid), 'the idle process to stop');
    } finally {
      clearInterval(checks);
    }
    // Wait for the link itself: the process may be gone a moment before the link has taken note.
    await until(() => (link as Link).state !== 'ready', 'the link to notice the stop');
    expect((link as Link).state).toBe('stopped');
    // A check that was on its way when the idle stop came (its ping answered, its tools/list not yet sent)
    // fails instead of starting the process again.
    await expect((link as Link).roundTrip()).rejects.toThrow(/stopped/);
    expect((link as Link).state).toBe('stopped');
    // A check now probes with a short-lived process of its own and leaves the link stopped.
    await pool.checkHealth(spec.id);
    expect((link as Link).state).toBe('stopped');
    // Her open session's next call starts it again.
    const second = await pids(link, alice);
    expect(second.pid).not.toBe(first.pid);
  });

  it('lets a service started at boot stop when idle once the strategy is switched to demand', async () => {
    const spec = fixtureSpec('');
    const { kit, pool } = setup({ idleTimeoutMs: 200 }, (k) => {
      k.options.set('StdioServiceStartupStrategy', 'boot');
      k.catalog.put(spec);
    });
    await pool.ready;
    const [link] = pool.links(spec.id);
    if (!link) throw new Error('no link started at boot');
    await until(() => link.state === 'ready', 'the boot start');
    // Well past the idle timeout: under boot it stays.
    await new Promise((r) => setTimeout(r, 500));
    expect(link.state).toBe('ready');
    kit.options.set('StdioServiceStartupStrategy', 'demand');
    kit.events.emit({ type: 'option.changed', key: 'StdioServiceStartupStrategy' });
    await until(() => link.state === 'stopped', 'the idle stop');
  });

  it('under boot, starts enabled services and follows disable, enable, edit and removal', async () => {
    let spec = fixtureSpec('');
    const disabled = fixtureSpec('', { enabled: false });
    const { kit, pool: booted } = setup({}, (k) => {
      k.options.set('StdioServiceStartupStrategy', 'boot');
      k.catalog.put(spec);
      k.catalog.put(disabled);
    });
    await booted.ready;
    const [link] = booted.links(spec.id);
    if (!link) throw new Error('no link started at boot');
    await until(() => link.state === 'ready', 'the boot start');
    expect(booted.links(disabled.id)).toHaveLength(0);
    const admin = new TestSession('admin');
    const started = await pids(await booted.acquire(spec, admin), admin);
    booted.release(spec.id, admin);

    // Only the limit changed: nothing restarts.
    spec = change(kit, spec, { rpdLimit: 5 });
    await new Promise((r) => setTimeout(r, 100));
    expect(alive(started.pid)).toBe(true);

    // The environment changed: a new process.
    spec = change(kit, spec, { env: { FIXTURE_MODE: '', EXTRA: '1' } });
    await until(() => !alive(started.pid), 'the old process to stop');
    await until(() => link.state === 'ready', 'the restart');
    const edited = await pids(await booted.acquire(spec, admin), admin);
    booted.release(spec.id, admin);
    expect(edited.pid).not.toBe(started.pid);

    spec = change(kit, spec, { enabled: false });
    await until(() => !alive(edited.pid) && booted.links(spec.id).length === 0, 'disable to stop it');
    spec = change(kit, spec, { enabled: true });
    await until(() => booted.links(spec.id)[0]?.state === 'ready', 'enable to start it');
    const enabled = await pids(await booted.acquire(spec, admin), admin);

    kit.catalog.services.delete(spec.id);
    kit.events.emit({ type: 'service.removed', serviceId: spec.id });
    await until(() => !alive(enabled.pid) && booted.links(spec.id).length === 0, 'removal to stop it');
  });

  it('checks a service changed a moment ago on its new configuration, not the link the change is stopping', async () => {
    // What an Update does: new files, `service.changed`, then at once a health check of the result.
    let spec = fixtureSpec('');
    const { kit, pool } = setup({}, (k) => k.catalog.put(spec));
    const session = new TestSession('s');
    const before = await pids(await pool.acquire(spec, session), session);
    pool.release(spec.id, session);
    spec = change(kit, spec, { env: { FIXTURE_MODE: '', EXTRA: 'updated' } });
    const health = await pool.checkHealth(spec.id);
    expect(health).toMatchObject({ status: 'healthy' });
    await until(() => !alive(before.pid), 'the old process to stop');
  });

  it('leaves no process behind after 50 start, stop and crash cycles, grandchildren included', async () => {
    const { kit, pool } = setup({ stopGraceMs: 200, backoffBaseMs: 20, backoffMaxMs: 50 });
    const direct = kit.catalog.put(fixtureSpec('fork-child'));
    // A shell wrapper as leader, the server its child, and the server's own child: three levels.
    const wrapped = kit.catalog.put(
      fixtureSpec('fork-child', { command: 'sh', args: ['-c', `exec 3<&0; "${process.execPath}" "${FIXTURE_SERVER}" <&3 3<&- & wait`] }),
    );
    const seen = new Set<number>();
    /** Which cycle, spec and part each pid was, for the message of a failure. */
    const origin = new Map<number, string>();
    const specs: Record<number, ServiceSpec> = { [direct.id]: direct, [wrapped.id]: wrapped };
    for (let cycle = 0; cycle < 50; cycle++) {
      const spec = specs[cycle % 2 === 0 ? direct.id : wrapped.id] as ServiceSpec;
      const session = new TestSession(`s${cycle}`);
      const link = await pool.acquire(spec, session);
      const { pid, childPid } = await pids(link, session);
      seen.add(pid);
      if (childPid) seen.add(childPid);
      const what = `cycle ${cycle} (${spec.id === direct.id ? 'direct' : 'wrapped'}, ${['crash', 'stop', 'edit'][cycle % 3]})`;
      origin.set(pid, `${what} server`);
      if (childPid) origin.set(childPid, `${what} child`);
      expect(alive(pid)).toBe(true);
      switch (cycle % 3) {
        case 0: // crash: the supervisor restarts it for the attached session
          await callTool(link, session, 'x', 'crash');
          await until(() => !alive(pid) && (childPid === null || !alive(childPid)), 'the crashed group to be gone');
          pool.release(spec.id, session);
          break;
        case 1: // stop: disabled and enabled again
          pool.release(spec.id, session);
          specs[spec.id] = change(kit, spec, { enabled: false });
          await until(() => pool.links(spec.id).length === 0, 'the stop');
          specs[spec.id] = change(kit, specs[spec.id] as ServiceSpec, { enabled: true });
          break;
        default: // edit: restarted with the new settings
          pool.release(spec.id, session);
          specs[spec.id] = change(kit, spec, { env: { ...spec.env, CYCLE: String(cycle) } });
      }
    }
    await pool.shutdown();
    expect(seen.size).toBeGreaterThanOrEqual(60);
    const left = () =>
      [...seen].filter(alive).map((pid) => {
        let stat = '';
        try {
          stat = readFileSync(`/proc/${pid}/stat`, 'utf8').trim();
        } catch {
          // Gone since `alive` looked.
        }
        return `${pid}: ${origin.get(pid)}; ${stat.slice(0, stat.indexOf(')') + 4)}`;
      });
    // A process already killed may take a moment to go on a loaded machine (a SIGKILL waits for a disk read to end);
    // one that was never signalled stays, and fails this. Survivors are named with their cycle and state.
    await until(() => [...seen].filter(alive).length === 0, 'every process to be gone', 15_000).catch(() => undefined);
    expect(left()).toEqual([]);
  }, 120_000);
});
