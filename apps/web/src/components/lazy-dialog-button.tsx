import { type ComponentType, type LazyExoticComponent, type ReactNode, Suspense, useRef, useState } from 'react';
import { Button, type ButtonProps } from './ui/button';

/**
 * A dialog's own props when it is opened by a LazyDialogButton: it renders while open, calls onClose to close
 * and passes onCloseAutoFocus to its content, which puts the focus back on the button.
 */
export interface LazyDialogProps {
  onClose(): void;
  onCloseAutoFocus(event: Event): void;
}

/**
 * A button that opens a dialog whose code loads on first click, so rarely used dialogs stay out of the first
 * download. The dialog traps focus while open; on close the focus returns to this button.
 */
export function LazyDialogButton({
  dialog: Dialog,
  children,
  ...buttonProps
}: ButtonProps & { dialog: LazyExoticComponent<ComponentType<LazyDialogProps>>; children: ReactNode }) {
  const [open, setOpen] = useState(false);
  const button = useRef<HTMLButtonElement>(null);
  // The dialog has no radix Trigger (it is not loaded yet when the button renders), so say where focus goes.
  const returnFocus = (event: Event) => {
    event.preventDefault();
    button.current?.focus();
  };
  return (
    <>
      <Button ref={button} aria-haspopup="dialog" aria-expanded={open} {...buttonProps} onClick={() => setOpen(true)}>
        {children}
      </Button>
      {open && (
        <Suspense fallback={null}>
          <Dialog onClose={() => setOpen(false)} onCloseAutoFocus={returnFocus} />
        </Suspense>
      )}
    </>
  );
}
