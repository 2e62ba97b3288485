import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import type { LazyDialogProps } from '../components/lazy-dialog-button';
import { Dialog, DialogDescription, DialogTitle, SheetContent } from '../components/ui/dialog';
import { SampleConfigButton } from './sample-config-button';
import { SidebarNav } from './sidebar-nav';

/** The sidebar's pages and the top bar's Docs link, in a panel from the left on narrow screens. */
export default function MobileNavSheet({ onClose, onCloseAutoFocus }: LazyDialogProps) {
  const { t } = useTranslation();
  return (
    <Dialog open onOpenChange={(open) => !open && onClose()}>
      <SheetContent onCloseAutoFocus={onCloseAutoFocus}>
        <DialogTitle className="text-lg font-semibold text-teal-700 dark:text-teal-400">{t('productName')}</DialogTitle>
        <DialogDescription className="sr-only">{t('nav.sections')}</DialogDescription>
        <SidebarNav onNavigate={onClose} />
        <div className="mt-auto space-y-1 border-t border-slate-200 pt-3 dark:border-slate-800">
          <Link to="/docs" onClick={onClose} className="block rounded-md px-3 py-2 text-sm hover:bg-slate-100 dark:hover:bg-slate-800">
            {t('nav.docs')}
          </Link>
          <SampleConfigButton />
        </div>
      </SheetContent>
    </Dialog>
  );
}
