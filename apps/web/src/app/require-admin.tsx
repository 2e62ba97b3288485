import { useTranslation } from 'react-i18next';
import { Outlet } from 'react-router';
import { ErrorAlert } from '../components/ui/alert';
import { isAdmin, useSession } from '../lib/session';

/**
 * The admin screens (Market, Users, Logs, Preferences). The server refuses their calls to non-admins anyway;
 * this says so once instead of letting the page fire a burst of permission-denied toasts.
 */
export function RequireAdmin() {
  const { t } = useTranslation();
  const { user } = useSession();
  if (isAdmin(user)) return <Outlet />;
  return (
    <ErrorAlert title={t('adminOnly.title')} className="max-w-xl">
      {t('adminOnly.description')}
    </ErrorAlert>
  );
}
