import { useTranslation } from 'react-i18next';
import { Toaster as Sonner } from 'sonner';
import { TOAST_DURATION_MS } from '../../lib/notify';
import { useTheme } from '../../lib/theme';

/**
 * Where toasts appear: one at a time, five seconds each (docs/console.md §9), in the console's theme. The region's
 * and the close button's names are the console's, in its language, not the library's English defaults (issue 29).
 */
export function Toaster() {
  const { choice } = useTheme();
  const { t } = useTranslation();
  return (
    <Sonner
      theme={choice}
      visibleToasts={1}
      duration={TOAST_DURATION_MS}
      position="top-center"
      richColors
      closeButton
      containerAriaLabel={t('toasts.region')}
      toastOptions={{ closeButtonAriaLabel: t('toasts.close') }}
    />
  );
}
