import { toast } from 'sonner';

/** How long a toast stays (docs/console.md §9). */
export const TOAST_DURATION_MS = 5_000;

/**
 * Toasts, one at a time (docs/console.md §9): a new one replaces whatever is showing, so a burst of failures
 * never stacks up and each message gets its full five seconds.
 */
export const notify = {
  success(title: string, description?: string): void {
    toast.dismiss();
    toast.success(title, { description });
  },
  error(title: string, description?: string): void {
    toast.dismiss();
    toast.error(title, { description });
  },
  /** Done, with a caveat the user should read (a service created that does not answer yet). */
  warning(title: string, description?: string): void {
    toast.dismiss();
    toast.warning(title, { description });
  },
};
