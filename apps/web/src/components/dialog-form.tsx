import type { ReactNode } from 'react';
import { Button } from './ui/button';
import { DialogFooter } from './ui/dialog';

/**
 * A dialog's form with its Cancel and submit buttons: the browser's own validation is off (the dialog checks
 * and says why, in the user's language), and while the dialog is busy with a submit both buttons are disabled
 * and a second submit does nothing.
 */
export function DialogForm({
  busy = false,
  onSubmit,
  onCancel,
  submitLabel,
  cancelLabel,
  children,
}: {
  busy?: boolean;
  onSubmit(): unknown;
  onCancel(): void;
  submitLabel: string;
  cancelLabel: string;
  children: ReactNode;
}) {
  return (
    <form
      noValidate
      className="space-y-4"
      onSubmit={(e) => {
        e.preventDefault();
        if (!busy) void onSubmit();
      }}
    >
      {children}
      <DialogFooter>
        <Button variant="outline" disabled={busy} onClick={onCancel}>
          {cancelLabel}
        </Button>
        <Button type="submit" disabled={busy}>
          {submitLabel}
        </Button>
      </DialogFooter>
    </form>
  );
}
