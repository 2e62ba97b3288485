import type { ReactNode } from 'react';

/**
 * A dialog's form: the browser's own validation is off (the dialog checks and says why, in the user's
 * language), and submitting runs `onSubmit` unless the dialog is busy with an earlier submit.
 */
export function DialogForm({ busy = false, onSubmit, children }: { busy?: boolean; onSubmit(): unknown; children: ReactNode }) {
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
    </form>
  );
}
