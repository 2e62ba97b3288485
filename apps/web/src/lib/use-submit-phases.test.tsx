import { act, renderHook } from '@testing-library/react';
import { useEffect } from 'react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  DIALOG_RESET_DELAY_MS,
  type SubmitPhase,
  useResetAfterClose,
  useSubmitPhases,
  VALIDATION_SUCCESS_PAUSE_MS,
} from './use-submit-phases';

/** The hook plus every phase it rendered, in order. */
function renderPhases() {
  const seen: SubmitPhase[] = [];
  const hook = renderHook(() => {
    const phases = useSubmitPhases();
    useEffect(() => {
      seen.push(phases.phase);
    }, [phases.phase]);
    return phases;
  });
  return { hook, seen };
}

describe('create/edit dialog phases (docs/console.md §4)', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('goes idle → validating → validationSuccess (0.8 s) → submittingApi → idle', async () => {
    const { hook, seen } = renderPhases();
    let finish!: () => void;
    const submit = vi.fn(() => new Promise<void>((resolve) => (finish = resolve)));
    let done!: Promise<void>;
    act(() => {
      done = hook.result.current.run(() => true, submit);
    });
    expect(hook.result.current.phase).toBe('validating');
    expect(hook.result.current.busy).toBe(true);
    await act(() => vi.advanceTimersByTimeAsync(0));
    expect(hook.result.current.phase).toBe('validationSuccess');
    await act(() => vi.advanceTimersByTimeAsync(VALIDATION_SUCCESS_PAUSE_MS - 1));
    expect(submit).not.toHaveBeenCalled();
    await act(() => vi.advanceTimersByTimeAsync(1));
    expect(submit).toHaveBeenCalledTimes(1);
    expect(hook.result.current.phase).toBe('submittingApi');
    await act(async () => {
      finish();
      await done;
    });
    expect(seen).toEqual(['idle', 'validating', 'validationSuccess', 'submittingApi', 'idle']);
    expect(hook.result.current.busy).toBe(false);
    expect(VALIDATION_SUCCESS_PAUSE_MS).toBe(800);
  });

  it('goes back to idle without submitting when validation fails', async () => {
    const { hook, seen } = renderPhases();
    const submit = vi.fn(async () => {});
    let done!: Promise<void>;
    act(() => {
      done = hook.result.current.run(() => false, submit);
    });
    await act(async () => {
      await vi.advanceTimersByTimeAsync(0);
      await done;
    });
    expect(submit).not.toHaveBeenCalled();
    expect(seen).toEqual(['idle', 'validating', 'idle']);
  });

  it('goes back to idle when the submission fails', async () => {
    const { hook } = renderPhases();
    let outcome: unknown;
    await act(async () => {
      // The rejection is caught as soon as the promise exists, so it is never reported as unhandled.
      const done = hook.result.current
        .run(
          () => true,
          async () => {
            throw new Error('boom');
          },
        )
        .catch((err: Error) => err.message);
      await vi.advanceTimersByTimeAsync(VALIDATION_SUCCESS_PAUSE_MS);
      outcome = await done;
    });
    expect(outcome).toBe('boom');
    expect(hook.result.current.phase).toBe('idle');
  });
});

describe('dialog reset after close (docs/console.md §4, §9)', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('resets 300 ms after closing, and not when reopened before that', () => {
    const reset = vi.fn();
    const hook = renderHook(({ open }) => useResetAfterClose(open, reset), { initialProps: { open: true } });
    hook.rerender({ open: false });
    act(() => vi.advanceTimersByTime(DIALOG_RESET_DELAY_MS - 1));
    expect(reset).not.toHaveBeenCalled();
    act(() => vi.advanceTimersByTime(1));
    expect(reset).toHaveBeenCalledTimes(1);

    hook.rerender({ open: true });
    hook.rerender({ open: false });
    act(() => vi.advanceTimersByTime(DIALOG_RESET_DELAY_MS - 100));
    hook.rerender({ open: true });
    act(() => vi.advanceTimersByTime(1_000));
    expect(reset).toHaveBeenCalledTimes(1);
    expect(DIALOG_RESET_DELAY_MS).toBe(300);
  });
});
