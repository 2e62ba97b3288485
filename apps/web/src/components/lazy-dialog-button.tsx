import { Component, type ComponentType, type LazyExoticComponent, type ReactNode, Suspense, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { isChunkLoadError, reloadOnceForNewBuild, serverAnswers } from '../lib/chunk-reload';
import { notify } from '../lib/notify';
import { Button, type ButtonProps } from './ui/button';

/**
 * A dialog whose code did not arrive must not take the console with it (the layout's error screen would replace
 * it): the dialog stays closed, and a server that does not answer is said in a toast (issue 29); a server that
 * answers has a new build, which one reload fetches, as for a page (docs/console.md §2.2).
 */
class DialogLoadBoundary extends Component<{ onFailed(): void; children: ReactNode }, { error: unknown }> {
  override state: { error: unknown } = { error: undefined };
  static getDerivedStateFromError(error: unknown) {
    return { error };
  }
  override componentDidCatch(error: unknown) {
    if (isChunkLoadError(error)) this.props.onFailed();
  }
  override render() {
    // Any other failure is the layout's to show, as before.
    if (this.state.error !== undefined && !isChunkLoadError(this.state.error)) throw this.state.error;
    return this.state.error === undefined ? this.props.children : null;
  }
}

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
  const { t } = useTranslation();
  const [open, setOpen] = useState(false);
  const button = useRef<HTMLButtonElement>(null);
  const failed = async () => {
    setOpen(false);
    if ((await serverAnswers()) && reloadOnceForNewBuild()) return;
    notify.error(t('routeError.offlineTitle'), t('routeError.offlineDescription'));
  };
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
        <DialogLoadBoundary onFailed={() => void failed()}>
          <Suspense fallback={null}>
            <Dialog onClose={() => setOpen(false)} onCloseAutoFocus={returnFocus} />
          </Suspense>
        </DialogLoadBoundary>
      )}
    </>
  );
}
