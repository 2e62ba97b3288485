import { describe, expect, it } from 'vitest';
import { Lifecycle, type LifecyclePolicy, type Part } from './lifecycle.js';

/** A logger that keeps what it was told, so a test can read the policy's lines. */
function recordingLogger() {
  const lines: { level: string; part?: string; msg: string }[] = [];
  const at = (level: string) => (obj: { part?: string }, msg?: string) => void lines.push({ level, part: obj.part, msg: msg ?? '' });
  const logger = { warn: at('warn'), error: at('error'), debug: at('debug') } as unknown as LifecyclePolicy['logger'];
  return { lines, logger };
}

/** Fake parts that record their starts and closes in one shared log. */
function recorder() {
  const log: string[] = [];
  const part = (name: string, close?: () => Promise<void> | void): Part => ({
    name,
    start: () => void log.push(`start ${name}`),
    close: async () => {
      log.push(`close ${name}`);
      await close?.();
    },
  });
  return { log, part };
}

describe('Lifecycle', () => {
  it('starts in build order and closes in the reverse', async () => {
    const { log, part } = recorder();
    const lifecycle = new Lifecycle(recordingLogger());
    for (const name of ['database', 'events', 'gateway', 'http']) lifecycle.add(part(name));
    await lifecycle.start();
    const report = await lifecycle.close();
    expect(log).toEqual([
      'start database',
      'start events',
      'start gateway',
      'start http',
      'close http',
      'close gateway',
      'close events',
      'close database',
    ]);
    expect(report).toEqual({ failed: [], timedOut: [] });
  });

  it('closes each part once, however often close is called', async () => {
    const { log, part } = recorder();
    const lifecycle = new Lifecycle(recordingLogger());
    lifecycle.add(part('a'));
    lifecycle.add(part('b'));
    await Promise.all([lifecycle.close(), lifecycle.close()]);
    await lifecycle.close();
    expect(log).toEqual(['close b', 'close a']);
  });

  it('goes on after a close that throws, logs it and reports it', async () => {
    const { log, part } = recorder();
    const { lines, logger } = recordingLogger();
    const lifecycle = new Lifecycle({ logger });
    lifecycle.add(part('database'));
    lifecycle.add(
      part('metering', () => {
        throw new Error('disk full');
      }),
    );
    lifecycle.add(part('http'));
    const report = await lifecycle.close();
    expect(log).toEqual(['close http', 'close metering', 'close database']);
    expect(report.failed).toEqual(['metering']);
    expect(lines).toContainEqual({ level: 'error', part: 'metering', msg: 'close failed' });
  });

  it('waits for a hanging close only its time, then closes the rest', async () => {
    const { log, part } = recorder();
    const { lines, logger } = recordingLogger();
    const lifecycle = new Lifecycle({ logger, closeTimeoutMs: 5_000 });
    lifecycle.add(part('database'));
    lifecycle.add({ ...part('stuck', () => new Promise<void>(() => undefined)), closeTimeoutMs: 50 });
    const began = Date.now();
    const report = await lifecycle.close();
    expect(Date.now() - began).toBeLessThan(2_000);
    expect(log).toEqual(['close stuck', 'close database']);
    expect(report.timedOut).toEqual(['stuck']);
    expect(lines).toContainEqual({ level: 'warn', part: 'stuck', msg: 'close did not finish in time: going on with the next part' });
  });

  it('names the part whose close is running, and nothing once all are closed', async () => {
    const { part } = recorder();
    const lifecycle = new Lifecycle(recordingLogger());
    let release: () => void = () => undefined;
    lifecycle.add(part('database'));
    lifecycle.add(part('gateway', () => new Promise<void>((r) => (release = r))));
    expect(lifecycle.closingPart).toBeUndefined();
    const closing = lifecycle.close();
    await new Promise((r) => setImmediate(r));
    expect(lifecycle.closingPart).toBe('gateway');
    release();
    await closing;
    expect(lifecycle.closingPart).toBeUndefined();
  });

  it('closes what was built when a start fails, and rethrows', async () => {
    const { log, part } = recorder();
    const lifecycle = new Lifecycle(recordingLogger());
    lifecycle.add(part('database'));
    lifecycle.add({
      name: 'redis',
      start: () => {
        throw new Error('ECONNREFUSED');
      },
      close: () => void log.push('close redis'),
    });
    lifecycle.add(part('http'));
    await expect(lifecycle.start()).rejects.toThrow('ECONNREFUSED');
    expect(log).toEqual(['start database', 'close http', 'close redis', 'close database']);
  });

  it('closes at once a part registered while closing', async () => {
    const { log, part } = recorder();
    const lifecycle = new Lifecycle(recordingLogger());
    lifecycle.add(part('a'));
    const closed = lifecycle.close();
    lifecycle.add(part('late'));
    await closed;
    expect(log).toContain('close late');
    expect(lifecycle.names).toEqual(['a']);
  });
});
