import { Toaster as Sonner } from 'sonner';
import { TOAST_DURATION_MS } from '../../lib/notify';
import { useTheme } from '../../lib/theme';

/** Where toasts appear: one at a time, five seconds each (docs/console.md §9), in the console's theme. */
export function Toaster() {
  const { choice } = useTheme();
  return <Sonner theme={choice} visibleToasts={1} duration={TOAST_DURATION_MS} position="top-center" richColors closeButton />;
}
