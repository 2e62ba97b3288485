import { useTranslation } from 'react-i18next';
import { Link, NavLink } from 'react-router';
import { buttonVariants } from '../components/ui/button';
import { SignInButton } from '../features/auth';
import { cn } from '../lib/cn';
import { useSession } from '../lib/session';
import { LanguageSelect } from './language-select';
import { MobileNav } from './mobile-nav';
import { ThemeToggle } from './theme-toggle';
import { UserMenu } from './user-menu';

const linkClass = ({ isActive }: { isActive: boolean }) =>
  cn(buttonVariants({ variant: 'ghost' }), isActive && 'bg-slate-100 dark:bg-slate-800');

/** Title, Dashboard and Docs links, language, theme, and the user with logout or a login button (docs/console.md §2.2). */
export function TopBar() {
  const { t } = useTranslation();
  const { token, user } = useSession();
  return (
    <header className="sticky top-0 z-30 border-b border-slate-200 bg-white/95 backdrop-blur dark:border-slate-800 dark:bg-slate-900/95">
      <div className="flex h-14 items-center gap-1 px-2 sm:gap-2 sm:px-4">
        {token && <MobileNav />}
        <Link to="/" className="mr-2 rounded-md px-1 text-lg font-semibold text-teal-700 sm:mr-4 dark:text-teal-400">
          {t('productName')}
        </Link>
        <nav aria-label={t('nav.label')} className="hidden items-center gap-1 md:flex">
          <NavLink to="/dashboard" className={linkClass}>
            {t('nav.dashboard')}
          </NavLink>
          <NavLink to="/docs" className={linkClass}>
            {t('nav.docs')}
          </NavLink>
        </nav>
        <div className="ml-auto flex min-w-0 items-center gap-1 sm:gap-2">
          <LanguageSelect />
          <ThemeToggle />
          {token && user ? <UserMenu user={user} /> : <SignInButton />}
        </div>
      </div>
    </header>
  );
}
