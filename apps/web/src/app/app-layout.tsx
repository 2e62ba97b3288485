import { useTranslation } from 'react-i18next';
import { Outlet, useNavigation } from 'react-router';
import { useSession } from '../lib/session';
import { Sidebar } from './sidebar';
import { TopBar } from './top-bar';

/** A thin bar at the top while the next page's code loads, so a slow link never looks dead. */
function NavigationProgress() {
  const navigation = useNavigation();
  if (navigation.state === 'idle') return null;
  return <div aria-hidden="true" className="fixed inset-x-0 top-0 z-50 h-0.5 animate-pulse bg-teal-600" />;
}

/** The frame of every page: top bar, the sidebar when signed in, and the page (docs/console.md §2.2). */
export function AppLayout() {
  const { t } = useTranslation();
  const { token } = useSession();
  return (
    <div className="min-h-dvh">
      <a
        href="#main"
        className="sr-only focus:not-sr-only focus:fixed focus:top-2 focus:left-2 focus:z-50 focus:rounded-md focus:bg-white focus:px-3 focus:py-2 focus:shadow dark:focus:bg-slate-900"
      >
        {t('nav.skipToContent')}
      </a>
      <NavigationProgress />
      <TopBar />
      <div className="flex">
        {token && <Sidebar />}
        <main id="main" className="min-w-0 flex-1 px-4 py-6 sm:px-6 lg:px-8">
          <div className="mx-auto max-w-6xl">
            <Outlet />
          </div>
        </main>
      </div>
    </div>
  );
}
