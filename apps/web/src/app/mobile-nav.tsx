import { Menu } from 'lucide-react';
import { lazy, useEffect } from 'react';
import { useTranslation } from 'react-i18next';
import { LazyDialogButton } from '../components/lazy-dialog-button';

const loadSheet = () => import('./mobile-nav-sheet');
const MobileNavSheet = lazy(loadSheet);

/**
 * Below `md` the sidebar collapses into this menu button. On such a screen the menu's code is fetched once the
 * page is idle: it is the only way to other pages, and must open while the server is down (issue 29).
 */
export function MobileNav() {
  const { t } = useTranslation();
  useEffect(() => {
    if (!window.matchMedia?.('(max-width: 767.98px)').matches) return;
    const preload = () => void loadSheet().catch(() => undefined);
    // Idle, or within 2 s on a page that is never idle.
    if (window.requestIdleCallback) window.requestIdleCallback(preload, { timeout: 2_000 });
    else window.setTimeout(preload, 1);
  }, []);
  return (
    <LazyDialogButton dialog={MobileNavSheet} variant="ghost" size="icon" className="md:hidden" aria-label={t('nav.menu')}>
      <Menu aria-hidden="true" />
    </LazyDialogButton>
  );
}
