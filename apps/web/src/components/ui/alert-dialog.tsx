import { AlertDialog as AlertDialogPrimitive } from 'radix-ui';
import { type ReactNode, useRef } from 'react';
import { cn } from '../../lib/cn';
import { focusReturnHandlers } from '../../lib/focus-return';
import { buttonVariants } from './button';

interface ConfirmDialogProps {
  open: boolean;
  onOpenChange(open: boolean): void;
  title: string;
  description: ReactNode;
  confirmLabel: string;
  cancelLabel: string;
  onConfirm(): void;
  destructive?: boolean;
}

/**
 * Asks before an action that cannot be undone; Escape and Cancel leave everything as it was. Opened from
 * state rather than a radix Trigger, it gives the focus back to what opened it (lib/focus-return.ts).
 */
export function ConfirmDialog(props: ConfirmDialogProps) {
  const origins = useRef<HTMLElement[]>([]);
  return (
    <AlertDialogPrimitive.Root open={props.open} onOpenChange={props.onOpenChange}>
      <AlertDialogPrimitive.Portal>
        <AlertDialogPrimitive.Overlay className="fixed inset-0 z-40 bg-slate-950/50" />
        <AlertDialogPrimitive.Content
          {...focusReturnHandlers(origins, {})}
          className="fixed top-1/2 left-1/2 z-50 grid grid-cols-[minmax(0,1fr)] w-[calc(100vw-2rem)] max-w-md -translate-x-1/2 -translate-y-1/2 gap-4 rounded-lg border border-slate-200 bg-white p-6 shadow-lg dark:border-slate-800 dark:bg-slate-900"
        >
          <AlertDialogPrimitive.Title className="text-lg font-semibold">{props.title}</AlertDialogPrimitive.Title>
          <AlertDialogPrimitive.Description className="text-sm text-slate-600 dark:text-slate-400">
            {props.description}
          </AlertDialogPrimitive.Description>
          <div className="flex flex-col-reverse gap-2 sm:flex-row sm:justify-end">
            <AlertDialogPrimitive.Cancel className={buttonVariants({ variant: 'outline' })}>
              {props.cancelLabel}
            </AlertDialogPrimitive.Cancel>
            <AlertDialogPrimitive.Action
              className={cn(buttonVariants({ variant: props.destructive ? 'destructive' : 'default' }))}
              onClick={props.onConfirm}
            >
              {props.confirmLabel}
            </AlertDialogPrimitive.Action>
          </div>
        </AlertDialogPrimitive.Content>
      </AlertDialogPrimitive.Portal>
    </AlertDialogPrimitive.Root>
  );
}
