import { useEffect, useRef } from 'react';

/**
 * Moves the focus to a dialog's refusal once the dialog is no longer busy (decision 0058), so that it is read out and
 * scrolled into view wherever it was asked for: the field it names (marked invalid, described by the message), else
 * a message marked `data-refusal` (one said beside a group of fields), else the alert above the form. Put
 * `contentRef` on the dialog's content and `alertRef` on a focusable wrapper (`tabIndex={-1}`) of the alert.
 */
export function useRefusalFocus(refusal: { field?: unknown } | null, busy: boolean) {
  const contentRef = useRef<HTMLDivElement>(null);
  const alertRef = useRef<HTMLDivElement>(null);
  const unfocused = useRef<{ field?: unknown } | null>(null);
  useEffect(() => {
    unfocused.current = refusal;
  }, [refusal]);
  useEffect(() => {
    const pending = unfocused.current;
    if (busy || !pending) return;
    unfocused.current = null;
    const content = contentRef.current;
    const target =
      pending.field === undefined
        ? alertRef.current
        : (content?.querySelector<HTMLElement>('[aria-invalid="true"]') ?? content?.querySelector<HTMLElement>('[data-refusal]'));
    target?.focus();
  });
  return { contentRef, alertRef };
}
