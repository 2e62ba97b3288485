import { afterEach, describe, expect, it } from 'vitest';
import { callTool, fixtureSpec, stdioSpec, TestSession, testPool, toolText, until } from '../../../test/fixtures/upstream-kit.js';

const initParams = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } };

describe('misbehaving tool servers', () => {
  let done: (() => Promise<void>) | undefined;
  const setup = () => {
    // Short enough for the hanging server, long enough for server-everything on a busy machine.
    const kit = testPool({ initializeTimeoutMs: 4_000 });
    const pool = kit.make();
    done = async () => {
      await pool.shutdown();
      kit.cleanup();
    };
    return { kit, pool };
  };
  afterEach(async () => {
    await done?.();
    done = undefined;
  });

  it('crash at start, hang, stderr floods and stdout garbage leave another service serving', async () => {
    const { kit, pool } = setup();
    kit.options.set('StdioServiceStartupStrategy', 'boot');
    const good = kit.catalog.put(stdioSpec());
    const crashing = kit.catalog.put(fixtureSpec('crash-at-start'));
    const hanging = kit.catalog.put(fixtureSpec('hang'));
    const flooding = kit.catalog.put(fixtureSpec('flood-stderr'));
    const noisy = kit.catalog.put(fixtureSpec('garbage-stdout'));
    // Boot starts them all, the broken ones restart in a loop in the background.
    kit.events.emit({ type: 'option.changed', key: 'StdioServiceStartupStrategy' });

    const alice = new TestSession('alice');
    const goodLink = await pool.acquire(good, alice);
    await goodLink.initialize(alice, initParams);
    let stop = false;
    let served = 0;
    const keepCalling = (async () => {
      while (!stop) {
        expect(toolText(await callTool(goodLink, alice, served, 'echo', { message: `m${served}` }))).toBe(`Echo: m${served}`);
        served += 1;
      }
    })();

    const crashLink = await pool.acquire(crashing, alice);
    await expect(crashLink.initialize(alice, initParams)).rejects.toThrow(/exited with code 3/);

    const hangLink = await pool.acquire(hanging, alice);
    await expect(hangLink.initialize(alice, initParams)).rejects.toThrow(/did not answer initialize/);

    const floodLink = await pool.acquire(flooding, alice);
    await floodLink.initialize(alice, initParams);
    expect(toolText(await callTool(floodLink, alice, 1, 'echo', { text: 'through the flood' }))).toBe('echo: through the flood');
    await until(() => kit.serviceLog.of(flooding.id).some((m) => /^\d+ stderr lines suppressed$/.test(m)), 'the flood to be summarised');

    const noisyLink = await pool.acquire(noisy, alice);
    await noisyLink.initialize(alice, initParams);
    expect(toolText(await callTool(noisyLink, alice, 1, 'echo', { text: 'after the garbage' }))).toBe('echo: after the garbage');
    const noise = kit.serviceLog.of(noisy.id);
    expect(noise).toContain('ignored non-JSON-RPC output on stdout: this is not json');
    expect(noise).toContain('ignored non-JSON-RPC output on stdout: {"json": "but not json-rpc"}');
    expect(noise.some((m) => m.includes('over the 8 MiB limit, was dropped'))).toBe(true);

    await until(() => served >= 20, 'the good service to keep serving');
    stop = true;
    await keepCalling;
    expect(kit.catalog.lastHealth(good.id)?.status).toBe('healthy');
    expect(kit.catalog.lastHealth(crashing.id)).toMatchObject({ status: 'unhealthy' });
    expect(kit.catalog.lastHealth(hanging.id)).toMatchObject({ status: 'unhealthy', details: expect.stringContaining('initialize') });
  });

  it('keeps every line a process printed just before it exited, the last one without a newline too', async () => {
    const { kit, pool } = setup();
    // The exit often reaches the gateway before the pipes are read to their end: ten services show it.
    const crashing = Array.from({ length: 10 }, () => kit.catalog.put(fixtureSpec('crash-at-start')));
    const alice = new TestSession('alice');
    for (const spec of crashing) {
      const link = await pool.acquire(spec, alice);
      await expect(link.initialize(alice, initParams)).rejects.toThrow(/exited with code 3/);
    }
    // Each run's exit is logged after its output: every run that ended must have left all of it, its stderr as one
    // entry in order.
    const expected = [
      'ignored non-JSON-RPC output on stdout: Usage: fixture [mode]',
      'ignored non-JSON-RPC output on stdout:   stdio',
      'ignored non-JSON-RPC output on stdout:   http',
      'fixture: crashing at start\nlast words without a newline',
    ];
    const runs = () =>
      crashing.flatMap((spec) => {
        const ended: string[][] = [];
        let current: string[] = [];
        for (const line of kit.serviceLog.of(spec.id)) {
          if (/exited with code 3/.test(line)) {
            ended.push(current);
            current = [];
          } else if (!line.startsWith('starting: ')) current.push(line);
        }
        return ended;
      });
    await until(() => runs().length >= 10, 'ten runs to end');
    // The stderr lines are one entry when they arrive within the log's quiet window (300 ms); a process stalled
    // between its two writes on a busy machine leaves two entries, which must still hold all of it, in order.
    const stderrJoined = (lines: string[]) => [...lines.slice(0, 3), lines.slice(3).join('\n')];
    for (const lines of runs()) expect(stderrJoined(lines)).toEqual(expected);
  });

  it('health checks report a real round trip, or the failure', async () => {
    const { kit, pool } = setup();
    const good = kit.catalog.put(stdioSpec());
    const crashing = kit.catalog.put(fixtureSpec('crash-at-start'));
    const disabled = kit.catalog.put(fixtureSpec('', { enabled: false }));

    // Not running: a short-lived process does initialize + tools/list and is stopped again.
    const probed = await pool.checkHealth(good.id);
    expect(probed.status).toBe('healthy');
    expect(probed.toolCount).toBeGreaterThan(5);
    expect(probed.details).toMatch(new RegExp(`^${probed.toolCount} tools, \\d+ ms$`));
    expect(pool.links(good.id)).toHaveLength(0);

    // Running: checked through the link itself.
    const alice = new TestSession('alice');
    await (await pool.acquire(good, alice)).initialize(alice, initParams);
    expect((await pool.checkHealth(good.id)).status).toBe('healthy');
    expect(kit.catalog.lastHealth(good.id)).toMatchObject({ status: 'healthy', toolCount: probed.toolCount });

    const failed = await pool.checkHealth(crashing.id);
    expect(failed).toMatchObject({ status: 'unhealthy', details: expect.stringContaining('exited with code 3') });
    expect(kit.catalog.lastHealth(crashing.id)?.status).toBe('unhealthy');
    expect((await pool.checkHealth(disabled.id)).status).toBe('stopped');
  });

  it('checks running and remote services periodically, and leaves a stopped demand service alone', async () => {
    const { kit, pool } = setup();
    const running = kit.catalog.put(fixtureSpec(''));
    const idle = kit.catalog.put(fixtureSpec(''));
    const alice = new TestSession('alice');
    await (await pool.acquire(running, alice)).initialize(alice, initParams);
    const checks = (id: number) => kit.catalog.health.filter((h) => h.serviceId === id);
    const before = checks(running.id).length;
    kit.options.set('HealthCheckIntervalSeconds', '1');
    kit.events.emit({ type: 'option.changed', key: 'HealthCheckIntervalSeconds' });
    await until(() => checks(running.id).length >= before + 2, 'two periodic checks');
    expect(checks(running.id).at(-1)).toMatchObject({ status: 'healthy', toolCount: 8 });
    expect(checks(idle.id)).toEqual([]);
    expect(pool.links(idle.id)).toHaveLength(0);
  });
});
