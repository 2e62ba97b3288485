import { Menu } from 'lucide-react';
import { lazy } from 'react';
import { useTranslation } from 'react-i18next';
import { LazyDialogButton } from '../components/lazy-dialog-button';

const MobileNavSheet = lazy(() => import('./mobile-nav-sheet'));

/** Below `md` the sidebar collapses into this menu button. */
export function MobileNav() {
  const { t } = useTranslation();
  return (
    <LazyDialogButton dialog={MobileNavSheet} variant="ghost" size="icon" className="md:hidden" aria-label={t('nav.menu')}>
      <Menu aria-hidden="true" />
    </LazyDialogButton>
  );
}
