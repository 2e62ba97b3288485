import { Wrench } from 'lucide-react';
import { lazy } from 'react';
import { useTranslation } from 'react-i18next';
import { LazyDialogButton } from '../components/lazy-dialog-button';

// Rarely opened: loaded on first use.
const SampleConfigDialog = lazy(() => import('./sample-config-dialog'));

/** Opens the layout's static sample 'Service Configuration' dialog (docs/console.md §2.2). */
export function SampleConfigButton() {
  const { t } = useTranslation();
  return (
    <LazyDialogButton dialog={SampleConfigDialog} variant="ghost" className="w-full justify-start px-3 text-slate-600 dark:text-slate-400">
      <Wrench aria-hidden="true" />
      {t('sampleConfig.open')}
    </LazyDialogButton>
  );
}
