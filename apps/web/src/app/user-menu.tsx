import { LogOut, UserRound } from 'lucide-react';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { Button } from '../components/ui/button';
import { useLogout } from '../features/auth';
import { displayNameOf, type SessionUser } from '../lib/session';

/** The signed-in user's name (display name, else username) and the logout button. */
export function UserMenu({ user }: { user: SessionUser }) {
  const { t } = useTranslation();
  const logout = useLogout();
  const name = displayNameOf(user);
  return (
    <div className="flex min-w-0 items-center gap-1">
      <Link
        to="/profile"
        title={t('user.signedInAs', { name })}
        className="hidden max-w-40 items-center gap-2 truncate rounded-md px-2 py-1.5 text-sm font-medium hover:bg-slate-100 sm:flex dark:hover:bg-slate-800"
        data-testid="current-user"
      >
        <UserRound aria-hidden="true" className="size-4 shrink-0" />
        <span className="truncate" data-i18n-data>
          {name}
        </span>
      </Link>
      <Button variant="ghost" size="icon" className="sm:w-auto sm:px-3" onClick={() => void logout()} aria-label={t('nav.logout')}>
        <LogOut aria-hidden="true" />
        <span className="hidden sm:inline">{t('nav.logout')}</span>
      </Button>
    </div>
  );
}
