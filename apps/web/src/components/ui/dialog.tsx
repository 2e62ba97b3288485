import { X } from 'lucide-react';
import { Dialog as DialogPrimitive } from 'radix-ui';
import { type ComponentProps, type HTMLAttributes, useRef } from 'react';
import { useTranslation } from 'react-i18next';
import { cn } from '../../lib/cn';
import { focusReturnHandlers } from '../../lib/focus-return';

export const Dialog = DialogPrimitive.Root;
export const DialogTrigger = DialogPrimitive.Trigger;
export const DialogClose = DialogPrimitive.Close;

const overlayClass = 'fixed inset-0 z-40 bg-slate-950/50 backdrop-blur-[1px]';

/**
 * A modal panel: focus moves in and stays inside while open (radix). On close it returns to what opened the
 * dialog, whether a radix Trigger or a button that set some state (lib/focus-return.ts); a dialog's own
 * onCloseAutoFocus that calls preventDefault() decides instead. `locked` (work in progress, docs/console.md §4) hides the close button, marks the panel busy and ignores
 * Escape and clicks outside, so only the dialog's own buttons can end it.
 */
export function DialogContent({
  className,
  children,
  hideClose = false,
  locked = false,
  onEscapeKeyDown,
  onInteractOutside,
  onOpenAutoFocus,
  onCloseAutoFocus,
  ...props
}: ComponentProps<typeof DialogPrimitive.Content> & { hideClose?: boolean; locked?: boolean }) {
  const { t } = useTranslation();
  const origins = useRef<HTMLElement[]>([]);
  return (
    <DialogPrimitive.Portal>
      <DialogPrimitive.Overlay className={overlayClass} />
      <DialogPrimitive.Content
        className={cn(
          // One column that may shrink below its content's width: a long URL or JSON line scrolls inside its own
          // box instead of widening the dialog past a phone's screen (issue 15, item 6).
          'fixed top-1/2 left-1/2 z-50 grid grid-cols-[minmax(0,1fr)] max-h-[calc(100dvh-2rem)] w-[calc(100vw-2rem)] max-w-md -translate-x-1/2 -translate-y-1/2 gap-4 overflow-y-auto',
          'rounded-lg border border-slate-200 bg-white p-6 shadow-lg dark:border-slate-800 dark:bg-slate-900',
          className,
        )}
        aria-busy={locked || undefined}
        {...props}
        {...focusReturnHandlers(origins, { onOpenAutoFocus, onCloseAutoFocus })}
        onEscapeKeyDown={(e) => {
          if (locked) e.preventDefault();
          onEscapeKeyDown?.(e);
        }}
        onInteractOutside={(e) => {
          if (locked) e.preventDefault();
          onInteractOutside?.(e);
        }}
      >
        {children}
        {!hideClose && !locked && (
          <DialogPrimitive.Close
            aria-label={t('actions.close')}
            className="absolute top-3 right-3 rounded-sm p-1 text-slate-500 dark:text-slate-400 hover:text-slate-900 focus-visible:outline-2 focus-visible:outline-teal-600 dark:hover:text-slate-100"
          >
            <X aria-hidden="true" className="size-4" />
          </DialogPrimitive.Close>
        )}
      </DialogPrimitive.Content>
    </DialogPrimitive.Portal>
  );
}

/** A panel sliding in from the left edge: the navigation menu on narrow screens. */
export function SheetContent({
  className,
  children,
  onOpenAutoFocus,
  onCloseAutoFocus,
  ...props
}: ComponentProps<typeof DialogPrimitive.Content>) {
  const { t } = useTranslation();
  const origins = useRef<HTMLElement[]>([]);
  return (
    <DialogPrimitive.Portal>
      <DialogPrimitive.Overlay className={overlayClass} />
      <DialogPrimitive.Content
        className={cn(
          'fixed inset-y-0 left-0 z-50 flex w-72 max-w-[85vw] flex-col gap-4 border-r border-slate-200 bg-white p-4 shadow-lg dark:border-slate-800 dark:bg-slate-900',
          className,
        )}
        {...props}
        {...focusReturnHandlers(origins, { onOpenAutoFocus, onCloseAutoFocus })}
      >
        {children}
        <DialogPrimitive.Close
          aria-label={t('actions.close')}
          className="absolute top-3 right-3 rounded-sm p-1 text-slate-500 dark:text-slate-400 hover:text-slate-900 focus-visible:outline-2 focus-visible:outline-teal-600 dark:hover:text-slate-100"
        >
          <X aria-hidden="true" className="size-4" />
        </DialogPrimitive.Close>
      </DialogPrimitive.Content>
    </DialogPrimitive.Portal>
  );
}

export function DialogHeader({ className, ...props }: HTMLAttributes<HTMLDivElement>) {
  return <div className={cn('flex flex-col gap-1.5 pr-6', className)} {...props} />;
}

export function DialogFooter({ className, ...props }: HTMLAttributes<HTMLDivElement>) {
  return <div className={cn('flex flex-col-reverse gap-2 sm:flex-row sm:justify-end', className)} {...props} />;
}

export function DialogTitle({ className, ...props }: ComponentProps<typeof DialogPrimitive.Title>) {
  return <DialogPrimitive.Title className={cn('text-lg font-semibold leading-tight', className)} {...props} />;
}

export function DialogDescription({ className, ...props }: ComponentProps<typeof DialogPrimitive.Description>) {
  return <DialogPrimitive.Description className={cn('text-sm text-slate-600 dark:text-slate-400', className)} {...props} />;
}
