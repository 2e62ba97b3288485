import { useTranslation } from 'react-i18next';
import { Link, useLocation } from 'react-router';
import { cn } from '../lib/cn';
import { isAdmin, useSession } from '../lib/session';
import { navItemsFor } from './nav-items';

const linkClass = (active: boolean) =>
  cn(
    'flex h-9 items-center gap-3 rounded-md px-3 text-sm font-medium transition-colors focus-visible:outline-2 focus-visible:outline-teal-600',
    active
      ? 'bg-teal-50 text-teal-800 dark:bg-teal-950 dark:text-teal-300'
      : 'text-slate-700 hover:bg-slate-100 dark:text-slate-300 dark:hover:bg-slate-800',
  );

/** The list of pages the signed-in user may open; admins see four more (docs/console.md §2.2). */
export function SidebarNav({ onNavigate }: { onNavigate?: () => void }) {
  const { t } = useTranslation();
  const { user } = useSession();
  const { pathname } = useLocation();
  return (
    <nav aria-label={t('nav.sections')}>
      <ul className="space-y-1">
        {navItemsFor(isAdmin(user)).map(({ to, label, icon: Icon }) => {
          // The dashboard lives at / as well as /dashboard.
          const active = pathname === to || pathname.startsWith(`${to}/`) || (to === '/dashboard' && pathname === '/');
          return (
            <li key={to}>
              <Link to={to} onClick={onNavigate} className={linkClass(active)} aria-current={active ? 'page' : undefined}>
                <Icon aria-hidden="true" className="size-4" />
                {t(label)}
              </Link>
            </li>
          );
        })}
      </ul>
    </nav>
  );
}
