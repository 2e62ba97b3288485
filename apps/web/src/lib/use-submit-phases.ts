import { useCallback, useEffect, useRef, useState } from 'react';
import type { Refusal } from './failure';

/** Create and edit dialogs (docs/console.md §4): idle → validating → validationSuccess (0.8 s) → submittingApi → idle. */
export type SubmitPhase = 'idle' | 'validating' | 'validationSuccess' | 'submittingApi';

export const VALIDATION_SUCCESS_PAUSE_MS = 800;
export const DIALOG_RESET_DELAY_MS = 300;

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Runs a dialog's submission through its phases. `validate` returns false to stop (the dialog shows its
 * field errors and the phase goes back to idle); `submit` runs in submittingApi and the phase returns to
 * idle whether it worked or not. While `busy`, the dialog cannot be closed.
 */
export function useSubmitPhases() {
  const [phase, setPhase] = useState<SubmitPhase>('idle');
  const mounted = useRef(true);
  useEffect(() => {
    mounted.current = true;
    return () => {
      mounted.current = false;
    };
  }, []);

  const run = useCallback(async (validate: () => boolean, submit: () => Promise<void>) => {
    setPhase('validating');
    // Let the validating state paint before the (synchronous) checks run.
    await pause(0);
    if (!mounted.current) return;
    if (!validate()) {
      setPhase('idle');
      return;
    }
    setPhase('validationSuccess');
    await pause(VALIDATION_SUCCESS_PAUSE_MS);
    if (!mounted.current) return;
    setPhase('submittingApi');
    try {
      await submit();
    } finally {
      if (mounted.current) setPhase('idle');
    }
  }, []);

  return { phase, busy: phase !== 'idle', run };
}

/** Calls `reset` 300 ms after the dialog closed (docs/console.md §4), once its closing animation is over. */
export function useResetAfterClose(open: boolean, reset: () => void): void {
  const latest = useRef(reset);
  latest.current = reset;
  useEffect(() => {
    if (open) return;
    const timer = setTimeout(() => latest.current(), DIALOG_RESET_DELAY_MS);
    return () => clearTimeout(timer);
  }, [open]);
}

/**
 * A dialog's form values, field errors and the server's last refusal (decision 0058): editing a field clears
 * its error, and the refusal when it was about that field (docs/console.md §5); all go back to `initial()`
 * 300 ms after the dialog closed.
 */
export function useDialogForm<F extends object, ErrorKey extends string>(open: boolean, initial: () => F) {
  const [form, setForm] = useState<F>(initial);
  const [errors, setErrors] = useState<Partial<Record<keyof F, ErrorKey>>>({});
  const [refusal, setRefusal] = useState<Refusal<keyof F> | null>(null);
  useResetAfterClose(open, () => {
    setForm(initial());
    setErrors({});
    setRefusal(null);
  });
  const edit = (field: keyof F) => (value: string) => {
    setForm((f) => ({ ...f, [field]: value }));
    setErrors(({ [field]: _cleared, ...rest }) => rest as Partial<Record<keyof F, ErrorKey>>);
    setRefusal((r) => (r?.field === field ? null : r));
  };
  /** The server's words about `field`, when its last refusal named it. */
  const refusedFor = (field: keyof F): string | undefined => (refusal?.field === field ? refusal.message : undefined);
  return { form, setForm, errors, setErrors, edit, refusal, setRefusal, refusedFor };
}
