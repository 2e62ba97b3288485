import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { INSTALL_POLL_INTERVAL_MS, INSTALL_POLL_MAX_ATTEMPTS, type InstallOutcome, pollInstallStatus } from './install-polling';

describe('stdio custom install polling (docs/console.md §4, §9)', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('polls every 10 s, at most 30 times', () => {
    expect(INSTALL_POLL_INTERVAL_MS).toBe(10_000);
    expect(INSTALL_POLL_MAX_ATTEMPTS).toBe(30);
  });

  it('waits 10 s before the first poll and stops at completed', async () => {
    const answers = ['pending', 'installing', 'completed'];
    const fetchStatus = vi.fn(async () => ({ status: answers.shift() as 'completed' }));
    const done = vi.fn();
    pollInstallStatus(fetchStatus, done);

    await vi.advanceTimersByTimeAsync(9_999);
    expect(fetchStatus).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(fetchStatus).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(20_000);
    expect(fetchStatus).toHaveBeenCalledTimes(3);
    expect(done).toHaveBeenCalledWith({ kind: 'completed' });
    await vi.advanceTimersByTimeAsync(100_000);
    expect(fetchStatus).toHaveBeenCalledTimes(3);
  });

  it('ends at failed with the reason from error_message, else error', async () => {
    const done = vi.fn();
    pollInstallStatus(async () => ({ status: 'failed', error_message: 'exited with code 1' }), done);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(done).toHaveBeenCalledWith({ kind: 'failed', reason: 'exited with code 1' });

    const other = vi.fn();
    pollInstallStatus(async () => ({ status: 'failed', error_message: '', error: 'boom' }), other);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(other).toHaveBeenCalledWith({ kind: 'failed', reason: 'boom' });
  });

  async function runToEnd(
    fetchStatus: () => Promise<never> | Promise<{ status?: string }>,
  ): Promise<{ calls: number; outcomes: InstallOutcome[] }> {
    const spy = vi.fn(fetchStatus);
    const outcomes: InstallOutcome[] = [];
    pollInstallStatus(spy as never, (o) => outcomes.push(o));
    await vi.advanceTimersByTimeAsync(INSTALL_POLL_INTERVAL_MS * (INSTALL_POLL_MAX_ATTEMPTS + 5));
    return { calls: spy.mock.calls.length, outcomes };
  }

  it('times out after 30 tries still installing', async () => {
    expect(await runToEnd(async () => ({ status: 'installing' }))).toEqual({ calls: 30, outcomes: [{ kind: 'timeout' }] });
  });

  it('ends with a status-check timeout after 30 unexpected answers', async () => {
    expect(await runToEnd(async () => ({ status: 'exploded' }))).toEqual({ calls: 30, outcomes: [{ kind: 'statusTimeout' }] });
  });

  it('keeps polling through request errors and reports the last one after 30 tries', async () => {
    const error = new Error('offline');
    const { calls, outcomes } = await runToEnd(() => Promise.reject(error));
    expect(calls).toBe(30);
    expect(outcomes).toEqual([{ kind: 'checkFailed', error }]);
  });

  it('recovers from an error when a later poll succeeds', async () => {
    let n = 0;
    const { calls, outcomes } = await runToEnd(async () => {
      n += 1;
      if (n < 3) throw new Error('blip');
      return { status: 'completed' };
    });
    expect(calls).toBe(3);
    expect(outcomes).toEqual([{ kind: 'completed' }]);
  });

  it('stops when cancelled', async () => {
    const fetchStatus = vi.fn(async () => ({ status: 'installing' as const }));
    const done = vi.fn();
    const cancel = pollInstallStatus(fetchStatus, done);
    await vi.advanceTimersByTimeAsync(25_000);
    cancel();
    await vi.advanceTimersByTimeAsync(600_000);
    expect(fetchStatus).toHaveBeenCalledTimes(2);
    expect(done).not.toHaveBeenCalled();
  });
});

describe('marketplace install polling options (docs/console.md §4, §9)', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  const market = { intervalMs: 5_000, maxAttempts: Number.POSITIVE_INFINITY, immediate: true, stopOnFailure: true } as const;

  it('asks at once, then every 5 s with no limit, passing each answer on before it ends', async () => {
    let n = 0;
    const fetchStatus = vi.fn(async () => {
      n += 1;
      return n < 50 ? { status: 'installing' as const, logs: [`line ${n}`] } : { status: 'completed' as const, logs: ['done'] };
    });
    const seen: unknown[] = [];
    const done = vi.fn();
    pollInstallStatus(fetchStatus, done, { ...market, onStatus: (s) => seen.push(s.logs) });

    await vi.advanceTimersByTimeAsync(0);
    expect(fetchStatus).toHaveBeenCalledTimes(1);
    expect(seen).toEqual([['line 1']]);
    await vi.advanceTimersByTimeAsync(4_999);
    expect(fetchStatus).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(fetchStatus).toHaveBeenCalledTimes(2);
    await vi.advanceTimersByTimeAsync(5_000 * 60);
    expect(fetchStatus).toHaveBeenCalledTimes(50);
    expect(seen.at(-1)).toEqual(['done']);
    expect(done).toHaveBeenCalledExactlyOnceWith({ kind: 'completed' });
  });

  it('ends at the first failed request or unknown answer', async () => {
    const error = new Error('offline');
    const failing = vi.fn(() => Promise.reject(error));
    const onFailure = vi.fn();
    pollInstallStatus(failing, onFailure, market);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(failing).toHaveBeenCalledTimes(1);
    expect(onFailure).toHaveBeenCalledWith({ kind: 'checkFailed', error });

    const odd = vi.fn(async () => ({ status: 'exploded' }));
    const onOdd = vi.fn();
    pollInstallStatus(odd as never, onOdd, market);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(odd).toHaveBeenCalledTimes(1);
    expect(onOdd).toHaveBeenCalledWith({ kind: 'statusTimeout' });
  });

  it('reports nothing for an answer that arrives after cancelling', async () => {
    let answer!: (status: { status: 'completed' }) => void;
    const onStatus = vi.fn();
    const done = vi.fn();
    const cancel = pollInstallStatus(
      () =>
        new Promise((resolve) => {
          answer = resolve;
        }),
      done,
      { ...market, onStatus },
    );
    await vi.advanceTimersByTimeAsync(0);
    cancel();
    answer({ status: 'completed' });
    await vi.advanceTimersByTimeAsync(10_000);
    expect(onStatus).not.toHaveBeenCalled();
    expect(done).not.toHaveBeenCalled();
  });
});
